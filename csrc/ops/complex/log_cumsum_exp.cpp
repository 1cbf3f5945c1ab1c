// logcumsumexp on complex values, as the CPU's kernel: a sequential scan
// along the dim (one stablehlo.while step per position) of
// cum = _log_add_exp_helper(x[i], cum) from (-inf, 0). The order matters for
// complex values beyond rounding: each step keeps the imaginary part of the
// operand with the larger real part and adds arg(1 + exp(min - max)), so a
// different combining order (a parallel scan) can land on another branch of
// the logarithm (2 pi apart). The CPU accumulates complex64 in complex128;
// this stays in complex64 (TPU-portable), within its rounding of that.
#include <limits>

#include "ops/complex/complex_math.h"
#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;
using complex_math::log_add_exp;

constexpr double kInf = std::numeric_limits<double>::infinity();


// logcumsumexp(self, dim); a 0-d input is its own result, as on the CPU.
TORCH_TPU_COMPLEX_LOWERING("logcumsumexp", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value x = b.convert(operand(c, v, 0), out.dtype);
  int64_t rank = x.type.rank();
  if (rank == 0 || x.type.numel() == 0) return Values{x};
  int64_t dim = wrap_dim(c.arg(1).i, rank);
  int64_t n = x.type.dims[dim];
  std::vector<int64_t> slab = x.type.dims;
  slab[dim] = 1;
  TensorType slab_t(out.dtype, slab), scalar_i{DType::I64, {}};
  DType part = hlo::complex_component(out.dtype);
  TensorType slab_r(part, slab);
  Value init = b.complex(b.splat_float(slab_r, -kInf), b.splat_float(slab_r, 0));
  std::vector<TensorType> types{scalar_i, x.type, slab_t, x.type};
  Values res = b.emit(
      "stablehlo.while", {b.constant_int(DType::I64, 0), x, init, b.splat_float(x.type, 0)}, "", types,
      {{types,
        [n](Builder& r, const Values& a) {
          return Values{r.compare(a[0], r.constant_int(DType::I64, n), "LT")};
        }},
       {types, [dim, rank, slab](Builder& r, const Values& a) {
          std::vector<Value> starts;
          for (int64_t d = 0; d < rank; ++d) starts.push_back(d == dim ? a[0] : r.constant_int(DType::I64, 0));
          Value xi = r.dynamic_slice(a[1], starts, slab);
          Value cum = log_add_exp(r, xi, a[2]);
          Value o = r.dynamic_update_slice(a[3], cum, starts);
          return Values{r.add(a[0], r.constant_int(DType::I64, 1)), a[1], cum, o};
        }}});
  return Values{res[3]};
});

}  // namespace
}  // namespace torch_tpu::ops
