// Matrix exponential (linalg_matrix_exp) by scaling and squaring, the CPU's
// method: each matrix is scaled by 2^-s so its 1-norm is at most theta (the
// largest norm at which the degree-18 approximant is accurate to the dtype's
// precision), the degree-18 Taylor polynomial is evaluated with Bader, Blanes
// and Casas's scheme (Mathematics 2019, 7, 1174: five products of I, A, A^2,
// A^3, A^6 combinations), and the result squared s times in a while loop (s is
// a device value, per matrix). (The CPU uses lower degrees below smaller norm
// thresholds: same values up to rounding.) Half types compute in float32; the
// CPU computes them in their own dtype with double thresholds, which
// overflows to NaN where float32 does not.
#include <cmath>

#include "ops/linalg/common.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

using namespace linalg;

// The published degree-18 coefficients: B_i = sum_j kB[i][j] P_j over
// P = (I, A, A^2, A^3, A^6); A9 = B_0 B_4 + B_3; T18 = B_1 + (B_2 + A9) A9.
constexpr double kB[5][5] = {
    {0., -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.},
    {0., 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01,
     -6.37898194594723280150e-04},
    {-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
     -6.98210122488052056106e-03, 3.34975017086070470649e-05},
    {-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
     2.95552570429315521194e-02, -1.39180257516060693404e-05},
    {0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05}};


TORCH_TPU_ACCEPTS_COMPLEX("linalg_matrix_exp");

TORCH_TPU_LOWERING("linalg_matrix_exp", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  const Value& a = operand(c, v, 0);
  if (a.type.rank() < 2 || a.type.dims[a.type.rank() - 1] != a.type.dims[a.type.rank() - 2])
    throw std::invalid_argument(c.op + ": expected a square matrix or a batch of them, got " + a.type.str());
  if (out.numel() == 0) return Values{b.splat_float(out, 0.0)};
  DType ct = compute_type(out.dtype);
  DType real = hlo::complex_component(ct);
  Value x = b.convert(a, ct);
  int64_t r = x.type.rank();
  std::vector<int64_t> batch = batch_of(x.type), bmap;
  for (int64_t i = 0; i < r - 2; ++i) bmap.push_back(i);
  // 1-norm: the largest column sum of magnitudes, per matrix.
  Value mag = magnitude(b, x);
  Value col = b.reduce({mag}, {b.constant_float(real, 0.0)}, {r - 2},
                       [](Builder& rb, const Values& q) { return Values{rb.add(q[0], q[1])}; })[0];
  Value norm = b.reduce({col}, {b.constant_float(real, 0.0)}, {r - 2},
                        [](Builder& rb, const Values& q) { return Values{rb.maximum(q[0], q[1])}; })[0];
  double theta = real == DType::F64 ? 1.090863719290036 : 3.010066362817634;
  TensorType bt(real, batch);
  // s = max(0, ceil(log2(norm / theta))), capped (an infinite or NaN norm
  // gives a non-finite result either way).
  Value s = b.unary("ceil", b.divide(b.unary("log", b.divide(norm, b.splat_float(bt, theta))),
                                     b.splat_float(bt, std::log(2.0))));
  s = b.select(b.compare(s, s, "EQ"), s, b.splat_float(bt, 0.0));
  s = b.minimum(b.maximum(s, b.splat_float(bt, 0.0)), b.splat_float(bt, 64.0));
  // 2^-s exactly, from its exponent bits.
  bool wide = real == DType::F64;
  DType bits = wide ? DType::I64 : DType::I32;
  TensorType bits_t(bits, batch);
  Value exponent = b.subtract(b.splat_int(bits_t, wide ? 1023 : 127), b.convert(s, bits));
  Value scale = b.bitcast_convert(b.binary("shift_left", exponent, b.splat_int(bits_t, wide ? 52 : 23)), bt);
  Value xs = b.multiply(x, b.convert(b.broadcast_in_dim(scale, x.type.dims, bmap), ct));
  if (x.type.dims.back() == 1) return Values{b.convert(b.unary("exponential", x), out.dtype)};  // the CPU: exp
  Value eye = identity(b, x.type);
  Value a2 = batched_matmul(b, xs, xs), a3 = batched_matmul(b, xs, a2);
  Values p{eye, xs, a2, a3, batched_matmul(b, a3, a3)};
  Values bs;
  for (const auto& row : kB) {
    Value acc = b.multiply(p[0], b.splat_float(x.type, row[0]));
    for (int j = 1; j < 5; ++j) acc = b.add(acc, b.multiply(p[j], b.splat_float(x.type, row[j])));
    bs.push_back(acc);
  }
  Value a9 = b.add(batched_matmul(b, bs[0], bs[4]), bs[3]);
  Value t = b.add(bs[1], batched_matmul(b, b.add(bs[2], a9), a9));
  // Square s times: the loop runs max(s) times, each matrix squaring while i < its s.
  Value si = b.convert(s, DType::I64);
  Value rounds = b.reduce({si}, {b.constant_int(DType::I64, 0)}, [&] {
    std::vector<int64_t> all;
    for (int64_t i = 0; i < si.type.rank(); ++i) all.push_back(i);
    return all;
  }(), [](Builder& rb, const Values& q) { return Values{rb.maximum(q[0], q[1])}; })[0];
  TensorType scalar_i(DType::I64, {});
  std::vector<TensorType> carry{scalar_i, scalar_i, si.type, t.type};
  Values loop = b.emit(
      "while", {b.constant_int(DType::I64, 0), rounds, si, t}, "", carry,
      {{carry, [](Builder& rb, const Values& q) { return Values{rb.compare(q[0], q[1], "LT")}; }},
       {carry, [bmap](Builder& rb, const Values& q) {
          Value sq = batched_matmul(rb, q[3], q[3]);
          Value more = rb.compare(rb.broadcast_in_dim(q[0], q[2].type.dims, {}), q[2], "LT");
          Value next = rb.select(rb.broadcast_in_dim(more, q[3].type.dims, bmap), sq, q[3]);
          return Values{rb.add(q[0], rb.constant_int(DType::I64, 1)), q[1], q[2], next};
        }}});
  return Values{b.convert(loop[3], out.dtype)};
});

}  // namespace
}  // namespace torch_tpu::ops
