#include "hlo/builder.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace torch_tpu::hlo {

namespace {

std::string type_list(const std::vector<Value>& vs) {
  std::string s;
  for (size_t i = 0; i < vs.size(); ++i) s += (i ? ", " : "") + vs[i].type.str();
  return s;
}

std::string type_list(const std::vector<TensorType>& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + ts[i].str();
  return s;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("hlo::Builder: " + what);
}

// Float literal as the exact bit pattern of the element type (MLIR accepts hex
// literals of the type's width), so NaN/inf/-0 and every bit survive printing.
std::string float_literal(DType dtype, double v) {
  char buf[32];
  if (dtype == DType::F64) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    std::snprintf(buf, sizeof(buf), "0x%016llX", static_cast<unsigned long long>(bits));
  } else {
    float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    std::snprintf(buf, sizeof(buf), "0x%08X", bits);
  }
  return buf;
}

}  // namespace

std::string int_array(const std::vector<int64_t>& v) {
  std::string s = "array<i64";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : ": ") + std::to_string(v[i]);
  return s + ">";
}

std::string int_list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

Builder::Builder() : shared_(std::make_shared<Shared>()), indent_(4) {}

Builder::Builder(std::shared_ptr<Shared> shared, int indent)
    : shared_(std::move(shared)), indent_(indent) {}

std::string Builder::fresh_name() { return "%" + std::to_string(shared_->next_id++); }

Value Builder::parameter(const TensorType& type, int alias_output) {
  Value v{"%arg" + std::to_string(params_.size()), type};
  params_.emplace_back(type, alias_output);
  return v;
}

std::string Builder::region_text(const std::vector<TensorType>& arg_types, const RegionBody& body) {
  Builder inner(shared_, indent_ + 4);
  std::vector<Value> args;
  std::string header = std::string(indent_ + 2, ' ') + "^bb0(";
  for (size_t i = 0; i < arg_types.size(); ++i) {
    Value a{inner.fresh_name(), arg_types[i]};
    header += (i ? ", " : "") + a.name + ": " + a.type.str();
    args.push_back(a);
  }
  header += "):\n";
  std::vector<Value> yielded = body(inner, args);
  std::string ret = std::string(indent_ + 4, ' ') + "\"stablehlo.return\"(";
  for (size_t i = 0; i < yielded.size(); ++i) ret += (i ? ", " : "") + yielded[i].name;
  ret += ") : (" + type_list(yielded) + ") -> ()\n";
  return "{\n" + header + inner.body_.str() + ret + std::string(indent_, ' ') + "}";
}

std::vector<Value> Builder::emit(
    const std::string& op, const std::vector<Value>& operands, const std::string& attributes,
    const std::vector<TensorType>& results,
    const std::vector<std::pair<std::vector<TensorType>, RegionBody>>& regions) {
  std::vector<Value> out;
  std::string lhs;
  if (results.size() == 1) {
    out.push_back(Value{fresh_name(), results[0]});
    lhs = out[0].name;
  } else if (!results.empty()) {
    std::string base = fresh_name();
    lhs = base + ":" + std::to_string(results.size());
    for (size_t i = 0; i < results.size(); ++i)
      out.push_back(Value{base + "#" + std::to_string(i), results[i]});
  }
  std::string line = std::string(indent_, ' ');
  if (!lhs.empty()) line += lhs + " = ";
  line += "\"" + (op.find('.') == std::string::npos ? "stablehlo." + op : op) + "\"(";
  for (size_t i = 0; i < operands.size(); ++i) line += (i ? ", " : "") + operands[i].name;
  line += ")";
  if (!regions.empty()) {
    line += " (";
    for (size_t i = 0; i < regions.size(); ++i)
      line += (i ? ", " : "") + region_text(regions[i].first, regions[i].second);
    line += ")";
  }
  if (!attributes.empty()) line += " {" + attributes + "}";
  line += " : (" + type_list(operands) + ") -> ";
  line += results.size() == 1 ? results[0].str() : "(" + type_list(results) + ")";
  body_ << line << "\n";
  return out;
}

Value Builder::constant_float(DType dtype, double v) {
  if (is_complex(dtype)) {
    DType part = complex_component(dtype);
    return complex(constant_float(part, v), constant_float(part, 0));
  }
  if (!is_float(dtype)) {
    if (dtype == DType::Pred) return constant_bool(v != 0);
    return constant_int(dtype, static_cast<int64_t>(v));
  }
  Value c;
  if (dtype == DType::F16 || dtype == DType::BF16 || is_float8(dtype)) {
    c = convert(constant_float(DType::F32, v), dtype);
  } else {
    TensorType t(dtype, {});
    c = emit1("constant", {}, "value = dense<" + float_literal(dtype, v) + "> : " + t.str(), t);
  }
  return track_constant(c, v, c);
}

