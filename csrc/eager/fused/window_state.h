// The recorded contents of a fused window (window.h): the ops in order and
// the storages they touch, numbered in order of first use.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "eager/op_plan.h"

namespace torch_tpu::eager::fused {

struct RecordedOp {
  std::shared_ptr<const OpPlan> plan;
  std::string op;
  std::vector<int> bases;    // window storage of each base parameter
  std::vector<int> targets;  // window storage each target's result becomes
  std::vector<int> fresh;    // window storage of each fresh result (-1: undefined)
  std::vector<OperandValue> operands;  // offsets, scalars, generator values
};

struct WindowStorage {
  device::StorageSlot* slot;  // null once the storage died
  hlo::TensorType layout;     // its layout when the window first touched it
  bool read_before_written = false;  // the program takes its buffer as a parameter
  bool written = false;
  std::shared_ptr<pjrt::Buffer> orphan;  // the buffer of a storage that died in the window
};

struct Window {
  std::vector<RecordedOp> ops;
  std::vector<WindowStorage> storages;
  int device_index = -1;

  // Output number of each storage the program returns (written, still alive); -1 otherwise.
  std::vector<int> outputs() const;
};

// Where each op's runtime operands (offsets, scalars, generator values)
// travel. A window of many ops packs them into one 1-D parameter per dtype
// (in order of first use), read back by static slices: hundreds of 0-d
// arguments made PJRT's per-argument work the larger part of running the
// window. A window of few ops passes each as its own 0-d parameter. Both
// kinds of buffer are cached by value (scalar_operand_cache.h), so a loop
// that repeats its values uploads nothing after its first window.
// Which of the two is a function of the ops' plans, so the key covers it.
struct OperandLayout {
  bool packed = false;
  std::vector<hlo::DType> pack_dtypes;            // packed: one parameter each
  std::vector<int64_t> pack_sizes;                // its element count
  std::vector<std::vector<std::pair<int, int64_t>>> place;  // per op, per operand: (pack, index)
};
OperandLayout operand_layout(const Window& w);

// The window's program cache key: its ops' plans, their wiring, and which
// written storages are still alive.
std::string window_key(const Window& w);
// The window's program: storages read before written, then every op's
// operands, as parameters; the live written storages, then every op's
// runtime checks, as results (a live storage read and written is donated).
// A window of one op with the op's own parameters and results is the op's
// program itself, the text strict mode compiles.
std::string window_program(const Window& w);

}  // namespace torch_tpu::eager::fused
