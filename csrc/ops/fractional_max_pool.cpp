// fractional_max_pool2d/3d and their backward, as the CPU's kernels compute
// them. Each plane's window starts come from its random samples u (one per
// spatial dim): start_i = int((i + u) * alpha) - int(u * alpha) with
// alpha = (in - k) / (out - 1), the last start in - k; that arithmetic runs in
// the input's dtype (a half type rounds after every step, as c10::Half does).
// The window's maximum is the CPU's running "val > max || isnan(val)": the
// last NaN if any, else the first largest value; indices are plane offsets.
#include <limits>

#include "ops/elementwise_common.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

using namespace ew;

// a op b in dtype `t` the way c10's scalar types compute: in float, rounded.
Value scalar_op(Builder& b, const char* op, const Value& x, const Value& y, DType t) {
  DType ct = compute_type(t);
  return b.convert(b.binary(op, b.convert(x, ct), b.convert(y, ct)), t);
}

// Window starts [B, C, out] for one spatial dim from samples u [B, C].
Value interval_starts(Builder& b, const Value& u, int64_t in, int64_t out, int64_t k) {
  DType t = u.type.dtype;
  std::vector<int64_t> dims = u.type.dims;
  dims.push_back(out);
  TensorType it(DType::I64, dims);
  Value last = b.splat_int(it, in - k);
  if (out == 1) return last;
  TensorType ft(t, dims);
  Value alpha = scalar_op(b, "divide", b.constant_float(t, static_cast<double>(in - k)),
                          b.constant_float(t, static_cast<double>(out - 1)), t);
  Value ub = b.broadcast_in_dim(u, dims, {0, 1});
  Value ab = b.broadcast_to(alpha, dims);
  Value i = b.convert(b.iota(TensorType(DType::I64, dims), 2), t);
  Value first = b.convert(scalar_op(b, "multiply", scalar_op(b, "add", i, ub, t), ab, t), DType::I64);
  Value base = b.convert(scalar_op(b, "multiply", ub, ab, t), DType::I64);  // C++ casts truncate toward zero
  Value starts = b.subtract(first, base);
  return b.select(b.compare(b.iota(it, 2), b.splat_int(it, out - 1), "EQ"), last, starts);
}

// Which sample drives spatial dim d of nd: 2-d takes (W, H) from (u0, u1), 3-d (T, H, W) from (u0, u1, u2).
int64_t sample_of(int64_t d, int64_t nd) { return nd == 2 ? 1 - d : d; }

Values forward(Builder& b, const OpCall& c, const Values& v, int64_t nd) {
  Value x = operand(c, v, 0);
  const std::vector<int64_t>& ks = c.arg(1).ints;
  const std::vector<int64_t>& os = c.arg(2).ints;
  bool batched = x.type.rank() == nd + 2;
  if (!batched) x = b.reshape(x, [&] { auto d = x.type.dims; d.insert(d.begin(), 1); return d; }());
  int64_t B = x.type.dims[0], C = x.type.dims[1];
  std::vector<int64_t> in(x.type.dims.begin() + 2, x.type.dims.end());
  int64_t plane = 1;
  for (int64_t s : in) plane *= s;
  const TensorType &out_t = c.outputs[0], &idx_t = c.outputs[1];
  if (out_t.numel() == 0) return Values{b.splat_float(out_t, 0), b.splat_int(idx_t, 0)};
  Value u = b.convert(b.reshape(operand(c, v, 3), {B, C, nd}), x.type.dtype);
  // full = [B, C, out..., k...]: the plane offset of every window element.
  std::vector<int64_t> full{B, C};
  full.insert(full.end(), os.begin(), os.end());
  full.insert(full.end(), ks.begin(), ks.end());
  TensorType ft(DType::I64, full);
  Value offset = b.splat_int(ft, 0);
  int64_t stride = plane;
  for (int64_t d = 0; d < nd; ++d) {
    stride /= in[d];
    Value ud = b.reshape(b.slice(u, {0, 0, sample_of(d, nd)}, {B, C, sample_of(d, nd) + 1}, {1, 1, 1}), {B, C});
    Value st = b.broadcast_in_dim(interval_starts(b, ud, in[d], os[d], ks[d]), full, {0, 1, 2 + d});
    Value pos = b.add(st, b.iota(ft, 2 + nd + d));
    offset = b.add(offset, b.multiply(pos, b.splat_int(ft, stride)));
  }
  Value bc = b.add(b.multiply(b.iota(ft, 0), b.splat_int(ft, C)), b.iota(ft, 1));
  Value global = b.add(b.multiply(bc, b.splat_int(ft, plane)), offset);
  Value vals = b.gather_elements_1d(b.reshape(x, {B * C * plane}), global);
  int64_t kn = 1;
  for (int64_t k : ks) kn *= k;
  std::vector<int64_t> flat(full.begin(), full.begin() + 2 + nd);
  flat.push_back(kn);
  vals = b.reshape(vals, flat);
  Value offs = b.reshape(offset, flat);
  DType dt = x.type.dtype;
  Values r = b.reduce(
      {vals, offs}, {b.constant_float(dt, -std::numeric_limits<double>::infinity()),
                     b.constant_int(DType::I64, std::numeric_limits<int64_t>::max())},
      {2 + nd}, [](Builder& rb, const Values& q) {
        // q: (running value, its offset, element value, its offset). A total
        // order: NaN above all (the later NaN wins), then the larger value,
        // then the earlier position: the CPU's sequential pick.
        const Value &av = q[0], &ai = q[1], &bv = q[2], &bi = q[3];
        Value an = is_nan(rb, av), bn = is_nan(rb, bv);
        Value b_nan_wins = logical_and(rb, bn, logical_or(rb, logical_not(rb, an), rb.compare(bi, ai, "GT")));
        Value both_num = logical_and(rb, logical_not(rb, an), logical_not(rb, bn));
        Value b_num_wins = logical_and(rb, both_num, logical_or(rb, rb.compare(bv, av, "GT"),
                                                                logical_and(rb, rb.compare(bv, av, "EQ"),
                                                                            rb.compare(bi, ai, "LT"))));
        Value take_b = logical_or(rb, b_nan_wins, b_num_wins);
        return Values{rb.select(take_b, bv, av), rb.select(take_b, bi, ai)};
      });
  return Values{b.reshape(r[0], out_t.dims), b.reshape(r[1], idx_t.dims)};
}

