// grid_sampler_2d / grid_sampler_3d (F.grid_sample) and their backwards.
// Output points are flattened to P = prod(grid spatial dims); each point maps
// every input-spatial axis to a source coordinate (unnormalize, then the
// padding mode), and reads a few taps (nearest: 1, bilinear: 2^nd corners,
// bicubic: 4x4). A tap is one 1-D gather from the flat input; the backward
// scatter-adds into a flat zero buffer. The formulas follow the CPU kernels:
// 2-d uses the vectorized kernel's (GridSamplerKernel.cpp), 3-d the scalar
// one's (GridSampler.h). float32/float64 compute in their dtype; half types
// compute in f32 and round once, which differs from the CPU, whose half
// kernels round every step (coordinates included).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

enum Interp { Bilinear = 0, Nearest = 1, Bicubic = 2 };
enum Pad { Zeros = 0, Border = 1, Reflection = 2 };

struct Ctx {
  Builder& b;
  int nd;          // spatial dims (2 or 3)
  int64_t N, C, L, P;  // batch, channels, input spatial numel, output points
  std::vector<int64_t> S;  // input spatial sizes (D,) H, W
  int pad;
  bool align;
  DType dt;    // compute dtype (f64, else f32)
  DType it;    // index dtype
  bool vec2d;  // the 2-d vectorized kernel's formulas (else 3-d scalar)

  TensorType pts() const { return TensorType(dt, {N, P}); }
  Value k(double v) { return b.splat_float(pts(), v); }
  Value ik(int64_t v) { return b.splat_int(TensorType(it, {N, P}), v); }
  int64_t size(int axis) const { return S[nd - 1 - axis]; }  // axis 0 = x = last dim
};

Value is_nan(Builder& b, const Value& x) { return b.compare(x, x, "NE"); }
Value band(Builder& b, const Value& x, const Value& y) { return b.binary("and", x, y); }

// Grid value -> pixel coordinate; `mult` gets d(coord)/d(grid).
Value unnormalize(Ctx& c, const Value& g, int64_t size, Value* mult) {
  Builder& b = c.b;
  double sf = c.align ? (size - 1) / 2.0 : size / 2.0;
  if (mult) *mult = c.k(sf);
  Value g1 = b.add(g, c.k(1));
  if (c.vec2d) {  // (g + 1) * sf [- 0.5]
    Value r = b.multiply(g1, c.k(sf));
    return c.align ? r : b.subtract(r, c.k(0.5));
  }
  if (c.align) return b.multiply(b.divide(g1, c.k(2)), c.k(static_cast<double>(size - 1)));
  return b.divide(b.subtract(b.multiply(g1, c.k(static_cast<double>(size))), c.k(1)), c.k(2));
}

// Clip to [0, size-1]. NaN becomes 0 in the vectorized kernel (clamp operand
// order) and size-1 in the scalar one (std::min/max). The gradient is 0 on
// and past the borders.
Value clip(Ctx& c, const Value& x, int64_t size, Value* mult) {
  Builder& b = c.b;
  Value hi = c.k(static_cast<double>(size - 1));
  if (mult) {
    Value inside = band(b, b.compare(x, c.k(0), "GT"), b.compare(x, hi, "LT"));
    *mult = b.select(inside, *mult, c.k(0));
  }
  Value r = b.minimum(b.maximum(x, c.k(0)), hi);
  return b.select(is_nan(b, x), c.vec2d ? c.k(0) : hi, r);
}

// Reflect into [low, low + span] (align: [0, size-1]; else [-0.5, size-0.5]);
// the gradient flips sign with each reflection.
Value reflect(Ctx& c, const Value& x, int64_t size, Value* mult) {
  Builder& b = c.b;
  if (c.align && size <= 1) {
    if (mult) *mult = c.k(0);
    return c.k(0);
  }
  double low = c.align ? 0 : -0.5, twice = c.align ? 2.0 * (size - 1) : 2.0 * size;
  Value tw = c.k(twice), lo = c.k(low);
  Value in = c.align ? x : b.subtract(x, lo);
  Value a = b.unary("abs", in);
  // |in| >= 0, so trunc(|in| / twice) is its floor.
  Value extra = b.subtract(a, b.multiply(b.unary("floor", b.divide(a, tw)), tw));
  Value refl = b.subtract(tw, extra);
  Value flip = b.compare(extra, refl, "GT");
  if (mult) {
    Value neg = b.compare(in, c.k(0), "LT");
    Value sign = b.select(b.binary("xor", flip, neg), c.k(-1), c.k(1));
    *mult = b.multiply(sign, *mult);
  }
  Value r = b.select(flip, refl, extra);
  return c.align ? r : b.add(r, lo);
}

