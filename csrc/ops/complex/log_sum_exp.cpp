// The log-sum-exp family on complex values, after the CPU's formulas: the
// shift is by the real part's maximum (logsumexp), and logaddexp(x, y) is
// log1p(exp(min - max)) + max with min/max ordered by real part.
#include <limits>

#include "ops/complex/complex_math.h"
#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

constexpr double kInf = std::numeric_limits<double>::infinity();

// logsumexp(self, dim, keepdim): exp(x - m) summed, log, + m, with m the max
// real part over the reduced dims (an infinite m shifts by 0).
TORCH_TPU_COMPLEX_LOWERING("logsumexp", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value x = to_type(b, operand(c, v, 0), TensorType(out.dtype, operand(c, v, 0).type.dims));
  int64_t rank = x.type.rank();
  std::vector<int64_t> dims, kept;
  const Arg& dim_arg = c.arg(1);
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = dim_arg.ints.empty();
    for (int64_t r : dim_arg.ints) reduced |= (r < 0 ? r + rank : r) == d;
    (reduced ? dims : kept).push_back(d);
  }
  if (rank == 0) dims.clear(), kept.clear();
  DType part = hlo::complex_component(x.type.dtype);
  auto reduce = [&](const Value& t, const Value& init, const char* op) {
    return b.reduce({t}, {init}, dims, [op](Builder& r, const Values& a) {
      if (std::string(op) != "maximum") return Values{r.binary(op, a[0], a[1])};
      Value take = logical_or(r, r.compare(a[0], a[1], "GT"), is_nan(r, a[0]));  // NaN propagates
      return Values{r.select(take, a[0], a[1])};
    })[0];
  };
  Value m = reduce(b.real(x), b.constant_float(part, -kInf), "maximum");
  m = b.select(b.compare(magnitude(b, m), b.splat_float(m.type, kInf), "EQ"), b.splat_float(m.type, 0), m);
  Value mc = b.complex(m, b.splat_float(m.type, 0));
  Value e = b.unary("exponential", b.subtract(x, b.broadcast_in_dim(mc, x.type.dims, kept)));
  Value s = reduce(e, b.constant_float(x.type.dtype, 0), "add");
  return Values{b.reshape(b.add(complex_math::clog(b, s), mc), out.dims)};
});

// logaddexp(x, y) on complex values (the CPU's _log_add_exp_helper).
TORCH_TPU_COMPLEX_LOWERING("logaddexp", [](Builder& b, const OpCall& c, const Values& v) {
  return binary_compute(b, c, v, 0, 1, complex_math::log_add_exp);
});

}  // namespace
}  // namespace torch_tpu::ops
