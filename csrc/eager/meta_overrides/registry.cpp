#include "eager/meta_overrides/registry.h"
#include "eager/native_meta.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Exception.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/result_type.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace torch_tpu::eager {
namespace {

std::unordered_map<std::string, MetaOverride>& overrides() {
  static std::unordered_map<std::string, MetaOverride> m;
  return m;
}

std::unordered_set<std::string>& value_readers() {
  static std::unordered_set<std::string> s;
  return s;
}

std::string qualified(const c10::OperatorName& op) {
  return op.overload_name.empty() ? op.name : op.name + "." + op.overload_name;
}

at::Tensor to_meta(const at::Tensor& t) {
  if (!t.defined() || t.device().type() == c10::kMeta) return t;
  if (t.device().type() == c10::DeviceType::PrivateUse1)
    return at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta));
  if (t.dim() == 0 && t.device().is_cpu() && !t.unsafeGetTensorImpl()->is_wrapped_number())
    return at::empty_strided({}, {}, t.options().device(c10::kMeta));
  return t;
}

}  // namespace

MetaOverrideRegistrar::MetaOverrideRegistrar(std::initializer_list<std::pair<const char*, MetaOverride>> list,
                                             bool reads_values) {
  // Two overrides of one op would leave the later-initialized file's in force, silently.
  for (const auto& [name, fn] : list) {
    TORCH_INTERNAL_ASSERT(overrides().emplace(name, fn).second, "torch_tpu: two meta overrides for ", name);
    if (reads_values) value_readers().insert(name);
  }
}

const MetaOverride* find_meta_override(const c10::OperatorName& op) {
  auto& m = overrides();
  auto it = m.find(qualified(op));
  return it == m.end() ? nullptr : &it->second;
}

bool meta_override_reads_values(const c10::OperatorName& op) { return value_readers().count(qualified(op)) > 0; }

std::vector<c10::IValue> default_meta(const char* name, const char* overload, const torch::jit::Stack& stack,
                                      size_t first) {
  auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  size_t nargs = handle.schema().arguments().size();
  torch::jit::Stack meta;
  for (size_t i = 0; i < nargs; ++i) {
    const c10::IValue& v = stack[first + i];
    if (v.isTensorList()) {
      std::vector<at::Tensor> ts;
      for (const at::Tensor& t : v.toTensorList().vec()) ts.push_back(to_meta(t));
      meta.emplace_back(ts);
      continue;
    }
    meta.push_back(v.isTensor() ? c10::IValue(to_meta(v.toTensor())) : v);
  }
  call_meta_kernel(handle, meta);
  return meta;
}

void check_same_dtype(const torch::jit::Stack& stack, size_t first, size_t ref, const std::vector<size_t>& args,
                      DtypeMessage style) {
  c10::ScalarType expected = stack[first + ref].toTensor().scalar_type();
  for (size_t i : args) {
    const at::Tensor* t = tensor_arg(stack, first + i);
    if (t == nullptr || t->scalar_type() == expected) continue;
    if (style == DtypeMessage::kTensorIterator)
      TORCH_CHECK(false, "Found dtype ", c10::toString(t->scalar_type()), " but expected ", c10::toString(expected));
    TORCH_CHECK(false, "expected scalar type ", c10::toString(expected), " but found ", c10::toString(t->scalar_type()));
  }
}

const at::Tensor* tensor_arg(const torch::jit::Stack& stack, size_t i) {
  const c10::IValue& v = stack[i];
  return v.isTensor() && v.toTensor().defined() ? &v.toTensor() : nullptr;
}

c10::ScalarType binary_result_type(const torch::jit::Stack& stack, size_t first) {
  const c10::IValue& a = stack[first];
  const c10::IValue& b = stack[first + 1];
  if (a.isTensor() && b.isTensor()) return at::result_type(a.toTensor(), b.toTensor());
  if (a.isTensor()) return at::result_type(a.toTensor(), b.toScalar());
  return at::result_type(a.toScalar(), b.toTensor());
}

void retype_result(std::vector<c10::IValue>& r, size_t i, c10::ScalarType dt) {
  const at::Tensor& t = r.at(i).toTensor();
  if (t.scalar_type() != dt) r[i] = at::empty(t.sizes(), t.options().dtype(dt));
}

MetaOverride retyped_as_arg(size_t arg, MetaOverride meta) {
  return [arg, meta = std::move(meta)](const torch::jit::Stack& stack, size_t first) {
    std::vector<c10::IValue> r = meta(stack, first);
    c10::ScalarType want = stack[first + arg].toTensor().scalar_type();
    if (c10::canCast(r.at(0).toTensor().scalar_type(), want)) retype_result(r, 0, want);
    return r;
  };
}

}  // namespace torch_tpu::eager