Value Builder::track_constant(const Value& v, double c, const Value& scalar) {
  shared_->float_constants[v.name] = {c, scalar};
  return v;
}

Value Builder::divide(const Value& a, const Value& b) {
  if (!is_float(a.type.dtype)) return binary("divide", a, b);
  const auto& rewritten = shared_->rewritten_in_quotients;
  Value num = a, den = b;
  if (auto p = rewritten.find(a.name); p != rewritten.end() && p->second == "divide") num = opaque(a);
  if (rewritten.count(b.name)) den = opaque(b);
  auto it = shared_->float_constants.find(b.name);
  if (it != shared_->float_constants.end()) {
    auto [c, scalar] = it->second;
    int exp = 0;
    bool power_of_two = std::isfinite(c) && c != 0 && std::frexp(std::fabs(c), &exp) == 0.5;
    if (std::isfinite(c) && c != 0 && !power_of_two)
      den = b.type.rank() == 0 ? opaque(scalar) : broadcast_in_dim(opaque(scalar), b.type.dims, {});
  }
  Value q = binary("divide", num, den);
  shared_->rewritten_in_quotients[q.name] = "divide";
  return q;
}

Value Builder::constant_int(DType dtype, int64_t v) {
  if (is_float(dtype)) return constant_float(dtype, static_cast<double>(v));
  if (dtype == DType::Pred) return constant_bool(v != 0);
  if (is_complex(dtype)) return constant_float(dtype, static_cast<double>(v));
  TensorType t(dtype, {});
  std::string lit = is_unsigned(dtype) ? std::to_string(static_cast<uint64_t>(v)) : std::to_string(v);
  return emit1("constant", {}, "value = dense<" + lit + "> : " + t.str(), t);
}

Value Builder::constant_bool(bool v) {
  TensorType t(DType::Pred, {});
  return emit1("constant", {}, std::string("value = dense<") + (v ? "true" : "false") + "> : " + t.str(), t);
}

Value Builder::splat_float(const TensorType& type, double v) {
  return broadcast_in_dim(constant_float(type.dtype, v), type.dims, {});
}

Value Builder::splat_int(const TensorType& type, int64_t v) {
  return broadcast_in_dim(constant_int(type.dtype, v), type.dims, {});
}

Value Builder::lowest(DType t) {
  if (is_float(t)) return constant_float(t, -std::numeric_limits<double>::infinity());
  if (t == DType::Pred) return constant_bool(false);
  if (is_unsigned(t)) return constant_int(t, 0);
  int bits = dtype_bits(t);
  return constant_int(t, bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1)));
}

Value Builder::highest(DType t) {
  if (is_float(t)) return constant_float(t, std::numeric_limits<double>::infinity());
  if (t == DType::Pred) return constant_bool(true);
  int bits = dtype_bits(t);
  if (is_unsigned(t)) return constant_int(t, bits == 64 ? -1 : (int64_t{1} << bits) - 1);
  return constant_int(t, bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1);
}

Value Builder::unary(const std::string& op, const Value& a) {
  Value r = emit1(op, {a}, "", a.type);
  if (op == "sqrt" || op == "rsqrt" || op == "exponential") shared_->rewritten_in_quotients[r.name] = op;
  return r;
}

Value Builder::binary(const std::string& op, const Value& a, const Value& b) {
  require(a.type == b.type, op + " operands differ: " + a.type.str() + " vs " + b.type.str());
  Value r = emit1(op, {a, b}, "", a.type);
  if (op == "power") shared_->rewritten_in_quotients[r.name] = op;
  return r;
}

Value Builder::compare(const Value& a, const Value& b, const std::string& direction) {
  require(a.type == b.type, "compare operands differ: " + a.type.str() + " vs " + b.type.str());
  DType d = a.type.dtype;
  const char* kind = is_float(d) || is_complex(d) ? "FLOAT" : is_unsigned(d) || d == DType::Pred ? "UNSIGNED" : "SIGNED";
  return emit1("compare", {a, b},
               "comparison_direction = #stablehlo<comparison_direction " + direction +
                   ">, compare_type = #stablehlo<comparison_type " + kind + ">",
               a.type.with_dtype(DType::Pred));
}

