// repeat_interleave.Tensor(repeats, *, output_size): [0]*r0 + [1]*r1 + ...,
// in repeats' dtype. The length depends on values, so (like nonzero.cpp) the
// sum and minimum of repeats are read to the host first (the CPU's checks
// need them too); a second program, compiled per length, builds the result:
// out[j] = #{i : r0 + ... + ri <= j}. Both steps are O(n^2) / O(length * n)
// compares, fine for routing-sized repeats (tens to thousands of entries).
#include <torch/library.h>

#include <string>

#include "eager/executor.h"

namespace torch_tpu::eager {
namespace {

// Inclusive prefix sums of the 1-D integer value `r` (length n), as int64.
hlo::Value prefix_sums(hlo::Builder& b, const hlo::Value& r, int64_t n) {
  hlo::TensorType sq(hlo::DType::I64, {n, n});
  hlo::Value rr = b.broadcast_in_dim(b.convert(r, hlo::DType::I64), {n, n}, {1});  // [i, k] = r[k]
  hlo::Value keep = b.compare(b.iota(sq, 1), b.iota(sq, 0), "LE");                  // k <= i
  hlo::Value masked = b.select(keep, rr, b.splat_int(sq, 0));
  return b.reduce({masked}, {b.constant_int(hlo::DType::I64, 0)}, {1},
                  [](hlo::Builder& q, const std::vector<hlo::Value>& a) {
                    return std::vector<hlo::Value>{q.add(a[0], a[1])};
                  })[0];
}

at::Tensor tpu_repeat_interleave(const at::Tensor& repeats, std::optional<c10::SymInt> output_size) {
  // The CPU dispatches on index dtypes first (NotImplementedError), then checks the rank.
  TORCH_CHECK_NOT_IMPLEMENTED(repeats.scalar_type() == at::kLong || repeats.scalar_type() == at::kInt,
                              "\"repeat_interleave_cpu\" not implemented for '", repeats.scalar_type(), "'");
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  int device = repeats.device().index();
  int64_t n = repeats.numel();
  int64_t total = 0;
  if (n > 0) {
    // 1) [sum, min] of repeats
    Invocation stats;
    stats.op = "repeat_interleave.Tensor";
    stats.static_key = "stats";
    stats.inputs = {repeats};
    stats.device_index = device;
    stats.infer_fresh = [] { return std::vector<FreshOutput>{FreshOutput{c10::kLong, {2}, {1}}}; };
    stats.lower = [](hlo::Builder& b, const std::vector<hlo::Value>& t, const std::vector<hlo::Value>&) {
      hlo::Value r = b.convert(t[0], hlo::DType::I64);
      auto fold = [&](const char* op, hlo::Value init) {
        return b.reshape(b.reduce({r}, {init}, {0}, [op](hlo::Builder& q, const std::vector<hlo::Value>& a) {
          return std::vector<hlo::Value>{q.binary(op, a[0], a[1])};
        })[0], {1});
      };
      hlo::Value sum = fold("add", b.constant_int(hlo::DType::I64, 0));
      hlo::Value min = fold("minimum", b.highest(hlo::DType::I64));
      return std::vector<hlo::Value>{b.concatenate({sum, min}, 0)};
    };
    at::Tensor s = execute(stats).at(0).cpu();
    TORCH_CHECK(s[1].item<int64_t>() >= 0, "repeats can not be negative");
    total = s[0].item<int64_t>();
  }
  if (output_size.has_value())
    TORCH_CHECK(output_size->expect_int() == total, "allocated size does not match required size");
  // 2) the indices, compiled per (n, total)
  Invocation fill;
  fill.op = "repeat_interleave.Tensor";
  fill.static_key = "fill" + std::to_string(total);
  fill.inputs = {repeats};
  fill.device_index = device;
  c10::ScalarType dtype = repeats.scalar_type();
  fill.infer_fresh = [dtype, total] { return std::vector<FreshOutput>{FreshOutput{dtype, {total}, {1}}}; };
  fill.lower = [n, total](hlo::Builder& b, const std::vector<hlo::Value>& t, const std::vector<hlo::Value>&) {
    hlo::DType out = t[0].type.dtype;
    if (n == 0 || total == 0) return std::vector<hlo::Value>{b.splat_int(hlo::TensorType(out, {total}), 0)};
    hlo::Value cum = prefix_sums(b, t[0], n);
    hlo::TensorType grid(hlo::DType::I64, {total, n});
    hlo::Value ends = b.broadcast_in_dim(cum, {total, n}, {1});
    hlo::Value passed = b.convert(b.compare(ends, b.iota(grid, 0), "LE"), hlo::DType::I64);  // cum[i] <= j
    hlo::Value idx = b.reduce({passed}, {b.constant_int(hlo::DType::I64, 0)}, {1},
                              [](hlo::Builder& q, const std::vector<hlo::Value>& a) {
                                return std::vector<hlo::Value>{q.add(a[0], a[1])};
                              })[0];
    return std::vector<hlo::Value>{b.convert(idx, out)};
  };
  return execute(fill).at(0);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("repeat_interleave.Tensor", tpu_repeat_interleave); }

}  // namespace
}  // namespace torch_tpu::eager