// The padding mode applied to a pixel coordinate.
Value pad_coord(Ctx& c, const Value& x, int64_t size, Value* mult) {
  if (c.pad == Border) return clip(c, x, size, mult);
  if (c.pad == Reflection) return clip(c, reflect(c, x, size, mult), size, mult);
  return x;
}

// A whole-valued coordinate -> (index, in-bounds). Clamped before the
// conversion, so huge values and NaN cannot overflow the index type.
std::pair<Value, Value> to_index(Ctx& c, const Value& x, int64_t size) {
  Builder& b = c.b;
  Value xc = b.minimum(b.maximum(x, c.k(-1)), c.k(static_cast<double>(size)));
  xc = b.select(is_nan(b, x), c.k(-1), xc);
  Value i = b.convert(xc, c.it);
  Value ok = band(b, b.compare(i, c.ik(0), "GE"), b.compare(i, c.ik(size), "LT"));
  return {b.select(ok, i, c.ik(0)), ok};
}

// A tap: flat offset within one (n, c) slice, and whether it is in bounds.
struct Tap {
  Value off, ok;
};

Tap make_tap(Ctx& c, const std::vector<Value>& xs) {
  Builder& b = c.b;
  Tap t;
  int64_t stride = 1;
  for (int axis = 0; axis < c.nd; ++axis) {
    auto [i, ok] = to_index(c, xs[axis], c.size(axis));
    Value term = stride == 1 ? i : b.multiply(i, c.ik(stride));
    t.off = axis == 0 ? term : b.add(t.off, term);
    t.ok = axis == 0 ? ok : band(b, t.ok, ok);
    stride *= c.size(axis);
  }
  t.off = b.select(t.ok, t.off, c.ik(0));
  return t;
}

// [N, C, P] flat indices of a tap for every channel.
Value flat_index(Ctx& c, const Tap& t) {
  Builder& b = c.b;
  TensorType nc(c.it, {c.N, c.C, c.P});
  Value base = b.add(b.multiply(b.iota(nc, 0), b.splat_int(nc, c.C * c.L)), b.multiply(b.iota(nc, 1), b.splat_int(nc, c.L)));
  return b.add(base, b.broadcast_in_dim(t.off, nc.dims, {0, 2}));
}

Value per_channel(Ctx& c, const Value& v) { return c.b.broadcast_in_dim(v, {c.N, c.C, c.P}, {0, 2}); }

Value sum_channels(Ctx& c, const Value& v) {
  Builder& b = c.b;
  hlo::RegionBody add = [](Builder& r, const Values& a) { return Values{r.add(a[0], a[1])}; };
  return b.reduce({v}, {b.constant_float(c.dt, 0)}, {1}, add)[0];
}

// The value at a tap, 0 where out of bounds.
Value read(Ctx& c, const Value& flat_in, const Tap& t) {
  Builder& b = c.b;
  Value g = b.gather_elements_1d(flat_in, flat_index(c, t));
  return b.select(per_channel(c, t.ok), g, b.splat_float(g.type, 0));
}

void scatter(Ctx& c, Value& acc, const Tap& t, const Value& upd) {
  Builder& b = c.b;
  Value u = b.select(per_channel(c, t.ok), upd, b.splat_float(upd.type, 0));
  acc = b.scatter_elements_1d(acc, flat_index(c, t), u, "add");
}

