// _unique2, _unique and unique_consecutive over the flattened input. The
// number of distinct values depends on values, so (like nonzero.cpp) a first
// program counts them and the count is read to the host; a second program,
// compiled per count, builds values / inverse / counts. Both run the same
// analysis: sort stably (unique) or keep the order (consecutive), mark where a
// run of equal values starts (NaNs never compare equal, so each NaN is its
// own value and, as on the CPU, they sort last), and number the runs with a
// prefix sum. unique_consecutive along a dim of a >1-D input runs on the CPU.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "eager/boxed_kernel.h"
#include "eager/executor.h"

namespace torch_tpu::eager {
namespace {

using hlo::DType;
using hlo::TensorType;
using hlo::Value;
using Values = std::vector<Value>;

// Inclusive prefix sum along the 1-D int64 `x`: log2(n) shifted adds.
Value prefix_sum(hlo::Builder& b, Value x) {
  int64_t n = x.type.dims[0];
  Value zero = b.constant_int(DType::I64, 0);
  for (int64_t s = 1; s < n; s *= 2) x = b.add(x, b.pad(b.slice(x, {0}, {n - s}, {1}), zero, {s}, {0}, {0}));
  return x;
}

struct Runs {
  Value values;  // the input in run order (sorted for unique)
  Value perm;    // input position of each element of `values`
  Value first;   // i1: the element starts a run
  Value id;      // int64: the run number of each element
};

Runs analyze(hlo::Builder& b, const Value& input, bool sort) {
  int64_t n = input.type.numel();
  Value x = b.reshape(input, {n});
  TensorType pos_t(DType::I64, {n});
  Runs r{x, b.iota(pos_t, 0), {}, {}};
  if (sort) {
    DType dt = x.type.dtype;
    TensorType s(dt, {}), si(DType::I64, {});
    bool fl = hlo::is_float(dt);
    auto sorted = b.emit("sort", {x, r.perm}, "dimension = 0 : i64, is_stable = true", {x.type, pos_t},
                         {{{s, s, si, si}, [fl](hlo::Builder& q, const Values& a) {
                             Value lt = q.compare(a[0], a[1], "LT");
                             if (!fl) return Values{lt};
                             // NaN after every number: a < b, or a is a number and b is NaN.
                             Value b_nan = q.compare(a[1], a[1], "NE"), a_num = q.compare(a[0], a[0], "EQ");
                             return Values{q.binary("or", lt, q.binary("and", a_num, b_nan))};
                           }}});
    r.values = sorted[0];
    r.perm = sorted[1];
  }
  Value differs = b.compare(b.slice(r.values, {1}, {n}, {1}), b.slice(r.values, {0}, {n - 1}, {1}), "NE");
  r.first = b.concatenate({b.reshape(b.constant_bool(true), {1}), differs}, 0);
  Value ones = b.convert(r.first, DType::I64);
  r.id = b.subtract(prefix_sum(b, ones), b.splat_int(pos_t, 1));
  return r;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_flat(const at::Tensor& self, bool sort, bool want_inverse,
                                                           bool want_counts, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_complex(), "\"unique\" not implemented for '", self.scalar_type(), "'");  // the CPU's
  int device = self.device().index();
  int64_t n = self.numel();
  // inverse: the input's shape, row-major (empty [0] when not asked for)
  std::vector<int64_t> in_sizes = want_inverse ? self.sizes().vec() : std::vector<int64_t>{0};
  std::vector<int64_t> in_strides(in_sizes.size(), 1);
  for (int64_t d = static_cast<int64_t>(in_sizes.size()) - 2; d >= 0; --d)
    in_strides[d] = in_strides[d + 1] * std::max<int64_t>(in_sizes[d + 1], 1);
  int64_t u = 0;
  if (n > 0) {
    Invocation count;
    count.op = op;
    count.static_key = sort ? "count_sorted" : "count";
    count.inputs = {self};
    count.device_index = device;
    count.infer_fresh = [] { return std::vector<FreshOutput>{FreshOutput{c10::kLong, {}, {}}}; };
    count.lower = [sort, n](hlo::Builder& b, const Values& t, const Values&) {
      Runs r = analyze(b, t[0], sort);
      return Values{b.add(b.reshape(b.slice(r.id, {n - 1}, {n}, {1}), {}), b.constant_int(DType::I64, 1))};
    };
    u = execute(count).at(0).item<int64_t>();
  }
  Invocation build;
  build.op = op;
  build.static_key = std::string(sort ? "sorted" : "consecutive") + (want_inverse ? "_inv" : "") +
                     (want_counts ? "_cnt" : "") + std::to_string(u);
  build.inputs = {self};
  build.device_index = device;
  c10::ScalarType dtype = self.scalar_type();
  build.infer_fresh = [=] {
    return std::vector<FreshOutput>{FreshOutput{dtype, {u}, {1}}, FreshOutput{c10::kLong, in_sizes, in_strides},
                                    FreshOutput{c10::kLong, {want_counts ? u : 0}, {1}}};
  };
  build.lower = [=](hlo::Builder& b, const Values& t, const Values&) {
    TensorType vals_t(t[0].type.dtype, {u}), inv_t(DType::I64, in_sizes), cnt_t(DType::I64, {want_counts ? u : 0});
    if (n == 0) return Values{b.splat_int(vals_t, 0), b.splat_int(inv_t, 0), b.splat_int(cnt_t, 0)};
    Runs r = analyze(b, t[0], sort);
    TensorType pos_t(DType::I64, {n});
    // Each run's first element gives its value; the others target u, which scatter skips.
    Value at = b.select(r.first, r.id, b.splat_int(pos_t, u));
    Values out{b.scatter_elements_1d(b.splat_int(vals_t, 0), at, r.values)};
    out.push_back(want_inverse ? b.reshape(b.scatter_elements_1d(b.splat_int(pos_t, 0), r.perm, r.id), in_sizes)
                               : b.splat_int(inv_t, 0));
    out.push_back(want_counts ? b.scatter_elements_1d(b.splat_int(cnt_t, 0), r.id, b.splat_int(pos_t, 1), "add")
                              : b.splat_int(cnt_t, 0));
    return out;
  };
  auto res = execute(build);
  return {res.at(0), res.at(1), res.at(2)};
}

// The CPU's unique is always sorted, whatever `sorted` says.
std::tuple<at::Tensor, at::Tensor, at::Tensor> tpu_unique2(const at::Tensor& self, bool /*sorted*/,
                                                           bool return_inverse, bool return_counts) {
  return unique_flat(self, true, return_inverse, return_counts, "_unique2");
}

std::tuple<at::Tensor, at::Tensor> tpu_unique(const at::Tensor& self, bool /*sorted*/, bool return_inverse) {
  auto [v, inv, cnt] = unique_flat(self, true, return_inverse, false, "_unique");
  return {v, inv};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> tpu_unique_consecutive(const at::Tensor& self, bool return_inverse,
                                                                      bool return_counts, std::optional<int64_t> dim) {
  if (!dim.has_value() || self.dim() == 1)  // a 1-D input along its one dim is the flat case, as on the CPU
    return unique_flat(self, false, return_inverse, return_counts, "unique_consecutive");
  // Along a dim of a >1-D input: the CPU fallback (counted and warned like any other).
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::unique_consecutive", "");
  torch::jit::Stack stack{self, return_inverse, return_counts, dim};
  run_cpu_fallback(op, &stack);
  return {stack[0].toTensor(), stack[1].toTensor(), stack[2].toTensor()};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_unique2", tpu_unique2);
  m.impl("_unique", tpu_unique);
  m.impl("unique_consecutive", tpu_unique_consecutive);
}

}  // namespace
}  // namespace torch_tpu::eager
