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

enum class CheckKind { Index, Value, Runtime };  // -> IndexError, ValueError, RuntimeError

struct RuntimeCheck {
  hlo::Value failed;  // tensor<i1>: true when the check failed
  CheckKind kind;
  std::string message;
};

// Records a check for the rule being lowered on this thread.
void add_runtime_check(const hlo::Value& failed, CheckKind kind, std::string message);
// Records a check that every element of the integer tensor `index` lies in
// [lo, hi) (an empty index passes).
void check_in_range(hlo::Builder& b, const hlo::Value& index, int64_t lo, int64_t hi, CheckKind kind,
                    std::string message);

// The executor takes the checks recorded while a rule ran.
std::vector<RuntimeCheck> take_runtime_checks();

}  // namespace torch_tpu::ops
