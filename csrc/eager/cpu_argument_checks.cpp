// Which ops' CPU kernels check arguments that their meta kernels do not, and
// the asking. Found by calling each OpInfo sample with out-of-domain numbers
// after a valid call (docs/reliability.md, "A fifth pass"). A stand-in has
// the tensor's rank and each size capped at 1: empty stays empty (the CPU
// checks no dim of an empty cummin's, nor uniform_'s range on an empty
// complex tensor) and anything else is one element. Stand-ins draw from a
// private generator, so asking leaves the CPU's default generator alone.
#include "eager/cpu_argument_checks.h"

#include "eager/argument_kinds.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace torch_tpu::eager {
namespace {

const std::set<std::string>& checked_at_build() {
  // float and int arguments are program-key fields (call_parser.cpp)
  static const std::set<std::string> ops = {"uniform_", "normal_", "log_normal_", "geometric_", "exponential_",
                                            "cauchy_", "bernoulli_.float", "random_", "random_.from", "random_.to",
                                            "cummax", "cummin"};
  return ops;
}

// a Scalar argument is a runtime operand: a cached program never sees it.
// Op -> the bool argument its check needs true ("": always asked): the
// backward of an in-place leaky_relu/elu refuses a negative slope, and only
// that form (self_is_result / is_result) pays for asking.
const std::map<std::string, std::string>& checked_every_call() {
  static const std::map<std::string, std::string> ops = {
      {"softshrink", ""},
      {"softshrink.out", ""},
      {"renorm", ""},
      {"renorm.out", ""},
      {"renorm_", ""},
      {"leaky_relu_backward", "self_is_result"},
      {"leaky_relu_backward.grad_input", "self_is_result"},
      {"elu_backward", "is_result"},
      {"elu_backward.grad_input", "is_result"},
  };
  return ops;
}

at::Tensor cpu_stand_in(const at::Tensor& t) {
  std::vector<int64_t> sizes;
  for (int64_t n : t.sizes()) sizes.push_back(std::min<int64_t>(n, 1));
  return at::zeros(sizes, at::TensorOptions().dtype(t.scalar_type()));
}

}  // namespace

CpuArgumentChecks cpu_argument_checks_of(const c10::FunctionSchema& schema) {
  CpuArgumentChecks checks;
  std::string n = schema.name();
  if (n.rfind("aten::", 0) != 0) return checks;
  n = n.substr(6);
  std::string full = schema.overload_name().empty() ? n : n + "." + schema.overload_name();
  auto every = checked_every_call().find(full);
  if (every != checked_every_call().end()) {
    checks.when = CpuArgumentCheck::kEveryCall;
    if (!every->second.empty()) {
      auto i = schema.argumentIndexWithName(every->second);
      TORCH_CHECK(i.has_value(), "torch_tpu: ", full, " has no argument ", every->second);
      checks.only_if = static_cast<int>(*i);
    }
  } else if (checked_at_build().count(full) || checked_at_build().count(n)) {
    checks.when = CpuArgumentCheck::kAtBuild;
  }
  return checks;
}

void check_arguments_like_cpu(const c10::OperatorHandle& handle, const torch::jit::Stack& stack, size_t first,
                              size_t nargs) {
  torch::jit::Stack cpu;
  const auto& formals = handle.schema().arguments();
  for (size_t i = 0; i < nargs; ++i) {
    const c10::IValue& v = stack[first + i];
    // None too: it would draw from (and advance) the CPU's default generator
    if (formal_kind(formals[i]) == c10::TypeKind::GeneratorType) cpu.emplace_back(at::detail::createCPUGenerator(0));
    else if (v.isTensor() && v.toTensor().defined()) cpu.emplace_back(cpu_stand_in(v.toTensor()));
    else if (is_tensors_list(v)) return;
    else cpu.push_back(v);
  }
  try {
    handle.callBoxed(cpu);
  } catch (const c10::NotImplementedError&) {
    // the CPU has no kernel for this dtype; tpu's rule computes it
  }
}

}  // namespace torch_tpu::eager