Value Builder::select(const Value& pred, const Value& on_true, const Value& on_false) {
  require(on_true.type == on_false.type, "select branches differ");
  return emit1("select", {pred, on_true, on_false}, "", on_true.type);
}

Value Builder::is_finite(const Value& a) {
  require(is_float(a.type.dtype), "is_finite takes a real float value: " + a.type.str());
  return emit1("is_finite", {a}, "", a.type.with_dtype(DType::Pred));
}

Value Builder::convert(const Value& a, DType to) {
  if (a.type.dtype == to) return a;
  if (to == DType::Pred) {  // PyTorch semantics: x != 0, not a truncation
    return compare(a, splat_int(a.type, 0), "NE");
  }
  // XLA converts only between complex types or from real to complex through
  // a component: build those from parts. Complex to real keeps the real part
  // (PyTorch's cast, which warns that the imaginary part is discarded).
  if (is_complex(a.type.dtype) && !is_complex(to)) return convert(real(a), to);
  if (!is_complex(a.type.dtype) && is_complex(to)) {
    Value re = convert(a, complex_component(to));
    return complex(re, splat_float(re.type, 0));
  }
  if (to == DType::F8E4M3FN) {
    // PyTorch's casts to float8_e4m3fn (no infinities) saturate at +-448,
    // infinities included; XLA's give NaN. NaN stays NaN (min/max propagate it).
    Value f = is_float(a.type.dtype) && !is_float8(a.type.dtype) ? a : convert(a, DType::F32);
    Value lim = splat_float(f.type, 448.0);
    return emit1("convert", {minimum(maximum(f, negate(lim)), lim)}, "", a.type.with_dtype(to));
  }
  // A float out of an integer type's range is undefined in C++. The CPU's
  // kernels (x86) truncate to int32 or int64 with cvtt, which gives the
  // type's minimum for NaN, infinities and anything out of range, and reach
  // the narrower types through int32 (uint8 from a double through int64),
  // wrapping (300.7 -> 44 for int8, -1.5 -> 255 for uint8, NaN -> 0). XLA
  // saturates and maps NaN to 0. (uint32, a barebones type, goes through
  // int64: right in range and for negatives, not for NaN or beyond.)
  if (is_float(a.type.dtype) && is_unsigned(to) && dtype_bits(to) <= 32) {
    bool via_64 = dtype_bits(to) == 32 || (to == DType::U8 && a.type.dtype == DType::F64);
    return convert(convert(a, via_64 ? DType::I64 : DType::I32), to);
  }
  if (is_float(a.type.dtype) && is_signed_int(to)) {
    if (dtype_bits(to) < 32) return convert(convert(a, DType::I32), to);
    Value f = dtype_bits(a.type.dtype) < 32 ? convert(a, DType::F32) : a;
    double limit = std::ldexp(1.0, dtype_bits(to) - 1);  // exact in every float type used here
    Value in_range = binary("and", compare(f, splat_float(f.type, -limit - 1), "GT"),
                            compare(f, splat_float(f.type, limit), "LT"));  // false for NaN
    Value r = emit1("convert", {f}, "", a.type.with_dtype(to));
    return select(in_range, r, broadcast_in_dim(lowest(to), r.type.dims, {}));
  }
  Value r = emit1("convert", {a}, "", a.type.with_dtype(to));
  // XLA's simplifier turns arithmetic on a converted bool into a select
  // (convert(p) / 0.0 -> p ? inf : 0), which drops the NaN and inf of
  // 0 / 0 and 0 * inf that PyTorch computes: a barrier keeps the arithmetic.
  if (a.type.dtype == DType::Pred && is_float(to)) return opaque(r);
  return r;
}

Value Builder::real(const Value& a) {
  if (!is_complex(a.type.dtype)) return a;
  return emit1("real", {a}, "", a.type.with_dtype(complex_component(a.type.dtype)));
}

Value Builder::imag(const Value& a) {
  if (!is_complex(a.type.dtype)) return splat_float(a.type, 0);
  return emit1("imag", {a}, "", a.type.with_dtype(complex_component(a.type.dtype)));
}

Value Builder::complex(const Value& re, const Value& im) {
  require(re.type == im.type && (re.type.dtype == DType::F32 || re.type.dtype == DType::F64),
          "complex parts must be f32 or f64 of one shape: " + re.type.str() + ", " + im.type.str());
  return emit1("complex", {re, im}, "", re.type.with_dtype(complex_of(re.type.dtype)));
}

