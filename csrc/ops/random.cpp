// Random numbers: Philox bits from stablehlo.rng_bit_generator, keyed by the
// generator's seed and a per-call offset (both runtime operands), so seeded
// runs are reproducible and a new draw never recompiles. The streams differ
// from the CPU's Mersenne Twister: tests check reproducibility and statistics.
#include <cmath>
#include <stdexcept>

#include "ops/elementwise_common.h"
#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

// `dims` random words (u32 or u64) from the generator argument `gen_arg`.
Value random_bits(Builder& b, const OpCall& c, const Values& v, size_t gen_arg, const std::vector<int64_t>& dims,
                  DType word) {
  const Arg& g = c.arg(gen_arg);
  Value seed = b.reshape(v.at(g.operands.at(0)), {1});
  Value offset = b.reshape(v.at(g.operands.at(1)), {1});
  Value state = b.concatenate({seed, offset}, 0);
  return b.emit("rng_bit_generator", {state}, "rng_algorithm = #stablehlo<rng_algorithm PHILOX>",
                {state.type, TensorType(word, dims)})[1];
}

int mantissa_digits(DType t) {
  switch (t) {
    case DType::BF16: return 8;
    case DType::F16: return 11;
    case DType::F64: return 53;
    default: return 24;
  }
}

// Uniform in [0, 1) with every value exactly representable in `out`: the top
// mantissa-many bits of a random word, scaled by 2^-digits.
Value uniform01(Builder& b, const OpCall& c, const Values& v, size_t gen_arg, const std::vector<int64_t>& dims,
                DType out) {
  bool wide = out == DType::F64;
  DType word = wide ? DType::U64 : DType::U32;
  DType acc = wide ? DType::F64 : DType::F32;
  int digits = mantissa_digits(out);
  TensorType wt(word, dims), at(acc, dims);
  Value bits = random_bits(b, c, v, gen_arg, dims, word);
  Value top = b.binary("shift_right_logical", bits, b.splat_int(wt, (wide ? 64 : 32) - digits));
  return b.multiply(b.convert(top, acc), b.splat_float(at, std::ldexp(1.0, -digits)));
}

DType acc_type(DType t) { return t == DType::F64 ? DType::F64 : DType::F32; }

// A complex tensor draws like PyTorch's view_as_real(self): its real and
// imaginary parts are independent draws of the real distribution (normal_
// with std / sqrt(2) per part). `out` is the real shape drawn: for complex,
// the tensor's dims plus a trailing 2.
TensorType real_draw_type(const TensorType& t) {
  if (!hlo::is_complex(t.dtype)) return t;
  std::vector<int64_t> dims = t.dims;
  dims.push_back(2);
  return TensorType(hlo::complex_component(t.dtype), dims);
}
Value as_result(Builder& b, const Value& x, const TensorType& out) {
  if (!hlo::is_complex(out.dtype)) return b.convert(x, out.dtype);
  Value parts = b.convert(x, hlo::complex_component(out.dtype));
  int64_t last = parts.type.rank() - 1;
  std::vector<int64_t> zeros(parts.type.rank(), 0), ones(parts.type.rank(), 1), lim = parts.type.dims, start = zeros;
  lim[last] = 1;
  Value re = b.reshape(b.slice(parts, zeros, lim, ones), out.dims);
  start[last] = 1;
  Value im = b.reshape(b.slice(parts, start, parts.type.dims, ones), out.dims);
  return b.complex(re, im);
}

TORCH_TPU_ACCEPTS_COMPLEX("uniform_", "normal_");

// uniform_(self, from=0, to=1, *, generator)
TORCH_TPU_LOWERING("uniform_", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype) && !hlo::is_complex(out.dtype))
    not_implemented_for("check_uniform_bounds", out.dtype);  // the CPU's NotImplementedError
  TensorType draw = real_draw_type(out);
  TensorType at(acc_type(draw.dtype), draw.dims);
  Value u = uniform01(b, c, v, 3, draw.dims, draw.dtype);
  Value lo = b.splat_float(at, c.arg(1).d), span = b.splat_float(at, c.arg(2).d - c.arg(1).d);
  return Values{as_result(b, b.add(lo, b.multiply(u, span)), out)};
});

