// The host side of ops::add_linalg_info_check: a failed LAPACK info (read back
// from the device at a synchronization) raises through ATen's own
// _linalg_check_errors, on a CPU tensor of the same values, so the exception
// type (torch.linalg.LinAlgError or RuntimeError), the words and the batch
// element named are exactly the CPU kernel's.
#include <ATen/ATen.h>

#include "device/runtime.h"

namespace torch_tpu::eager {
namespace {

void raise_linalg_info(const int32_t* info, const std::vector<int64_t>& dims, const std::string& api_name) {
  at::Tensor t = at::from_blob(const_cast<int32_t*>(info), dims, at::kInt).clone();
  at::_linalg_check_errors(t, api_name, /*is_matrix=*/dims.empty());
  TORCH_CHECK(false, api_name, ": a LAPACK info check failed, but ATen's check of its values passed");
}

struct RegisterRaiser {
  RegisterRaiser() { device::set_info_check_raiser(&raise_linalg_info); }
} register_raiser;

}  // namespace
}  // namespace torch_tpu::eager
