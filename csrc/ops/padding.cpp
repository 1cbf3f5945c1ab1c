// reflection_pad{1,2,3}d and replication_pad{1,2,3}d, forward and backward.
// The source index of every output position is static (a reflection or a
// clamp of position - left pad), so each padded dimension is one gather and
// its backward one scatter-add (static_index.h). The meta kernel checks the
// pad sizes against the input. (Circular padding is composite: slices + cat.)
#include <algorithm>
#include <stdexcept>

#include "ops/registry.h"
#include "ops/static_index.h"

namespace torch_tpu::ops {
namespace {

namespace si = static_index;

enum class Kind { Reflect, Replicate };

// Source positions for one dimension of size `in` padded by (lo, hi).
std::vector<int64_t> source(Kind kind, int64_t in, int64_t lo, int64_t hi) {
  std::vector<int64_t> r;
  for (int64_t j = 0; j < in + lo + hi; ++j) {
    int64_t i = j - lo;
    if (kind == Kind::Replicate) {
      i = std::min(std::max<int64_t>(i, 0), in - 1);
    } else {
      if (i < 0) i = -i;
      if (i >= in) i = 2 * (in - 1) - i;
    }
    r.push_back(i);
  }
  return r;
}

// Padding list (last dimension first: left, right, top, bottom, front, back)
// as (dim, source positions) pairs for `dims`.
std::vector<std::pair<int64_t, std::vector<int64_t>>> maps(const OpCall& c, Kind kind, size_t pad_i,
                                                           const std::vector<int64_t>& dims) {
  const auto& pad = c.arg(pad_i).ints;
  int64_t n = static_cast<int64_t>(pad.size()) / 2, rank = static_cast<int64_t>(dims.size());
  if (rank < n) throw std::invalid_argument(c.op + ": input rank below the padded dimensions");
  std::vector<std::pair<int64_t, std::vector<int64_t>>> r;
  for (int64_t k = 0; k < n; ++k) {
    int64_t dim = rank - 1 - k;
    r.emplace_back(dim, source(kind, dims[dim], pad[2 * k], pad[2 * k + 1]));
  }
  return r;
}

Values pad_forward(Builder& b, const OpCall& c, const Values& v, Kind kind) {
  const Value& self = operand(c, v, 0);
  const TensorType& out = c.outputs[0];
  auto m = maps(c, kind, 1, self.type.dims);
  if (out.numel() == 0 || self.type.numel() == 0) return Values{b.splat_int(out, 0)};
  Value x = self;
  for (const auto& [dim, idx] : m) x = si::take(b, x, dim, idx);
  return Values{b.convert(x, out.dtype)};
}

// The per-dimension maps of `m` combined into one map over the flattened
// padded dims (the last m.size() dims of `in`), in row-major output order.
std::vector<int64_t> flat_map(const std::vector<std::pair<int64_t, std::vector<int64_t>>>& m,
                              const std::vector<int64_t>& in) {
  std::vector<int64_t> flat{0};
  for (auto it = m.rbegin(); it != m.rend(); ++it) {  // outermost padded dim first
    std::vector<int64_t> next;
    for (int64_t base : flat)
      for (int64_t src : it->second) next.push_back(base * in[it->first] + src);
    flat = std::move(next);
  }
  return flat;
}

// (grad_output, self, padding): sums each output gradient into its source, in
// the gradient's dtype and in row-major output order, as the CPU kernel does
// (one scatter over the flattened padded dims keeps that order).
Values pad_backward(Builder& b, const OpCall& c, const Values& v, Kind kind) {
  const Value& grad = operand(c, v, 0);
  const Value& self = operand(c, v, 1);
  const TensorType& out = c.outputs[0];
  const auto& in = self.type.dims;
  auto m = maps(c, kind, 2, in);
  if (out.numel() == 0 || grad.type.numel() == 0) return Values{b.splat_int(out, 0)};
  int64_t rank = self.type.rank(), lead = 1, in_flat = 1;
  int64_t first = rank - static_cast<int64_t>(m.size());
  for (int64_t d = 0; d < first; ++d) lead *= in[d];
  for (int64_t d = first; d < rank; ++d) in_flat *= in[d];
  auto idx = flat_map(m, in);
  Value g = b.reshape(grad, {lead, static_cast<int64_t>(idx.size())});
  return Values{b.convert(b.reshape(si::take_add(b, g, 1, idx, in_flat), out.dims), out.dtype)};
}

#define PAD(name, kind)                                                                                     \
  TORCH_TPU_LOWERING(name, [](Builder& b, const OpCall& c, const Values& v) { return pad_forward(b, c, v, kind); }); \
  TORCH_TPU_LOWERING(name "_backward",                                                                      \
                     [](Builder& b, const OpCall& c, const Values& v) { return pad_backward(b, c, v, kind); });

TORCH_TPU_ACCEPTS_COMPLEX("reflection_pad1d", "reflection_pad2d", "reflection_pad3d", "replication_pad1d",
                          "replication_pad2d", "replication_pad3d");

PAD("reflection_pad1d", Kind::Reflect)
PAD("reflection_pad2d", Kind::Reflect)
PAD("reflection_pad3d", Kind::Reflect)
PAD("replication_pad1d", Kind::Replicate)
PAD("replication_pad2d", Kind::Replicate)
PAD("replication_pad3d", Kind::Replicate)

}  // namespace
}  // namespace torch_tpu::ops
