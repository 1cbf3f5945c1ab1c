// linalg_lstsq.out (the functional linalg_lstsq is PyTorch's composite over
// it): PyTorch has no meta kernel, so the CPU's checks (linalg_lstsq_out in
// BatchLinearAlgebra.cpp, in its order and with its messages) and its result
// sizes are here. Which results are empty depends on the driver; the gelsd /
// gelss residuals of an overdetermined system exist only when every matrix has
// full rank n, a fact of the values: it is read from the device here (the
// singular values of A, as the rule computes them), once per call (an out=
// call runs its meta kernel on every call, never the out= memo's sizes, and
// the written tensors' sizes are part of the program's key).
#include "eager/meta_overrides/registry.h"

#include <ATen/ExpandUtils.h>
#include <ATen/ops/all.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linalg_svdvals.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <string>

namespace torch_tpu::eager {
namespace {

void check_device(const at::Tensor& t, const at::Tensor& input, const char* name) {
  TORCH_CHECK(t.device() == input.device(), "torch.linalg.lstsq: Expected ", name,
              " and input tensors to be on the same device, but got ", name, " on ", t.device(), " and input on ",
              input.device());
}

void check_castable(c10::ScalarType out, c10::ScalarType result, const char* name) {
  TORCH_CHECK(c10::canCast(result, out), "torch.linalg.lstsq: Expected ", name, " to be safely castable from ", result,
              " dtype, but got ", name, " with dtype ", out);
}

// Whether every matrix of `a` (on the tpu) has rank n by gelsd / gelss's rule:
// singular values above max(rcond, eps-if-out-of-range) * s_max.
bool all_full_rank(const at::Tensor& a, double rcond, const std::string& driver) {
  int64_t n = a.size(-1);
  if (n == 0 || a.numel() == 0) return true;  // rank 0 == n, or no matrices at all
  TORCH_CHECK_NOT_IMPLEMENTED(a.device().type() == c10::DeviceType::PrivateUse1 && a.has_storage(),
                              "torch.linalg.lstsq: the residuals' size depends on the rank of A, unknown here");
  at::Tensor s = at::linalg_svdvals(a);  // (..., n), descending (m > n)
  bool f32 = c10::toRealValueType(a.scalar_type()) == c10::kFloat;
  double eps = f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  double tiny = f32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
  at::Tensor smax = s.select(-1, 0), smin = s.select(-1, n - 1);
  at::Tensor full;
  if (driver == "gelsd") {
    double r = (rcond <= 0 || rcond >= 1) ? eps : rcond;
    full = smin.gt(smax.mul(r)).logical_and(smax.gt(0));
  } else {  // gelss
    double r = rcond < 0 ? eps : rcond;
    full = smin.gt(smax.mul(r).clamp_min(tiny)).logical_and(smax.gt(0));
  }
  return at::all(full).item<bool>();
}

std::vector<c10::IValue> lstsq_out_meta(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& input = stack[first].toTensor();
  const at::Tensor& other = stack[first + 1].toTensor();
  const c10::IValue& rcond_arg = stack[first + 2];
  const c10::IValue& driver_arg = stack[first + 3];
  const at::Tensor& solution = stack[first + 4].toTensor();
  const at::Tensor& residuals = stack[first + 5].toTensor();
  const at::Tensor& rank = stack[first + 6].toTensor();
  const at::Tensor& singular_values = stack[first + 7].toTensor();

  TORCH_CHECK(input.dim() >= 2, "torch.linalg.lstsq: input must have at least 2 dimensions.");
  TORCH_CHECK(other.dim() >= 1, "torch.linalg.lstsq: other must have at least 1 dimension.");
  TORCH_CHECK(input.scalar_type() == other.scalar_type(),
              "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype ",
              input.scalar_type(), " and other's dtype ", other.scalar_type());
  int64_t dim_diff = input.dim() - other.dim();
  TORCH_CHECK(0 <= dim_diff && dim_diff <= 1,
              "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - "
              "other.dim()) <= 1");
  // linalg_solve_is_vector_rhs: a vector right side has exactly A's shape minus its last dim.
  bool vector_case = other.dim() == 1 ||
                     (dim_diff == 1 && other.sizes().equals(input.sizes().slice(0, input.dim() - 1)));
  int64_t m = input.size(-2), n = input.size(-1);
  int64_t other_rows = vector_case ? other.size(-1) : other.size(-2);
  TORCH_CHECK(m == other_rows, vector_case ? "torch.linalg.lstsq: input.size(-2) should match other.size(-1)"
                                           : "torch.linalg.lstsq: input.size(-2) should match other.size(-2)");
  check_device(other, input, "other");
  check_device(solution, input, "solution");
  check_device(residuals, input, "residuals");
  check_device(rank, input, "rank");
  check_device(singular_values, input, "singular_values");
  c10::ScalarType real_dtype = c10::toRealValueType(input.scalar_type());
  check_castable(solution.scalar_type(), input.scalar_type(), "solution");
  check_castable(residuals.scalar_type(), real_dtype, "solution");  // sic: the CPU names it so
  check_castable(rank.scalar_type(), c10::kLong, "rank");
  check_castable(singular_values.scalar_type(), real_dtype, "singular_values");

  std::string driver = "gelsy";
  if (!driver_arg.isNone()) {
    driver = std::string(driver_arg.toStringView());
    std::transform(driver.begin(), driver.end(), driver.begin(), [](unsigned char ch) { return std::tolower(ch); });
    TORCH_CHECK(driver == "gels" || driver == "gelsy" || driver == "gelsd" || driver == "gelss",
                "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  }
  bool lapack_type = real_dtype == c10::kFloat || real_dtype == c10::kDouble;
  // The default rcond reads the dtype's epsilon first (_get_epsilon).
  TORCH_CHECK(!rcond_arg.isNone() || lapack_type, "This function doesn't handle types other than float and double");
  double rcond = rcond_arg.isNone() ? -1.0 : rcond_arg.toDouble();
  if (rcond_arg.isNone())
    rcond = (real_dtype == c10::kFloat ? std::numeric_limits<float>::epsilon()
                                       : std::numeric_limits<double>::epsilon()) *
            static_cast<double>(std::max(m, n));

  // The solution's batch: A's with other's leading dims (as many as A's batch
  // has; for a matrix right side one dim short of A's this takes its row dim).
  auto a_batch = input.sizes().slice(0, input.dim() - 2);
  auto b_lead = other.sizes().slice(0, std::min<int64_t>(other.dim(), input.dim() - 2));
  std::vector<int64_t> batch = at::infer_size(a_batch, b_lead);
  int64_t nrhs = vector_case ? 1 : other.size(-1);
  if (!vector_case) {
    // other is copied into the (batch, m, nrhs) workspace: it must broadcast there.
    std::vector<int64_t> work = batch;
    work.push_back(m);
    work.push_back(nrhs);
    TORCH_CHECK(at::infer_size(work, other.sizes()) == work, "torch.linalg.lstsq: other of shape ", other.sizes(),
                " does not broadcast to ", c10::IntArrayRef(work));
  }
  // Other dtypes: the rule raises the CPU kernel's NotImplementedError (from
  // here it would read as a data-dependent shape and run the CPU).
  // gelsd's LAPACK call rejects nrhs = 0 for a non-empty matrix (the CPU
  // raises; gelss crashes there, the result here is the natural one).
  int64_t batch_count = 1;
  for (int64_t d : batch) batch_count *= d;
  TORCH_CHECK(!(driver == "gelsd" && lapack_type && nrhs == 0 && m > 0 && n > 0 && batch_count > 0),
              "torch.linalg.lstsq: Argument 4 has illegal value. Most certainly there is a bug in the "
              "implementation calling the backend library.");
  std::vector<int64_t> sol = batch;
  sol.push_back(n);
  if (!vector_case) sol.push_back(nrhs);
  std::vector<int64_t> res = {0};
  if (m > n && driver != "gelsy" && (driver == "gels" || !lapack_type || all_full_rank(input, rcond, driver))) {
    res = batch;
    res.push_back(nrhs);
  }
  std::vector<int64_t> rk = {0}, sv = {0};
  if (driver != "gels") rk = a_batch.vec();
  if (driver == "gelsd" || driver == "gelss") {
    sv = a_batch.vec();
    sv.push_back(std::min(m, n));
  }
  auto meta = [](const at::Tensor& like, const std::vector<int64_t>& sizes) {
    return c10::IValue(at::empty(sizes, like.options().device(c10::kMeta)));
  };
  return {meta(solution, sol), meta(residuals, res), meta(rank, rk), meta(singular_values, sv)};
}

const MetaOverrideRegistrar registrar({{"aten::linalg_lstsq.out", lstsq_out_meta}}, /*reads_values=*/true);

}  // namespace
}  // namespace torch_tpu::eager
