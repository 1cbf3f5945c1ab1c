// Symmetric eigendecomposition (_linalg_eigh) with linalg::eigh (XLA's Jacobi
// "Eigh"): only the UPLO triangle is read, like LAPACK's syevd, and the
// eigenvalues come out ascending. Eigenvector
// signs may differ from LAPACK's (both are valid; PyTorch documents them as
// not unique).
#include "ops/linalg/common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace linalg;

TORCH_TPU_ACCEPTS_COMPLEX("_linalg_eigh");

TORCH_TPU_LOWERING("_linalg_eigh", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType &wt = c.outputs[0], &vt = c.outputs[1];
  require_float32_or_64(c, wt.dtype);  // real also for Hermitian input
  const std::string& uplo = c.arg(1).s;
  bool compute_v = c.arg(2).b;
  Value a = operand(c, v, 0);
  if (numel(a.type) == 0) return Values{b.splat_float(wt, 0.0), b.splat_float(vt, 0.0)};
  bool lower = uplo != "U" && uplo != "u";
  auto [vecs, vals] = eigh(b, a, lower);
  return Values{vals, compute_v ? vecs : b.splat_float(vt, 0.0)};
});

}  // namespace
}  // namespace torch_tpu::ops
