// Ops that move elements around without arithmetic: cat, flip, roll, repeat,
// tril/triu, constant padding. Result shapes come from the meta kernel.
#include <stdexcept>
#include <string>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

// An all-zero result: the only value an empty tensor can have.
Value zeros(Builder& b, const TensorType& t) { return b.splat_int(t, 0); }

// cat(Tensor[] tensors, int dim=0). Empty operands contribute nothing (this
// also covers the legacy 1-D (0,) tensors PyTorch skips whatever their rank),
// and every operand is converted to the promoted result dtype.
// Data movement only: complex values go through unchanged.
TORCH_TPU_ACCEPTS_COMPLEX("cat", "flip", "roll", "repeat", "tril", "triu", "constant_pad_nd");

TORCH_TPU_LOWERING("cat", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (out.numel() == 0) return Values{zeros(b, out)};
  int64_t dim = wrap_dim(c.arg(1).i, out.rank());
  Values parts;
  for (int i : c.arg(0).operands) {
    const Value& p = v.at(i);
    if (p.type.numel() == 0) continue;
    parts.push_back(b.convert(p, out.dtype));
  }
  if (parts.size() == 1) return Values{parts[0]};
  return Values{b.concatenate(parts, dim)};
});

// flip(Tensor self, int[] dims)
TORCH_TPU_LOWERING("flip", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  std::vector<int64_t> dims;
  for (int64_t d : c.arg(1).ints) dims.push_back(wrap_dim(d, x.type.rank()));
  if (x.type.rank() == 0 || dims.empty() || x.type.numel() == 0) return Values{x};
  return Values{b.emit1("reverse", {x}, "dimensions = " + hlo::int_array(dims), x.type)};
});

// x rotated by `shift` along `dim`: the last `shift` elements move to the front.
Value roll_dim(Builder& b, const Value& x, int64_t shift, int64_t dim) {
  int64_t n = x.type.dims[dim];
  if (n == 0) return x;
  int64_t s = ((shift % n) + n) % n;
  if (s == 0) return x;
  std::vector<int64_t> start(x.type.rank(), 0), limit = x.type.dims, strides(x.type.rank(), 1);
  std::vector<int64_t> mid = limit;
  mid[dim] = n - s;
  Value head = b.slice(x, start, mid, strides);  // [0, n - s)
  start[dim] = n - s;
  Value tail = b.slice(x, start, limit, strides);  // [n - s, n)
  return b.concatenate({tail, head}, dim);
}

// roll(Tensor self, SymInt[] shifts, SymInt[] dims=[]): with no dims the
// tensor is rolled as if flattened.
TORCH_TPU_LOWERING("roll", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  const auto& shifts = c.arg(1).ints;
  const auto& dims = c.arg(2).ints;
  // The CPU's checks; PyTorch's meta kernel skips them for an empty tensor.
  if (shifts.empty()) throw std::invalid_argument("`shifts` required");
  if (!(dims.empty() && shifts.size() == 1) && shifts.size() != dims.size())
    throw std::invalid_argument("shifts and dimensions must align. shifts: " + std::to_string(shifts.size()) +
                                ", dims:" + std::to_string(dims.size()));
  if (dims.empty()) {
    Value flat = b.reshape(x, {x.type.numel()});
    return Values{b.reshape(roll_dim(b, flat, shifts[0], 0), x.type.dims)};
  }
  Value r = x;
  for (size_t i = 0; i < dims.size(); ++i) r = roll_dim(b, r, shifts.at(i), wrap_dim(dims[i], x.type.rank()));
  return Values{r};
});

// repeat(Tensor self, SymInt[] repeats): self (left-padded with size-1 dims)
// broadcast to [r0, d0, r1, d1, ...] and folded to [r0*d0, r1*d1, ...].
TORCH_TPU_LOWERING("repeat", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  const TensorType& out = c.outputs[0];
  if (out.numel() == 0) return Values{zeros(b, out)};
  const auto& reps = c.arg(1).ints;
  size_t n = reps.size();
  std::vector<int64_t> padded(n - x.type.rank(), 1);
  padded.insert(padded.end(), x.type.dims.begin(), x.type.dims.end());
  std::vector<int64_t> wide, map;
  for (size_t i = 0; i < n; ++i) {
    wide.push_back(reps[i]);
    wide.push_back(padded[i]);
    map.push_back(2 * i + 1);
  }
  Value r = b.broadcast_in_dim(b.reshape(x, padded), wide, map);
  return Values{b.reshape(r, out.dims)};
});

// Keeps x where (col - row) compared with `diagonal` holds, zero elsewhere.
Value triangle(Builder& b, const OpCall& c, const Values& v, const char* direction) {
  const Value& x = operand(c, v, 0);
  if (x.type.rank() < 2) throw std::invalid_argument("tril/triu: input must have at least 2 dimensions");
  if (x.type.numel() == 0) return x;
  int64_t rank = x.type.rank();
  TensorType plane(DType::I64, {x.type.dims[rank - 2], x.type.dims[rank - 1]});
  Value offset = b.subtract(b.iota(plane, 1), b.iota(plane, 0));
  Value keep = b.compare(offset, b.splat_int(plane, c.arg(1).i), direction);
  keep = b.broadcast_in_dim(keep, x.type.dims, {rank - 2, rank - 1});
  return b.select(keep, x, zeros(b, x.type));
}

TORCH_TPU_LOWERING("tril", [](Builder& b, const OpCall& c, const Values& v) {
  return Values{triangle(b, c, v, "LE")};
});

TORCH_TPU_LOWERING("triu", [](Builder& b, const OpCall& c, const Values& v) {
  return Values{triangle(b, c, v, "GE")};
});

// constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0): pairs of
// (low, high) from the last dimension backwards; negative pads crop.
TORCH_TPU_LOWERING("constant_pad_nd", [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  const TensorType& out = c.outputs[0];
  const auto& pad = c.arg(1).ints;
  int64_t rank = x.type.rank();
  std::vector<int64_t> low(rank, 0), high(rank, 0), interior(rank, 0);
  for (size_t k = 0; 2 * k + 1 < pad.size(); ++k) {
    int64_t d = rank - 1 - static_cast<int64_t>(k);
    low[d] = pad[2 * k];
    high[d] = pad[2 * k + 1];
  }
  Value fill = b.convert(operand(c, v, 2), out.dtype);
  if (out.numel() == 0 || x.type.numel() == 0) return Values{b.broadcast_to(fill, out.dims)};
  return Values{b.pad(x, fill, low, high, interior)};
});

}  // namespace
}  // namespace torch_tpu::ops
