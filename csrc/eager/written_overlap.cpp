#include "eager/written_overlap.h"

#include <ATen/MemoryOverlap.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace torch_tpu::eager {
namespace {

// The out= ops whose CPU kernels refuse an out that is one of their inputs;
// the others take it as an in-place call.
bool out_must_be_apart(const c10::FunctionSchema& schema) {
  static const std::unordered_set<std::string> ops = {"aten::take", "aten::index_select", "aten::gather",
                                                      "aten::masked_select"};
  return schema.overload_name() == "out" && ops.count(schema.name()) > 0;
}

// Ops whose CPU kernels (structured meta functions) assert_no_overlap the
// written tensor with these arguments, by name.
const std::unordered_map<std::string, std::unordered_set<std::string>>& apart_arguments() {
  static const std::unordered_map<std::string, std::unordered_set<std::string>> m = {
      {"aten::index_add", {"index", "source"}},    {"aten::index_copy", {"index", "source"}},
      {"aten::index_reduce", {"index", "source"}}, {"aten::scatter", {"index", "src"}},
      {"aten::scatter_add", {"index", "src"}},     {"aten::scatter_reduce", {"index", "src"}},
      {"aten::put", {"index", "source"}},          {"aten::index_put", {"indices"}},
      {"aten::_index_put_impl", {"indices"}},      {"aten::linalg_cross", {"self", "other"}},
  };
  return m;
}

void check_apart(const at::Tensor& target, const c10::IValue& v) {
  if (v.isTensor()) {
    if (v.toTensor().defined()) at::assert_no_overlap(target, v.toTensor());
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList().vec()) at::assert_no_overlap(target, t);
  } else if (v.isList()) {  // index_put's indices: Tensor?[]
    for (const c10::IValue& e : v.toListRef())
      if (e.isTensor() && e.toTensor().defined()) at::assert_no_overlap(target, e.toTensor());
  }
}

}  // namespace

WrittenOverlapRule written_overlap_rule(const c10::FunctionSchema& schema) {
  WrittenOverlapRule r;
  r.out_apart_from_inputs = out_must_be_apart(schema);
  std::string name = schema.name();
  if (!name.empty() && name.back() == '_') name.pop_back();  // index_add_ as index_add
  auto it = apart_arguments().find(name);
  if (it != apart_arguments().end()) {
    const auto& args = schema.arguments();
    for (size_t i = 0; i < args.size(); ++i)
      if (it->second.count(args[i].name())) r.apart_args.push_back(i);
  }
  return r;
}

void check_written_overlap(const WrittenOverlapRule& rule, const std::vector<at::Tensor>& targets,
                           const std::vector<at::Tensor>& inputs, const torch::jit::Stack& stack, size_t first) {
  for (const at::Tensor& target : targets) {
    at::assert_no_internal_overlap(target);
    for (size_t i : rule.apart_args) check_apart(target, stack[first + i]);
    for (const at::Tensor& in : inputs) {
      if (rule.out_apart_from_inputs) at::assert_no_overlap(target, in);
      else if (!in.is_same(target)) at::assert_no_partial_overlap(target, in);
    }
  }
}

}  // namespace torch_tpu::eager