// normal_(self, mean=0, std=1, *, generator): Box-Muller on two uniforms.
TORCH_TPU_LOWERING("normal_", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  if (!hlo::is_float(out.dtype) && !hlo::is_complex(out.dtype))
    not_implemented_for("normal_kernel_cpu", out.dtype);  // the CPU's NotImplementedError
  TensorType draw = real_draw_type(out);
  double std_dev = hlo::is_complex(out.dtype) ? c.arg(2).d / std::sqrt(2.0) : c.arg(2).d;
  TensorType at(acc_type(draw.dtype), draw.dims);
  std::vector<int64_t> two = draw.dims;
  two.insert(two.begin(), 2);
  Value u = uniform01(b, c, v, 3, two, DType::F32 == at.dtype ? DType::F32 : DType::F64);
  std::vector<int64_t> zeros(two.size(), 0), ones(two.size(), 1), lim1 = two, lim2 = two;
  lim1[0] = 1;
  std::vector<int64_t> start2 = zeros;
  start2[0] = 1;
  Value u1 = b.reshape(b.slice(u, zeros, lim1, ones), draw.dims);
  Value u2 = b.reshape(b.slice(u, start2, lim2, ones), draw.dims);
  // 1 - u1 lies in (0, 1]: log never sees 0.
  Value r = b.unary("sqrt", b.multiply(b.splat_float(at, -2.0), b.unary("log", b.subtract(b.splat_float(at, 1.0), u1))));
  Value z = b.multiply(r, b.unary("cosine", b.multiply(u2, b.splat_float(at, 2.0 * M_PI))));
  Value x = b.add(b.splat_float(at, c.arg(1).d), b.multiply(z, b.splat_float(at, std_dev)));
  return Values{as_result(b, x, out)};
});

// bernoulli_.float(self, p, *, generator) and bernoulli_.Tensor(self, p, *, generator)
// P(word < p * 2^64) over 64-bit words: p to 2^-64, as the CPU's double
// uniform gives it, with no float64 on the device (a TPU has none).
TORCH_TPU_LOWERING("bernoulli_.float", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  double p = c.arg(1).d;
  TensorType ut(DType::U64, out.dims);
  Value bits = random_bits(b, c, v, 2, out.dims, DType::U64);
  uint64_t threshold = p > 0 ? static_cast<uint64_t>(std::ldexp(p, 64)) : 0;  // p < 1 here
  Value hit = p >= 1 ? b.compare(bits, bits, "EQ")
                     : b.compare(bits, b.splat_int(ut, static_cast<int64_t>(threshold)), "LT");
  return Values{b.convert(hit, out.dtype)};
});

// A tensor of probabilities is compared with uniforms of its own precision
// (float32 ones for float32 and half types).
TORCH_TPU_LOWERING("bernoulli_.Tensor", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  DType pt = operand(c, v, 1).type.dtype;
  if (!hlo::is_float(pt)) not_implemented_for("bernoulli_tensor_cpu_p_", pt);  // the CPU's kernel: float probabilities
  DType acc = acc_type(pt);
  TensorType ft(acc, out.dims);
  Value u = uniform01(b, c, v, 2, out.dims, acc);
  Value p = to_type(b, operand(c, v, 1), ft);
  // The CPU kernel checks every probability (NaN fails too); raised at the next synchronization.
  Value in_range = b.binary("and", b.compare(p, b.splat_float(ft, 0.0), "GE"), b.compare(p, b.splat_float(ft, 1.0), "LE"));
  ew::runtime_check(b, b.unary("not", in_range),
                    "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  "
                    "If so, please report an enhancement request to PyTorch.)");
  return Values{b.convert(b.compare(u, p, "LT"), out.dtype)};
});

// Integers in [from, from + span) from 64-bit words (the modulo bias is below 2^-40 for spans under 2^24).
Value random_integers(Builder& b, const OpCall& c, const Values& v, size_t gen_arg, const TensorType& out,
                      int64_t from, uint64_t span) {
  TensorType ut(DType::U64, out.dims);
  Value bits = random_bits(b, c, v, gen_arg, out.dims, DType::U64);
  Value r = span == 0 ? bits : b.binary("remainder", bits, b.splat_int(ut, static_cast<int64_t>(span)));
  TensorType it(DType::I64, out.dims);
  return b.convert(b.add(b.convert(r, DType::I64), b.splat_int(it, from)), out.dtype);
}

