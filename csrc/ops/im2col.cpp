// im2col (F.unfold) and col2im (F.fold). With a zero-padded input, kernel
// offset (i, j) reads the strided window starting at (i * dil_h, j * dil_w):
// im2col stacks those kh * kw slices; col2im puts each back with an
// interior-padded pad (stride - 1 zeros between elements) and sums them,
// so neither needs a gather or a scatter.
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

struct Geometry {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
  int64_t out_h(int64_t h) const { return (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int64_t out_w(int64_t w) const { return (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
};

// kernel_size, dilation, padding, stride at args first..first+3.
Geometry geometry(const OpCall& c, size_t first) {
  auto two = [&](size_t i) {
    const auto& v = c.arg(i).ints;
    if (v.size() != 2) throw std::invalid_argument(c.op + ": expected 2-element int lists");
    return v;
  };
  auto k = two(first), d = two(first + 1), p = two(first + 2), s = two(first + 3);
  // the CPU's shape checks that come before the size ones (the meta kernel
  // only checks sizes: padding -1 with a large enough input passed it)
  auto hw = [](const char* what, const std::vector<int64_t>& x) {
    return std::string(what) + "_height: " + std::to_string(x[0]) + " " + what + "_width: " + std::to_string(x[1]);
  };
  if (k[0] <= 0 || k[1] <= 0)
    throw std::invalid_argument("kernel size should be greater than zero, but got " + hw("kernel", k));
  if (d[0] <= 0 || d[1] <= 0)
    throw std::invalid_argument("dilation should be greater than zero, but got " + hw("dilation", d));
  if (p[0] < 0 || p[1] < 0) throw std::invalid_argument("padding should be non-negative, but got " + hw("pad", p));
  if (s[0] <= 0 || s[1] <= 0)
    throw std::invalid_argument("stride should be greater than zero, but got " + hw("stride", s));
  return Geometry{k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1]};
}

// im2col(self [N, C, H, W] or [C, H, W], kernel_size, dilation, padding, stride) -> [N, C*kh*kw, L]
TORCH_TPU_ACCEPTS_COMPLEX("im2col", "col2im");

TORCH_TPU_LOWERING("im2col", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Geometry g = geometry(c, 1);
  Value x = operand(c, v, 0);
  if (x.type.rank() == 3) x = b.reshape(x, {1, x.type.dims[0], x.type.dims[1], x.type.dims[2]});
  if (x.type.rank() != 4) throw std::invalid_argument(c.op + ": expected a 3-D or 4-D input");
  int64_t n = x.type.dims[0], ch = x.type.dims[1];
  int64_t oh = g.out_h(x.type.dims[2]), ow = g.out_w(x.type.dims[3]);
  if (out.numel() == 0 || x.type.numel() == 0) return Values{b.splat_int(out, 0)};
  Value xp = b.pad(x, b.constant_int(x.type.dtype, 0), {0, 0, g.ph, g.pw}, {0, 0, g.ph, g.pw}, {0, 0, 0, 0});
  Values parts;
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) {
      int64_t h0 = i * g.dh, w0 = j * g.dw;
      Value s = b.slice(xp, {0, 0, h0, w0}, {n, ch, h0 + (oh - 1) * g.sh + 1, w0 + (ow - 1) * g.sw + 1},
                        {1, 1, g.sh, g.sw});
      parts.push_back(b.reshape(s, {n, ch, 1, oh, ow}));
    }
  Value cols = parts.size() == 1 ? parts[0] : b.concatenate(parts, 2);
  return Values{b.reshape(cols, out.dims)};
});

// col2im(self [N, C*kh*kw, L] or [C*kh*kw, L], output_size, kernel_size, dilation, padding, stride)
// -> [N, C, H, W]; overlapping windows add up.
TORCH_TPU_LOWERING("col2im", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Geometry g = geometry(c, 2);
  const auto& size = c.arg(1).ints;
  if (size.size() != 2) throw std::invalid_argument(c.op + ": expected output_size of 2 elements");
  int64_t h = size[0], w = size[1];
  int64_t oh = g.out_h(h), ow = g.out_w(w);
  Value cols = operand(c, v, 0);
  int64_t n = cols.type.rank() == 3 ? cols.type.dims[0] : 1;
  int64_t kk = g.kh * g.kw;
  int64_t ch = cols.type.dims[cols.type.rank() - 2] / kk;
  if (out.numel() == 0 || cols.type.numel() == 0) return Values{b.splat_int(out, 0)};
  DType dt = cols.type.dtype;
  Value x = b.reshape(cols, {n, ch, kk, oh, ow});
  int64_t hp = h + 2 * g.ph, wp = w + 2 * g.pw;
  Value zero = b.constant_int(dt, 0);
  Value acc;
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) {
      int64_t k = i * g.kw + j;
      Value piece = b.reshape(b.slice(x, {0, 0, k, 0, 0}, {n, ch, k + 1, oh, ow}, {1, 1, 1, 1, 1}), {n, ch, oh, ow});
      int64_t h0 = i * g.dh, w0 = j * g.dw;
      int64_t hh = hp - (h0 + (oh - 1) * g.sh + 1), wh = wp - (w0 + (ow - 1) * g.sw + 1);
      Value placed = b.pad(piece, zero, {0, 0, h0, w0}, {0, 0, hh, wh}, {0, 0, g.sh - 1, g.sw - 1});
      acc = acc.name.empty() ? placed : b.add(acc, placed);
    }
  Value r = b.slice(acc, {0, 0, g.ph, g.pw}, {n, ch, g.ph + h, g.pw + w}, {1, 1, 1, 1});
  return Values{b.reshape(r, out.dims)};
});

}  // namespace
}  // namespace torch_tpu::ops
