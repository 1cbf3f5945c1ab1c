// What the executor knows about one op call's program (the cached plan) and
// about each tensor of the call; shared by the strict path (executor.cpp) and
// the fused window (fused_window.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "device/storage_slot.h"
#include "eager/cache_validation.h"
#include "eager/executor.h"
#include "ops/runtime_check.h"
#include "ops/view_lowering.h"
#include "pjrt/executable.h"

namespace torch_tpu::eager {

struct TensorFacts {
  ops::ViewGeometry view;
  device::StorageSlot* slot;
  int group;          // index of the distinct storage among all tensors of the call
  ops::ViewAccess access;
  int64_t offset;
  bool rebase = false;  // target that overwrites its whole storage: takes the view's layout
};

// The program of one op call and how its parameters and results map to the
// call's storages. Parameters: base buffers, then offsets, scalars and two
// u64 per generator. Results: targets, defined fresh outputs, runtime checks.
struct OpPlan {
  uint64_t id = 0;                      // unique: names the op's function inside fused windows
  std::shared_ptr<pjrt::Executable> exe;  // null until the op runs on its own
  std::string text;                     // the program, kept for fused windows
  bool calls_functions = false;         // the program defines functions besides @main
  std::vector<FreshOutput> fresh;
  std::vector<hlo::TensorType> fresh_layouts;
  std::vector<int> fresh_output;       // program output of each fresh result (-1: undefined)
  std::vector<int> base_groups;        // storage group of each base parameter
  std::vector<bool> base_aliased;      // base parameter donated to an output
  std::vector<int> offset_tensors;     // tensor ref (inputs, then targets) of each offset parameter
  std::vector<hlo::TensorType> target_layouts;
  uint64_t rng_increment = 0;
  std::vector<ops::RuntimeCheck> checks;  // extra outputs after the fresh ones
  std::vector<hlo::DType> scalar_types;   // per runtime scalar: its program type (see RuntimeScalar)
  std::shared_ptr<const ProgramFacts> built_for;  // kept in validation mode only
};

// A runtime operand's value: a storage offset, a scalar in its program type,
// or a generator's seed/offset (never worth caching as a device buffer).
struct OperandValue {
  RuntimeScalar value;
  bool cacheable = true;
};

// Compiles a program (or loads it from the persistent cache), counted in
// metrics under `counted_as`; a failure names `described_as`.
std::shared_ptr<pjrt::Executable> compile_program(const std::string& text, const std::string& counted_as,
                                                  const std::string& described_as);

// The device buffer of a runtime operand (cached by value unless a generator's).
std::shared_ptr<pjrt::Buffer> operand_buffer(const OperandValue& v, int device_index);

// The call's offsets, scalars and generator values, in parameter order;
// advances the generators (call once per execution).
std::vector<OperandValue> runtime_operands(const OpPlan& plan, const Invocation& inv,
                                           const std::vector<TensorFacts>& facts);

}  // namespace torch_tpu::eager