Value Builder::bitcast_convert(const Value& a, const TensorType& to) {
  return emit1("bitcast_convert", {a}, "", to);
}

Value Builder::reshape(const Value& a, const std::vector<int64_t>& dims) {
  if (a.type.dims == dims) return a;
  TensorType t(a.type.dtype, dims);
  require(t.numel() == a.type.numel(), "reshape " + a.type.str() + " to " + t.str());
  return emit1("reshape", {a}, "", t);
}

Value Builder::transpose(const Value& a, const std::vector<int64_t>& permutation) {
  require(static_cast<int64_t>(permutation.size()) == a.type.rank(), "transpose rank");
  bool identity = true;
  std::vector<int64_t> dims;
  for (size_t i = 0; i < permutation.size(); ++i) {
    identity &= permutation[i] == static_cast<int64_t>(i);
    dims.push_back(a.type.dims.at(permutation[i]));
  }
  if (identity) return a;
  return emit1("transpose", {a}, "permutation = " + int_array(permutation), TensorType(a.type.dtype, dims));
}

Value Builder::broadcast_in_dim(const Value& a, const std::vector<int64_t>& result_dims,
                                const std::vector<int64_t>& dims) {
  require(static_cast<int64_t>(dims.size()) == a.type.rank(), "broadcast_in_dim rank");
  Value r = emit1("broadcast_in_dim", {a}, "broadcast_dimensions = " + int_array(dims), TensorType(a.type.dtype, result_dims));
  auto it = shared_->float_constants.find(a.name);
  if (it != shared_->float_constants.end() && a.type.rank() == 0) track_constant(r, it->second.first, it->second.second);
  return r;
}

Value Builder::broadcast_to(const Value& a, const std::vector<int64_t>& result_dims) {
  if (a.type.dims == result_dims) return a;
  int64_t shift = static_cast<int64_t>(result_dims.size()) - a.type.rank();
  require(shift >= 0, "broadcast_to: " + a.type.str() + " has more dims than the target");
  std::vector<int64_t> map, kept;
  bool squeeze = false;
  for (int64_t i = 0; i < a.type.rank(); ++i) {
    int64_t d = a.type.dims[i], r = result_dims[i + shift];
    require(d == r || d == 1, "broadcast_to: " + a.type.str() + " is not broadcastable");
    // Size-1 dims that expand must be dropped: broadcast_in_dim would keep them 1.
    if (d == 1 && r != 1) {
      squeeze = true;
    } else {
      map.push_back(i + shift);
      kept.push_back(d);
    }
  }
  Value src = squeeze ? reshape(a, kept) : a;
  return broadcast_in_dim(src, result_dims, map);
}

Value Builder::iota(const TensorType& type, int64_t dimension) {
  return emit1("iota", {}, "iota_dimension = " + std::to_string(dimension) + " : i64", type);
}

Value Builder::slice(const Value& a, const std::vector<int64_t>& start,
                     const std::vector<int64_t>& limit, const std::vector<int64_t>& strides) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < start.size(); ++i) {
    int64_t n = limit[i] - start[i];
    dims.push_back(n <= 0 ? 0 : (n + strides[i] - 1) / strides[i]);
  }
  return emit1("slice", {a},
               "start_indices = " + int_array(start) + ", limit_indices = " + int_array(limit) +
                   ", strides = " + int_array(strides),
               TensorType(a.type.dtype, dims));
}

Value Builder::dynamic_slice(const Value& a, const std::vector<Value>& starts,
                             const std::vector<int64_t>& sizes) {
  std::vector<Value> ops{a};
  ops.insert(ops.end(), starts.begin(), starts.end());
  return emit1("dynamic_slice", ops, "slice_sizes = " + int_array(sizes), TensorType(a.type.dtype, sizes));
}

Value Builder::dynamic_update_slice(const Value& a, const Value& update, const std::vector<Value>& starts) {
  std::vector<Value> ops{a, update};
  ops.insert(ops.end(), starts.begin(), starts.end());
  return emit1("dynamic_update_slice", ops, "", a.type);
}

Value Builder::concatenate(const std::vector<Value>& parts, int64_t dimension) {
  require(!parts.empty(), "concatenate of nothing");
  TensorType t = parts[0].type;
  t.dims[dimension] = 0;
  for (const Value& p : parts) t.dims[dimension] += p.type.dims[dimension];
  return emit1("concatenate", parts, "dimension = " + std::to_string(dimension) + " : i64", t);
}