// Cubic convolution weights (A = -0.75) at fraction t, and their derivatives.
void cubic(Ctx& c, const Value& t, Value w[4], Value dw[4]) {
  Builder& b = c.b;
  const double A = -0.75;
  auto near = [&](const Value& x) {  // ((A+2)x - (A+3)) x x + 1, |x| <= 1
    return b.add(b.multiply(b.multiply(b.subtract(b.multiply(c.k(A + 2), x), c.k(A + 3)), x), x), c.k(1));
  };
  auto far = [&](const Value& x) {  // ((A x - 5A) x + 8A) x - 4A, 1 < |x| < 2
    return b.subtract(b.multiply(b.add(b.multiply(b.subtract(b.multiply(c.k(A), x), c.k(5 * A)), x), c.k(8 * A)), x),
                      c.k(4 * A));
  };
  w[0] = far(b.add(t, c.k(1)));
  w[1] = near(t);
  w[2] = near(b.subtract(c.k(1), t));
  w[3] = far(b.subtract(c.k(2), t));
  if (!dw) return;
  // d/dt of each weight: far'(x) = (3A x - 10A) x + 8A, near'(x) = (3(A+2) x - 2(A+3)) x,
  // times dx/dt = +1 for taps 0, 1 and -1 for taps 2, 3.
  auto dnear = [&](const Value& x) {
    return b.multiply(b.subtract(b.multiply(c.k(3 * (A + 2)), x), c.k(2 * (A + 3))), x);
  };
  auto dfar = [&](const Value& x) {
    return b.add(b.multiply(b.subtract(b.multiply(c.k(3 * A), x), c.k(10 * A)), x), c.k(8 * A));
  };
  dw[0] = dfar(b.add(t, c.k(1)));
  dw[1] = dnear(t);
  dw[2] = b.negate(dnear(b.subtract(c.k(1), t)));
  dw[3] = b.negate(dfar(b.subtract(c.k(2), t)));
}

struct Args {
  Ctx c;
  Value flat_in;             // [N*C*L]
  std::vector<Value> g;      // per axis, [N, P]
  int interp;
};

// Checks the CPU makes before its kernel, and the shared setup.
Ctx context(Builder& b, const OpCall& call, const Value& input, const Value& grid, int nd, size_t arg0) {
  const std::string op = nd == 2 ? "grid_sampler_2d" : "grid_sampler_3d";
  DType dt = input.type.dtype;
  if (!hlo::is_float(dt) || dt == DType::F8E5M2 || dt == DType::F8E4M3FN)
    not_implemented_for(nd == 2 ? "grid_sampler_2d_cpu_kernel_impl" : "grid_sampler3d_cpu", dt);
  if (grid.type.dtype != dt)
    throw std::invalid_argument(op + ": expected input and grid to have the same dtype");
  if (input.type.rank() != nd + 2 || grid.type.rank() != nd + 2 || grid.type.dims.back() != nd)
    throw std::invalid_argument(op + ": unexpected input or grid shape");
  int64_t interp = call.arg(arg0).i, pad = call.arg(arg0 + 1).i;
  if (interp < 0 || interp > (nd == 2 ? 2 : 1))
    throw std::invalid_argument(op + ": unsupported interpolation mode " + std::to_string(interp));
  if (pad < 0 || pad > 2) throw std::invalid_argument(op + ": unsupported padding mode " + std::to_string(pad));
  const auto& d = input.type.dims;
  DType ct = dt == DType::F64 ? dt : DType::F32;
  Ctx c{b, nd, d[0], d[1], 1, 1, {}, static_cast<int>(pad), call.arg(arg0 + 2).b, ct, DType::I32, nd == 2};
  for (int i = 2; i < nd + 2; ++i) c.S.push_back(d[i]), c.L *= d[i];
  for (int i = 1; i < nd + 1; ++i) c.P *= grid.type.dims[i];
  if (c.N * c.C * c.L >= (int64_t{1} << 31)) c.it = DType::I64;
  return c;
}

Args setup(Builder& b, const OpCall& call, const Value& input, const Value& grid, int nd, size_t arg0) {
  Args a{context(b, call, input, grid, nd, arg0), {}, {}, static_cast<int>(call.arg(arg0).i)};
  Ctx& c = a.c;
  a.flat_in = b.reshape(b.convert(input, c.dt), {c.N * c.C * c.L});
  Value gr = b.reshape(b.convert(grid, c.dt), {c.N, c.P, nd});
  for (int k = 0; k < nd; ++k) a.g.push_back(b.reshape(b.slice(gr, {0, 0, k}, {c.N, c.P, k + 1}, {1, 1, 1}), {c.N, c.P}));
  return a;
}

