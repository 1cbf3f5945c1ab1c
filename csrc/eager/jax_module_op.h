// Runs a function traced elsewhere (a JAX/Pallas kernel exported as
// StableHLO) on tpu tensors: the function is inlined into the program the
// executor builds for the call, so it shares everything an op has (view
// inputs read in place, the executable cache keyed by the module's
// fingerprint and the inputs' geometry, asynchronous execution, no host
// round trip).
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace torch_tpu::eager {

struct ModuleCall {
  std::string name;         // the op's name, in errors and metrics
  std::string fingerprint;  // identifies the module text (and so the program)
  std::string symbol;       // the entry function's symbol in `functions`
  std::string functions;    // MLIR text of the entry function and those it calls
  std::vector<c10::ScalarType> result_dtypes;
  std::vector<std::vector<int64_t>> result_sizes;
  // Donation: (input i, result j) writes result j into input i in place; the
  // other results come back as new tensors, in order.
  std::vector<std::pair<int, int>> aliases;
};

std::vector<at::Tensor> run_module_call(const ModuleCall& call, const std::vector<at::Tensor>& inputs);

}  // namespace torch_tpu::eager