Value Builder::pad(const Value& a, const Value& padding_value, const std::vector<int64_t>& low,
                   const std::vector<int64_t>& high, const std::vector<int64_t>& interior) {
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < a.type.rank(); ++i) {
    int64_t d = a.type.dims[i];
    dims.push_back(low[i] + high[i] + d + (d > 0 ? (d - 1) * interior[i] : 0));
  }
  return emit1("pad", {a, padding_value},
               "edge_padding_low = " + int_array(low) + ", edge_padding_high = " + int_array(high) +
                   ", interior_padding = " + int_array(interior),
               TensorType(a.type.dtype, dims));
}

Value Builder::gather_elements_1d(const Value& operand, const Value& indices) {
  require(operand.type.rank() == 1, "gather_elements_1d needs a 1-D operand");
  int64_t ivd = indices.type.rank();  // index vector dim past the end: scalar indices
  return emit1("gather", {operand, indices},
               "dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], "
               "index_vector_dim = " + std::to_string(ivd) + ">, slice_sizes = array<i64: 1>, "
               "indices_are_sorted = false",
               TensorType(operand.type.dtype, indices.type.dims));
}

Value Builder::scatter_elements_1d(const Value& operand, const Value& indices, const Value& updates,
                                   const std::string& combine) {
  require(operand.type.rank() == 1, "scatter_elements_1d needs a 1-D operand");
  int64_t ivd = indices.type.rank();
  TensorType elem(operand.type.dtype, {});
  RegionBody take_update = [combine](Builder& r, const std::vector<Value>& args) {
    if (combine.empty()) return std::vector<Value>{args[1]};
    return std::vector<Value>{r.binary(combine, args[0], args[1])};
  };
  return emit("scatter", {operand, indices, updates},
              "scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], "
              "scatter_dims_to_operand_dims = [0], index_vector_dim = " + std::to_string(ivd) + ">, "
              "indices_are_sorted = false, unique_indices = false",
              {operand.type}, {{{elem, elem}, take_update}})[0];
}

std::vector<Value> Builder::reduce(const std::vector<Value>& inputs, const std::vector<Value>& inits,
                                   const std::vector<int64_t>& dimensions, const RegionBody& body) {
  require(inputs.size() == inits.size() && !inputs.empty(), "reduce needs one init per input");
  std::vector<TensorType> results, region_args;
  for (const Value& in : inputs) {
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < in.type.rank(); ++i) {
      bool reduced = false;
      for (int64_t d : dimensions) reduced |= d == i;
      if (!reduced) dims.push_back(in.type.dims[i]);
    }
    results.emplace_back(in.type.dtype, dims);
  }
  for (const Value& in : inits) region_args.push_back(in.type);
  for (const Value& in : inits) region_args.push_back(in.type);
  std::vector<Value> ops = inputs;
  ops.insert(ops.end(), inits.begin(), inits.end());
  return emit("reduce", ops, "dimensions = " + int_array(dimensions), results, {{region_args, body}});
}

void Builder::define_function(const std::string& symbol, const std::string& text) {
  for (const auto& f : shared_->functions) {
    if (f.first == symbol) return;
  }
  shared_->functions.emplace_back(symbol, text);
}

std::vector<Value> Builder::call(const std::string& symbol, const std::vector<Value>& args,
                                 const std::vector<TensorType>& results) {
  return emit("func.call", args, "callee = @" + symbol, results);
}

std::string Builder::finish(const std::vector<Value>& results) {
  std::ostringstream m;
  m << "module @torch_tpu attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n";
  m << "  func.func public @main(";
  for (size_t i = 0; i < params_.size(); ++i) {
    m << (i ? ", " : "") << "%arg" << i << ": " << params_[i].first.str();
    if (params_[i].second >= 0) m << " {tf.aliasing_output = " << params_[i].second << " : i32}";
  }
  m << ") -> (" << type_list(results) << ") {\n";
  m << body_.str();
  m << "    \"func.return\"(";
  for (size_t i = 0; i < results.size(); ++i) m << (i ? ", " : "") << results[i].name;
  m << ") : (" << type_list(results) << ") -> ()\n  }\n";
  for (const auto& f : shared_->functions) m << f.second << "\n";
  m << "}\n";
  return m.str();
}

}  // namespace torch_tpu::hlo
