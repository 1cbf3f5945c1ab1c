#include "ops/pooling_common.h"

#include <limits>
#include <stdexcept>

#include "ops/type_promotion.h"

namespace torch_tpu::ops::pooling {

Dims spatial_dims(const TensorType& t, size_t n) { return Dims(t.dims.end() - n, t.dims.end()); }

int64_t planes(const TensorType& t, size_t n) {
  int64_t p = 1;
  for (size_t i = 0; i + n < t.dims.size(); ++i) p *= t.dims[i];
  return p;
}

Dims int_arg(const OpCall& c, size_t i, size_t n, const Dims& fallback) {
  Dims v = c.arg(i).ints;
  if (v.empty()) v = fallback;
  if (v.size() == 1) v.assign(n, v[0]);
  if (v.size() != n) throw std::invalid_argument(c.op + ": expected " + std::to_string(n) + " values per argument");
  return v;
}

void require_float(const OpCall& c, DType t) {
  if (!hlo::is_float(t) || hlo::is_complex(t))
    not_implemented_for(c.op.substr(0, c.op.find('.')), t);  // NotImplementedError, as the CPU
}

Value lowest(Builder& b, DType t) {
  if (hlo::is_float(t)) return b.constant_float(t, -std::numeric_limits<double>::infinity());
  if (hlo::is_unsigned(t) || t == DType::Pred) return b.constant_int(t, 0);
  int bits = hlo::dtype_bits(t);
  return b.constant_int(t, bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1)));
}

namespace {

// `spatial` (n values) preceded by `fill` for every leading dim of a rank-`rank` tensor.
Dims full(const Dims& spatial, int64_t rank, int64_t fill) {
  Dims d(rank - spatial.size(), fill);
  d.insert(d.end(), spatial.begin(), spatial.end());
  return d;
}

}  // namespace

Values reduce_window(Builder& b, const Values& inputs, const Values& inits, const Dims& window, const Dims& strides,
                     const Dims& dilations, const hlo::RegionBody& body) {
  const TensorType& t = inputs[0].type;
  size_t n = window.size();
  Dims dims = t.dims;
  for (size_t i = 0; i < n; ++i) {
    size_t d = t.dims.size() - n + i;
    int64_t span = (window[i] - 1) * dilations[i] + 1;
    dims[d] = t.dims[d] < span ? 0 : (t.dims[d] - span) / strides[i] + 1;
  }
  std::vector<TensorType> results, args;
  for (const Value& v : inputs) results.emplace_back(v.type.dtype, dims);
  for (int k = 0; k < 2; ++k)
    for (const Value& v : inputs) args.emplace_back(v.type.dtype, Dims{});
  Values operands = inputs;
  operands.insert(operands.end(), inits.begin(), inits.end());
  int64_t rank = t.rank();
  std::string attr = "window_dimensions = " + hlo::int_array(full(window, rank, 1)) +
                     ", window_strides = " + hlo::int_array(full(strides, rank, 1)) +
                     ", window_dilations = " + hlo::int_array(full(dilations, rank, 1));
  return b.emit("reduce_window", operands, attr, results, {{args, body}});
}

Value pad_spatial(Builder& b, const Value& x, const Value& fill, const Dims& lo, const Dims& hi, const Dims& interior) {
  int64_t rank = x.type.rank();
  return b.pad(x, fill, full(lo, rank, 0), full(hi, rank, 0),
               full(interior.empty() ? Dims(lo.size(), 0) : interior, rank, 0));
}

Values max_with_index(Builder& b, const Values& a) {
  const Value &av = a[0], &ai = a[1], &bv = a[2], &bi = a[3];
  Value a_nan = b.compare(av, av, "NE"), b_nan = b.compare(bv, bv, "NE");
  Value neither = b.binary("and", b.unary("not", a_nan), b.unary("not", b_nan));
  Value b_larger = b.binary("or", b.compare(bv, av, "GT"),
                            b.binary("and", b.compare(bv, av, "EQ"), b.compare(bi, ai, "LT")));
  Value b_nan_wins = b.binary("and", b_nan, b.binary("or", b.unary("not", a_nan), b.compare(bi, ai, "GT")));
  Value take_b = b.binary("or", b_nan_wins, b.binary("and", neither, b_larger));
  return Values{b.select(take_b, bv, av), b.select(take_b, bi, ai)};
}

Value iota64(Builder& b, const Dims& dims, int64_t dim) { return b.iota(TensorType(DType::I64, dims), dim); }

Value flat_positions(Builder& b, const TensorType& t, size_t n) {
  Dims sp = spatial_dims(t, n);
  Value pos = b.splat_int(TensorType(DType::I64, sp), 0);
  int64_t stride = 1;
  for (size_t i = n; i-- > 0;) {
    pos = b.add(pos, b.multiply(iota64(b, sp, static_cast<int64_t>(i)), b.splat_int(pos.type, stride)));
    stride *= sp[i];
  }
  Dims map;
  for (size_t i = 0; i < n; ++i) map.push_back(t.rank() - n + i);
  return b.broadcast_in_dim(pos, t.dims, map);
}

Value scatter_add_planes(Builder& b, const Value& grad, const Value& pos, const TensorType& input, size_t n) {
  DType ct = compute_type(input.dtype);
  int64_t p = planes(input, n), per_plane = 1;
  for (int64_t d : spatial_dims(input, n)) per_plane *= d;
  int64_t m = grad.type.numel();
  Value zeros = b.splat_float(TensorType(ct, {p * per_plane}), 0.0);
  if (m == 0 || p * per_plane == 0) return b.reshape(b.convert(zeros, input.dtype), input.dims);
  int64_t per_grad_plane = m / p;
  // Global position = plane * per_plane + in-plane position.
  Value plane = iota64(b, {p, per_grad_plane}, 0);
  Value at = b.add(b.multiply(plane, b.splat_int(plane.type, per_plane)), b.reshape(pos, {p, per_grad_plane}));
  Value updates = b.reshape(b.convert(grad, ct), {m});
  TensorType elem(ct, {});
  hlo::RegionBody add = [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; };
  Value r = b.emit("scatter", {zeros, b.reshape(at, {m, 1}), updates},
                   "scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0], "
                   "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, "
                   "unique_indices = false",
                   {zeros.type}, {{{elem, elem}, add}})[0];
  return b.reshape(b.convert(r, input.dtype), input.dims);
}

}  // namespace torch_tpu::ops::pooling
