// Turns a boxed call's IValue stack into an Invocation (what the executor
// runs) and the torch-free arguments a lowering rule reads (ops::Arg).
#pragma once
#include <ATen/core/stack.h>

#include <vector>

#include "eager/executor.h"
#include "eager/per_thread_pool.h"
#include "ops/op_call.h"

namespace torch_tpu::eager {

// Reused through PooledCall: clear_call (call_parser.cpp) resets every field
// of it and of its Invocation, so a field added here must be reset there.
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
  std::vector<ops::Arg> spare_args;   // a pooled call's old Args, reused for their capacity
};

// A ParsedCall borrowed for one boxed call (per_thread_pool.h); returning it
// drops the tensors and closures it holds, keeping its vectors' capacity.
class PooledCall : public PerThreadLease<ParsedCall> {
 public:
  ~PooledCall();
};

// Fills `p` (empty: just borrowed) from the call's arguments; `op` is the
// schema's name as op_name() gives it, which the caller looks up once per op.
void parse_call(const c10::FunctionSchema& schema, const std::string& op, const torch::jit::Stack& stack,
                size_t first, ParsedCall& p);

}  // namespace torch_tpu::eager