// backward(grad_output, self, kernel_size, output_size, indices): each output's
// gradient added at its plane offset.
Values backward(Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  const Value& g = operand(c, v, 0);
  const Value& idx = operand(c, v, 4);
  const std::vector<int64_t>& os = c.arg(3).ints;
  int64_t nd = static_cast<int64_t>(os.size());
  std::string name = nd == 2 ? "fractional_max_pool2d_backward" : "fractional_max_pool3d_backward";
  // The shapes the CPU checks (or reads past): self [B,] C, in...; grad and
  // indices [B,] C, out..., alike.
  if (out.rank() > nd + 2)  // the CPU reads it as unbatched, then its gradOutput size checks fail
    throw std::invalid_argument(name + "_out(): gradOutput of shape " + g.type.str() + " unexpected for self " +
                                out.str());
  if (out.rank() < nd + 1)
    throw std::out_of_range("Dimension out of range (expected to be in range of [-" +
                            std::to_string(std::max<int64_t>(out.rank(), 1)) + ", " +
                            std::to_string(std::max<int64_t>(out.rank(), 1) - 1) + "], but got " +
                            std::to_string(out.rank() - nd - 1) + ")");
  bool batched = out.rank() == nd + 2;
  int64_t B = batched ? out.dims[0] : 1, C = out.dims[batched ? 1 : 0];
  std::vector<int64_t> want(out.dims.begin(), out.dims.end() - nd);
  want.insert(want.end(), os.begin(), os.end());
  if (g.type.dims != want)
    throw std::invalid_argument(name + ": gradOutput of shape " + g.type.str() + " does not match the output size");
  if (idx.type.dims != want) throw std::invalid_argument(name + ": indices of shape " + idx.type.str() + " do not match");
  if (out.numel() == 0 || g.type.numel() == 0) return Values{b.splat_float(out, 0)};
  int64_t plane = out.numel() / (B * C), n = g.type.numel() / (B * C);
  check_in_range(b, idx, 0, plane, CheckKind::Runtime,
                 name + "(): index should be in [0, " + std::to_string(plane) + ")");
  TensorType it(DType::I64, {B, C, n});
  Value i = b.reshape(b.convert(idx, DType::I64), {B, C, n});
  Value bc = b.add(b.multiply(b.iota(it, 0), b.splat_int(it, C)), b.iota(it, 1));
  Value global = b.add(b.multiply(bc, b.splat_int(it, plane)), i);
  Value zeros = b.splat_float(TensorType(out.dtype, {B * C * plane}), 0);
  Value r = b.scatter_elements_1d(zeros, b.reshape(global, {B * C * n}), b.reshape(b.convert(g, out.dtype), {B * C * n}),
                                  "add");
  return Values{b.reshape(r, out.dims)};
}

TORCH_TPU_LOWERING("fractional_max_pool2d", [](Builder& b, const OpCall& c, const Values& v) { return forward(b, c, v, 2); });
TORCH_TPU_LOWERING("fractional_max_pool3d", [](Builder& b, const OpCall& c, const Values& v) { return forward(b, c, v, 3); });
TORCH_TPU_LOWERING("fractional_max_pool2d_backward", backward);
TORCH_TPU_LOWERING("fractional_max_pool3d_backward", backward);

}  // namespace
}  // namespace torch_tpu::ops