// Forward, and (with gout) the backward: grad_input into *gin, d out/d grid
// summed over channels into *ggrid (one [N, P] per axis).
Value sample(Args& a, const Value* gout, Value* gin, std::vector<Value>* ggrid) {
  Ctx& c = a.c;
  Builder& b = c.b;
  int nd = c.nd;
  TensorType ncp(c.dt, {c.N, c.C, c.P});
  Value out = b.splat_float(ncp, 0);
  bool want_grid = ggrid != nullptr;
  std::vector<Value> gacc(nd);

  if (a.interp == Bicubic) {  // 2-d only: taps around the unpadded coordinate, each tap padded
    Value x[2], fl[2], w[2][4], dw[2][4], mult[2];
    for (int k = 0; k < 2; ++k) {
      x[k] = unnormalize(c, a.g[k], c.size(k), &mult[k]);
      fl[k] = b.unary("floor", x[k]);
      cubic(c, b.subtract(x[k], fl[k]), w[k], want_grid ? dw[k] : nullptr);
    }
    Value gx = b.splat_float(ncp, 0), gy = gx;
    for (int j = 0; j < 4; ++j) {
      Value row;
      for (int i = 0; i < 4; ++i) {
        Value tx = pad_coord(c, b.add(fl[0], c.k(i - 1)), c.size(0), nullptr);
        Value ty = pad_coord(c, b.add(fl[1], c.k(j - 1)), c.size(1), nullptr);
        Tap t = make_tap(c, {tx, ty});
        Value val = read(c, a.flat_in, t);
        Value term = b.multiply(per_channel(c, w[0][i]), val);
        row = i == 0 ? term : b.add(row, term);
        if (gin) scatter(c, *gin, t, b.multiply(b.multiply(*gout, per_channel(c, w[0][i])), per_channel(c, w[1][j])));
        if (want_grid) {
          Value vg = b.multiply(val, *gout);
          gx = b.add(gx, b.multiply(b.multiply(vg, per_channel(c, dw[0][i])), per_channel(c, w[1][j])));
          gy = b.add(gy, b.multiply(b.multiply(vg, per_channel(c, dw[1][j])), per_channel(c, w[0][i])));
        }
      }
      Value term = b.multiply(per_channel(c, w[1][j]), row);
      out = j == 0 ? term : b.add(out, term);
    }
    if (want_grid) {
      gacc[0] = b.multiply(sum_channels(c, gx), mult[0]);
      gacc[1] = b.multiply(sum_channels(c, gy), mult[1]);
    }
  } else {
    std::vector<Value> x(nd), mult(nd);
    for (int k = 0; k < nd; ++k)
      x[k] = pad_coord(c, unnormalize(c, a.g[k], c.size(k), want_grid ? &mult[k] : nullptr), c.size(k),
                       want_grid ? &mult[k] : nullptr);
    if (a.interp == Nearest) {
      std::vector<Value> r;
      for (int k = 0; k < nd; ++k) r.push_back(b.unary("round_nearest_even", x[k]));
      Tap t = make_tap(c, r);
      out = read(c, a.flat_in, t);
      if (gin) scatter(c, *gin, t, *gout);
      for (int k = 0; k < nd && want_grid; ++k) gacc[k] = c.k(0);
    } else {
      // Per axis: floor, the fractional distance to it (hi weight) and 1 - it (lo weight).
      std::vector<Value> fl(nd), hi(nd), lo(nd);
      for (int k = 0; k < nd; ++k) {
        fl[k] = b.unary("floor", x[k]);
        hi[k] = b.subtract(x[k], fl[k]);
        lo[k] = c.vec2d ? b.subtract(c.k(1), hi[k]) : b.subtract(b.add(fl[k], c.k(1)), x[k]);
      }
      std::vector<Value> gpart(nd);
      for (int corner = 0; corner < (1 << nd); ++corner) {
        std::vector<Value> pos(nd), f(nd);
        for (int k = 0; k < nd; ++k) {
          bool up = corner >> k & 1;
          pos[k] = up ? b.add(fl[k], c.k(1)) : fl[k];
          f[k] = up ? hi[k] : lo[k];
        }
        // weight: 2-d multiplies y then x factors (s * e), 3-d x * y * z.
        Value wgt = c.vec2d ? b.multiply(f[1], f[0]) : b.multiply(b.multiply(f[0], f[1]), f[2]);
        Tap t = make_tap(c, pos);
        Value val = read(c, a.flat_in, t);
        Value term = b.multiply(val, per_channel(c, wgt));
        // The scalar 3-d kernel skips out-of-bounds corners (a NaN weight adds nothing).
        if (!c.vec2d) term = b.select(per_channel(c, t.ok), term, b.splat_float(ncp, 0));
        out = corner == 0 ? term : b.add(out, term);
        if (gin) scatter(c, *gin, t, b.multiply(*gout, per_channel(c, wgt)));
        for (int k = 0; k < nd && want_grid; ++k) {
          Value others;  // product of the other axes' factors
          for (int j = 0; j < nd; ++j)
            if (j != k) others = others.name.empty() ? f[j] : b.multiply(others, f[j]);
          Value d = b.multiply(val, per_channel(c, others));
          bool up = corner >> k & 1;
          gpart[k] = gpart[k].name.empty() ? (up ? d : b.negate(d)) : (up ? b.add(gpart[k], d) : b.subtract(gpart[k], d));
        }
      }
      for (int k = 0; k < nd && want_grid; ++k) gacc[k] = b.multiply(sum_channels(c, b.multiply(gpart[k], *gout)), mult[k]);
    }
  }
  if (ggrid) *ggrid = gacc;
  return out;
}

