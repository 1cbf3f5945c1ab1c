// Checks that depend on device values (e.g. an index out of range) cannot
// raise while the program is built or queued. A rule records a 0-d boolean
// "failed" flag here; the executor adds it as an extra program output, and the
// error is raised at the next synchronization (or at once in debug mode),
// with PyTorch's exception type and the op's name.
#pragma once
#include <string>
#include <vector>

#include "hlo/builder.h"
#include "hlo/tensor_type.h"

namespace torch_tpu::ops {

// -> IndexError, ValueError, RuntimeError; LinalgInfo: what the CPU's LAPACK
// kernels raise for their info (see add_linalg_info_check).
enum class CheckKind { Index, Value, Runtime, LinalgInfo };

struct RuntimeCheck {
  hlo::Value failed;  // tensor<i1>: true when the check failed; LinalgInfo: the i32 info tensor
  CheckKind kind;
  std::string message;  // LinalgInfo: the API name the CPU kernel reports
};

// Records a check for the rule being lowered on this thread.
void add_runtime_check(const hlo::Value& failed, CheckKind kind, std::string message);
// A LAPACK-style `info` (i32, the batch's shape; 0 where a matrix is fine) that
// the CPU kernel checks: at the next synchronization the host runs
// at::_linalg_check_errors(info, api_name, is_matrix = info is 0-d), so the
// error (torch.linalg.LinAlgError or RuntimeError), its words and the batch
// element it names are the CPU's.
void add_linalg_info_check(const hlo::Value& info, std::string api_name);
// Records a check that every element of the integer tensor `index` lies in
// [lo, hi) (an empty index passes).
void check_in_range(hlo::Builder& b, const hlo::Value& index, int64_t lo, int64_t hi, CheckKind kind,
                    std::string message);

// The executor takes the checks recorded while a rule ran.
std::vector<RuntimeCheck> take_runtime_checks();

}  // namespace torch_tpu::ops
