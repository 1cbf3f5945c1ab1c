#include "eager/out_meta_memo.h"

#include <ATen/core/Tensor.h>

#include <atomic>
#include <cstring>
#include <unordered_map>

namespace torch_tpu::eager {
namespace {

// Memo entries per thread before the table starts over: a program touches a
// few dozen out= signatures; this bounds one that makes new ones forever.
constexpr size_t kMaxEntries = 4096;

std::atomic<int64_t> hits{0};

std::unordered_map<std::string, OutSizes>& memo() {
  thread_local std::unordered_map<std::string, OutSizes> m;
  return m;
}

void put(std::string& key, int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof(v)); }

void put_tensor(std::string& key, const at::Tensor& t) {
  if (!t.defined()) return put(key, -1);
  put(key, static_cast<int64_t>(t.device().type()));
  put(key, static_cast<int64_t>(t.scalar_type()));
  put(key, t.unsafeGetTensorImpl()->is_wrapped_number() ? 1 : 0);
  put(key, t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) {
    put(key, t.size(d));
    put(key, t.stride(d));
  }
}

// A number's kind and exact bits (a meta kernel may check its value).
void put_scalar(std::string& key, const c10::Scalar& s) {
  put(key, static_cast<int64_t>(s.type()));
  if (s.isComplex()) {
    c10::complex<double> z = s.toComplexDouble();
    double parts[2] = {z.real(), z.imag()};
    key.append(reinterpret_cast<const char*>(parts), sizeof(parts));
  } else if (s.isFloatingPoint()) {
    double d = s.toDouble();
    key.append(reinterpret_cast<const char*>(&d), sizeof(d));
  } else if (s.isBoolean()) {
    put(key, s.toBool());
  } else if (s.isUnsigned()) {
    put(key, static_cast<int64_t>(s.toUInt64()));
  } else {
    put(key, s.toLong());
  }
}

bool put_value(std::string& key, const c10::IValue& v) {
  if (v.isNone()) return put(key, 0), true;
  if (v.isTensor()) return put(key, 1), put_tensor(key, v.toTensor()), true;
  if (v.isTensorList()) {
    put(key, 2);
    for (const at::Tensor& t : v.toTensorList().vec()) put_tensor(key, t);
    return put(key, static_cast<int64_t>(v.toTensorList().size())), true;
  }
  if (v.isIntList()) {
    put(key, 3);
    for (int64_t x : v.toIntList()) put(key, x);
    return put(key, static_cast<int64_t>(v.toIntList().size())), true;
  }
  if (v.isDoubleList()) {
    put(key, 4);
    for (double x : v.toDoubleList()) key.append(reinterpret_cast<const char*>(&x), sizeof(x));
    return put(key, static_cast<int64_t>(v.toDoubleList().size())), true;
  }
  if (v.isBoolList()) {
    put(key, 5);
    for (bool x : v.toBoolList()) put(key, x);
    return put(key, static_cast<int64_t>(v.toBoolList().size())), true;
  }
  if (v.isList()) {  // Tensor?[] (indices)
    put(key, 6);
    for (const c10::IValue& e : v.toListRef()) {
      if (!e.isNone() && !e.isTensor()) return false;
      put_tensor(key, e.isNone() ? at::Tensor() : e.toTensor());
    }
    return put(key, static_cast<int64_t>(v.toListRef().size())), true;
  }
  if (v.isInt()) return put(key, 7), put(key, v.toInt()), true;
  if (v.isBool()) return put(key, 8), put(key, v.toBool()), true;
  if (v.isDouble() || v.isComplexDouble() || v.isScalar()) return put(key, 9), put_scalar(key, v.toScalar()), true;
  if (v.isString()) {
    const std::string& s = v.toStringRef();
    put(key, 10);
    put(key, static_cast<int64_t>(s.size()));
    return key.append(s), true;
  }
  if (v.isDevice()) return put(key, 11), put(key, static_cast<int64_t>(v.toDevice().type()) * 1000 + v.toDevice().index()), true;
  return false;  // generators and anything else: not covered
}

}  // namespace

bool out_meta_key(const std::string& op, const std::string& static_key, const torch::jit::Stack& stack,
                  size_t first, size_t nargs, std::string& key) {
  key.clear();
  key.append(op);
  key.push_back('\0');
  key.append(static_key);
  key.push_back('\0');
  for (size_t i = 0; i < nargs; ++i)
    if (!put_value(key, stack[first + i])) return false;
  return true;
}

const OutSizes* find_out_meta(const std::string& key) {
  auto& m = memo();
  auto it = m.find(key);
  if (it == m.end()) return nullptr;
  hits.fetch_add(1, std::memory_order_relaxed);
  return &it->second;
}

int64_t out_meta_memo_hits() { return hits.load(std::memory_order_relaxed); }

void remember_out_meta(const std::string& key, OutSizes sizes) {
  auto& m = memo();
  if (m.size() >= kMaxEntries) m.clear();
  m.emplace(key, std::move(sizes));
}

}  // namespace torch_tpu::eager