Values forward(Builder& b, const OpCall& call, const Values& v, int nd) {
  const Value& input = operand(call, v, 0);
  const Value& grid = operand(call, v, 1);
  const TensorType& out = call.outputs[0];
  Ctx c = context(b, call, input, grid, nd, 2);
  if (out.numel() == 0) return Values{b.splat_float(out, 0)};
  Args a = setup(b, call, input, grid, nd, 2);
  return Values{b.convert(b.reshape(sample(a, nullptr, nullptr, nullptr), out.dims), out.dtype)};
}

// (grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask)
Values backward(Builder& b, const OpCall& call, const Values& v, int nd) {
  const Value& gout = operand(call, v, 0);
  const Value& input = operand(call, v, 1);
  const Value& grid = operand(call, v, 2);
  const TensorType& gi_t = call.outputs[0];
  const TensorType& gg_t = call.outputs[1];
  Ctx c = context(b, call, input, grid, nd, 3);
  if (gout.type.dtype != input.type.dtype) throw std::invalid_argument("grid_sampler backward: grad_output dtype differs from input");
  const auto& mask = call.arg(6).ints;
  bool want_input = mask.empty() || mask[0];
  bool want_in = want_input && gi_t.numel() > 0;
  if (input.type.numel() == 0 || c.P == 0) return Values{b.splat_float(gi_t, 0), b.splat_float(gg_t, 0)};
  Args a = setup(b, call, input, grid, nd, 3);
  Value g = b.reshape(b.convert(gout, c.dt), {c.N, c.C, c.P});
  Value gin = b.splat_float(TensorType(c.dt, {c.N * c.C * c.L}), 0);
  std::vector<Value> gg;
  sample(a, &g, want_in ? &gin : nullptr, &gg);
  Values parts;
  for (int k = 0; k < nd; ++k) parts.push_back(b.reshape(gg[k], {c.N, c.P, 1}));
  Value ggrid = b.convert(b.reshape(b.concatenate(parts, 2), gg_t.dims), gg_t.dtype);
  Value gi = want_in ? b.convert(b.reshape(gin, gi_t.dims), gi_t.dtype) : b.splat_float(gi_t, 0);
  return Values{gi, ggrid};
}

TORCH_TPU_LOWERING("grid_sampler_2d", [](Builder& b, const OpCall& c, const Values& v) { return forward(b, c, v, 2); });
TORCH_TPU_LOWERING("grid_sampler_3d", [](Builder& b, const OpCall& c, const Values& v) { return forward(b, c, v, 3); });
TORCH_TPU_LOWERING("grid_sampler_2d_backward",
                   [](Builder& b, const OpCall& c, const Values& v) { return backward(b, c, v, 2); });
TORCH_TPU_LOWERING("grid_sampler_3d_backward",
                   [](Builder& b, const OpCall& c, const Values& v) { return backward(b, c, v, 3); });

}  // namespace
}  // namespace torch_tpu::ops
