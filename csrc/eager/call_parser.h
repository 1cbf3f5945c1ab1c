// Turns a boxed call's IValue stack into an Invocation (what the executor
// runs) and the torch-free arguments a lowering rule reads (ops::Arg).
#pragma once
#include <ATen/core/stack.h>

#include <vector>

#include "eager/executor.h"
#include "ops/op_call.h"

namespace torch_tpu::eager {

struct ParsedCall {
  Invocation inv;
  std::vector<ops::Arg> args;         // schema order
  // Rule operand k is inputs[input_of_operand[k]] or, when that is -1,
  // runtime scalar scalar_of_operand[k] (generator operands included).
  std::vector<int> input_of_operand;
  std::vector<int> scalar_of_operand;
  std::vector<bool> operand_is_number;
  std::vector<size_t> write_args;     // schema indices of written tensors, in order
  int device_index = -1;
};

ParsedCall parse_call(const c10::FunctionSchema& schema, const torch::jit::Stack& stack, size_t first);

}  // namespace torch_tpu::eager
