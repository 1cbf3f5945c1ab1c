// Turns a boxed call's IValue stack into an Invocation (what the executor
// runs) and the torch-free arguments a lowering rule reads (ops::Arg).
#pragma once
#include <ATen/core/stack.h>

#include <vector>

#include "eager/executor.h"
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

// A ParsedCall borrowed from this thread's pool for one boxed call: its
// vectors keep their capacity from call to call, so a repeated tiny op parses
// without allocating. A nested call (an index tensor moved to tpu while its
// op is parsed) borrows the next one. Returning it drops the tensors and
// closures it holds.
class PooledCall {
 public:
  PooledCall();
  ~PooledCall();
  PooledCall(const PooledCall&) = delete;
  PooledCall& operator=(const PooledCall&) = delete;
  ParsedCall& operator*() { return *call_; }
  ParsedCall* operator->() { return call_; }

 private:
  ParsedCall* call_;
};

// Fills `p` (empty: just borrowed) from the call's arguments; `op` is the
// schema's name as op_name() gives it, which the caller looks up once per op.
void parse_call(const c10::FunctionSchema& schema, const std::string& op, const torch::jit::Stack& stack,
                size_t first, ParsedCall& p);

}  // namespace torch_tpu::eager