// random_.from(self, from, to=None, *, generator): [from, to) or [from, 2^digits] for floats.
TORCH_TPU_LOWERING("random_.from", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  int64_t from = c.arg(1).i;
  uint64_t span;
  if (!c.arg(2).is_none()) {
    span = static_cast<uint64_t>(c.arg(2).i - from);
  } else if (hlo::is_float(out.dtype)) {
    span = (uint64_t{1} << mantissa_digits(out.dtype)) + 1 - from;
  } else {
    int bits = hlo::dtype_bits(out.dtype) - (hlo::is_unsigned(out.dtype) ? 0 : 1);
    span = bits >= 64 ? 0 : (uint64_t{1} << bits) - from;
  }
  return Values{random_integers(b, c, v, 3, out, from, span)};
});

TORCH_TPU_LOWERING("random_.to", [](Builder& b, const OpCall& c, const Values& v) {
  return Values{random_integers(b, c, v, 2, c.outputs[0], 0, static_cast<uint64_t>(c.arg(1).i))};
});

// random_(self, *, generator): [0, 2^digits] for floats, [0, max] for integers.
TORCH_TPU_LOWERING("random_", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  uint64_t span;
  if (out.dtype == DType::Pred) span = 2;
  else if (hlo::is_float(out.dtype)) span = (uint64_t{1} << mantissa_digits(out.dtype)) + 1;
  else {
    int bits = hlo::dtype_bits(out.dtype) - (hlo::is_unsigned(out.dtype) ? 0 : 1);
    span = bits >= 64 ? 0 : uint64_t{1} << bits;
  }
  return Values{random_integers(b, c, v, 1, out, 0, span)};
});

// exponential_(self, lambd=1, *, generator): -log(1 - u) / lambd.
TORCH_TPU_LOWERING("exponential_", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  TensorType at(acc_type(out.dtype), out.dims);
  Value u = uniform01(b, c, v, 2, out.dims, out.dtype == DType::F64 ? DType::F64 : DType::F32);
  Value e = b.negate(b.unary("log", b.subtract(b.splat_float(at, 1.0), u)));
  return Values{b.convert(b.divide(e, b.splat_float(at, c.arg(1).d)), out.dtype)};
});

// native_dropout(input, p, train) -> (output, mask): keep with probability
// 1 - p, scale kept values by 1 / (1 - p) (by 0 for p = 1). Not training:
// identity, all-true mask. A product with the mask, as the CPU's and CUDA's
// kernels take it: a dropped NaN or infinity stays NaN (x * 0).
TORCH_TPU_LOWERING("native_dropout", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value x = operand(c, v, 0);
  double p = c.arg(1).d;
  bool train = c.arg(2).is_none() || c.arg(2).b;
  if (!train || p == 0) return Values{x, b.splat_int(c.outputs[1], 1)};
  TensorType at(hlo::is_float(out.dtype) ? acc_type(out.dtype) : DType::F32, out.dims);
  Value u = uniform01(b, c, v, 3, out.dims, DType::F32);
  Value keep = b.compare(u, b.splat_float(TensorType(DType::F32, out.dims), p), "GE");
  Value scale = b.splat_float(at, p >= 1 ? 0.0 : 1.0 / (1.0 - p));
  Value y = b.multiply(b.multiply(b.convert(x, at.dtype), b.convert(keep, at.dtype)), scale);
  return Values{b.convert(y, out.dtype), b.convert(keep, c.outputs[1].dtype)};
});

// grad * mask * scale, left to right as the CPU's kernel: grad times mask in
// their promoted dtype (an integer grad wraps there), then the scale.
TORCH_TPU_LOWERING("native_dropout_backward", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  const Value& grad = operand(c, v, 0);
  const Value& mask = operand(c, v, 1);
  TensorType gm(result_type(c, {0, 1}), out.dims);  // a 0-d mask does not widen grad's dtype
  Value product = b.multiply(to_type(b, grad, gm), to_type(b, mask, gm));
  TensorType at(hlo::is_float(out.dtype) ? acc_type(out.dtype) : out.dtype, out.dims);
  return Values{b.convert(b.multiply(b.convert(product, at.dtype), b.splat_float(at, c.arg(2).d)), out.dtype)};
});

// Sorts `keys` along the last dimension (ascending, stable), carrying `payload`.
Value sort_payload_by(Builder& b, const Value& keys, const Value& payload) {
  int64_t dim = keys.type.rank() - 1;
  hlo::RegionBody less = [](Builder& r, const Values& a) { return Values{r.compare(a[0], a[1], "LT")}; };
  TensorType ks(keys.type.dtype, {}), ps(payload.type.dtype, {});
  return b.emit("sort", {keys, payload}, "dimension = " + std::to_string(dim) + " : i64, is_stable = true",
                {keys.type, payload.type}, {{{ks, ks, ps, ps}, less}})[1];
}

