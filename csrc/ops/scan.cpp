// Cumulative scans (cumsum, cumprod) as a Hillis-Steele prefix scan: log2(n)
// rounds of "x op x shifted by 2^k along dim". O(n log n) work and fast on
// every backend, where a reduce_window scan would cost O(n^2) on the CPU
// plugin. Half types accumulate in float32 like the CPU kernel.
#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

// Inclusive scan of `x` along `dim` with binary op `op` whose identity is `init`.
Value prefix_scan(Builder& b, Value x, int64_t dim, const std::string& op, double init) {
  int64_t rank = x.type.rank();
  int64_t n = x.type.dims[dim];
  Value pad_value = b.constant_float(x.type.dtype, init);
  std::vector<int64_t> zeros(rank, 0), ones(rank, 1);
  for (int64_t shift = 1; shift < n; shift *= 2) {
    std::vector<int64_t> low = zeros;
    low[dim] = shift;
    Value padded = b.pad(x, pad_value, low, zeros, zeros);  // identity in front
    std::vector<int64_t> limit = x.type.dims;
    Value shifted = b.slice(padded, zeros, limit, ones);    // x[i - shift]
    x = b.binary(op, x, shifted);
  }
  return x;
}

// cumsum / cumprod(self, dim, *, dtype)
Values scan_rule(Builder& b, const OpCall& c, const Values& v, const std::string& op, double init) {
  const auto& out = c.outputs[0];
  Value x = b.convert(operand(c, v, 0), compute_type(out.dtype));
  int64_t dim = wrap_dim(c.arg(1).i, x.type.rank());
  if (x.type.rank() == 0) return {b.convert(x, out.dtype)};
  return {b.convert(prefix_scan(b, x, dim, op, init), out.dtype)};
}

TORCH_TPU_ACCEPTS_COMPLEX("cumsum", "cumprod");

TORCH_TPU_LOWERING("cumsum", [](Builder& b, const OpCall& c, const Values& v) {
  return scan_rule(b, c, v, "add", 0);
});
TORCH_TPU_LOWERING("cumprod", [](Builder& b, const OpCall& c, const Values& v) {
  return scan_rule(b, c, v, "multiply", 1);
});

}  // namespace
}  // namespace torch_tpu::ops