// randperm.generator_out(n, *, generator, out): indices sorted by random keys.
TORCH_TPU_LOWERING("randperm.generator_out", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value keys = random_bits(b, c, v, 1, out.dims, DType::U64);
  Value idx = b.iota(TensorType(DType::I64, out.dims), 0);
  return Values{b.convert(sort_payload_by(b, keys, idx), out.dtype)};
});

// The CPU's checks of multinomial's probabilities (values, so raised at the
// next synchronization), in its words: without replacement or for one sample
// it checks the whole tensor first; its sampling kernel (with replacement)
// checks entry by entry, NaN failing the "< 0" test.
void check_probabilities(Builder& b, const Value& p, bool sampling_kernel) {
  Value zero = b.splat_float(p.type, 0.0);
  Value not_nonnegative = b.unary("not", b.compare(p, zero, "GE"));
  Value not_finite = b.unary("not", b.is_finite(p));
  if (sampling_kernel) {
    ew::runtime_check(b, not_nonnegative, "invalid multinomial distribution (encountering probability entry < 0)");
    ew::runtime_check(b, not_finite, "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
  } else {
    ew::runtime_check(b, b.binary("or", not_nonnegative, not_finite),
                      "probability tensor contains either `inf`, `nan` or element < 0");
  }
  int64_t last = p.type.rank() - 1;
  Value sums = b.reduce({p}, {b.constant_float(p.type.dtype, 0.0)}, {last},
                        [](Builder& r, const Values& a) { return Values{r.add(a[0], a[1])}; })[0];
  ew::runtime_check(b, b.compare(sums, b.splat_float(sums.type, 0.0), "LE"),
                    "invalid multinomial distribution (sum of probabilities <= 0)");
}

// multinomial(probs, num_samples, replacement, *, generator): Gumbel trick.
// Without replacement: the num_samples largest of log(p) + Gumbel noise.
// With replacement: each sample is the argmax over its own noise.
TORCH_TPU_LOWERING("multinomial", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value p = operand(c, v, 0);
  int64_t ns = c.arg(1).i, k = p.type.dims.back();
  if (!hlo::is_float(p.type.dtype))  // the CPU's checks
    throw std::invalid_argument(std::string("multinomial only supports floating-point dtypes for input, got: ") +
                                torch_dtype_name(p.type.dtype));
  if (ns <= 0) throw std::invalid_argument("cannot sample n_sample <= 0 samples");
  bool replacement = c.arg(2).b;
  DType acc = p.type.dtype == DType::F64 ? DType::F64 : DType::F32;
  std::vector<int64_t> batch(p.type.dims.begin(), p.type.dims.end() - 1);
  std::vector<int64_t> kd = batch;
  if (replacement) kd.push_back(ns);
  kd.push_back(k);
  TensorType kt(acc, kd);
  Value u = uniform01(b, c, v, 3, kd, acc);
  // u in [0, 1): 1 - u in (0, 1]; Gumbel = -log(-log(1 - u)); +tiny keeps log finite.
  Value one = b.splat_float(kt, 1.0);
  Value tiny = b.splat_float(kt, acc == DType::F64 ? 1e-300 : 1e-38);
  Value gumbel = b.negate(b.unary("log", b.add(b.negate(b.unary("log", b.subtract(one, u))), tiny)));
  std::vector<int64_t> pdims = p.type.dims;
  Value pa = b.convert(p, acc);
  check_probabilities(b, pa, replacement && ns > 1);
  Value logp = b.unary("log", pa);
  if (replacement) {
    std::vector<int64_t> map;
    for (size_t i = 0; i < batch.size(); ++i) map.push_back(static_cast<int64_t>(i));
    map.push_back(static_cast<int64_t>(batch.size()) + 1);
    logp = b.broadcast_in_dim(logp, kd, map);
  }
  Value keys = b.negate(b.add(logp, gumbel));  // ascending sort: largest score first
  int64_t last = static_cast<int64_t>(kd.size()) - 1;
  Value idx = b.iota(TensorType(DType::I64, kd), last);
  Value order = sort_payload_by(b, keys, idx);
  std::vector<int64_t> start(kd.size(), 0), limit = kd, step(kd.size(), 1);
  limit[last] = replacement ? 1 : ns;
  Value picked = b.slice(order, start, limit, step);
  return Values{b.convert(b.reshape(picked, out.dims), out.dtype)};
});

}  // namespace
}  // namespace torch_tpu::ops
