// Emits one StableHLO function (`@main`) as MLIR text, in the generic op
// form ("stablehlo.add"(...) {...} : (...) -> ...): one spelling for every op,
// stable across StableHLO versions, and printable without MLIR libraries.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hlo/tensor_type.h"

namespace torch_tpu::hlo {

class Builder;
// Builds the body of a region (reduce, scatter, sort comparators) from its
// block arguments and returns the values the region yields.
using RegionBody = std::function<std::vector<Value>(Builder&, const std::vector<Value>&)>;

class Builder {
 public:
  Builder();

  // A function argument; `alias_output` >= 0 donates it to that output.
  Value parameter(const TensorType& type, int alias_output = -1);

  // --- constants -----------------------------------------------------------
  Value constant_float(DType dtype, double v);    // 0-d; any dtype
  Value constant_int(DType dtype, int64_t v);     // 0-d; any dtype
  Value constant_bool(bool v);                    // 0-d i1
  Value splat_float(const TensorType& type, double v);  // constant broadcast to type
  // The dtype's smallest / largest value (-inf / +inf for floats; false / true for i1).
  Value lowest(DType t);
  Value highest(DType t);
  Value splat_int(const TensorType& type, int64_t v);

  // --- elementwise ---------------------------------------------------------
  Value unary(const std::string& op, const Value& a);  // "negate", "exponential", ...
  Value binary(const std::string& op, const Value& a, const Value& b);  // same types
  Value add(const Value& a, const Value& b) { return binary("add", a, b); }
  Value subtract(const Value& a, const Value& b) { return binary("subtract", a, b); }
  Value multiply(const Value& a, const Value& b) { return binary("multiply", a, b); }
  // a / b, rounded once as the CPU's quotient. XLA's simplifier rewrites
  // A / c into A * (1 / c) (c a constant that is not a power of two),
  // (A / B) / C into A / (B * C), A / (B / C) into (A * C) / B, and
  // A / sqrt(B), A / exp(B), A / pow(B, C) into products, each off by a
  // rounding: such operands go through `opaque`.
  Value divide(const Value& a, const Value& b);
  Value maximum(const Value& a, const Value& b) { return binary("maximum", a, b); }
  Value minimum(const Value& a, const Value& b) { return binary("minimum", a, b); }
  Value negate(const Value& a) { return unary("negate", a); }
  // direction: EQ NE LT LE GT GE; the comparison type follows the dtype.
  Value compare(const Value& a, const Value& b, const std::string& direction);
  Value select(const Value& pred, const Value& on_true, const Value& on_false);
  Value is_finite(const Value& a);  // pred: neither inf nor NaN (a real float value)
  // `a` unchanged, but XLA's simplifier cannot see through it (x + 0 -> x
  // would drop a -0; a constant divisor would become a multiply).
  Value opaque(const Value& a) { return emit1("optimization_barrier", {a}, "", a.type); }
  Value convert(const Value& a, DType to);  // no-op when already `to`; complex to real keeps the real part
  Value real(const Value& a);                // component of a complex value (identity for real values)
  Value imag(const Value& a);                // zeros for real values
  Value complex(const Value& re, const Value& im);
  Value bitcast_convert(const Value& a, const TensorType& to);

  // --- shape ---------------------------------------------------------------
  Value reshape(const Value& a, const std::vector<int64_t>& dims);  // no-op if same
  Value transpose(const Value& a, const std::vector<int64_t>& permutation);
  // `dims[i]` is the result dimension that operand dimension i maps to.
  Value broadcast_in_dim(const Value& a, const std::vector<int64_t>& result_dims,
                         const std::vector<int64_t>& dims);
  // Numpy-style broadcast of `a` to `result_dims` (trailing alignment).
  Value broadcast_to(const Value& a, const std::vector<int64_t>& result_dims);
  Value iota(const TensorType& type, int64_t dimension);
  Value slice(const Value& a, const std::vector<int64_t>& start,
              const std::vector<int64_t>& limit, const std::vector<int64_t>& strides);
  // `starts` are 0-d integer values, one per dimension.
  Value dynamic_slice(const Value& a, const std::vector<Value>& starts,
                      const std::vector<int64_t>& sizes);
  Value dynamic_update_slice(const Value& a, const Value& update, const std::vector<Value>& starts);
  Value concatenate(const std::vector<Value>& parts, int64_t dimension);
  Value pad(const Value& a, const Value& padding_value, const std::vector<int64_t>& low,
            const std::vector<int64_t>& high, const std::vector<int64_t>& interior);

  // Element gather from a 1-D operand: result[i...] = operand[indices[i...]].
  Value gather_elements_1d(const Value& operand, const Value& indices);
  // Element scatter into a 1-D operand: operand[indices[i...]] = updates[i...],
  // or, with `combine` a binary op name ("add", "maximum"), combined into it.
  Value scatter_elements_1d(const Value& operand, const Value& indices, const Value& updates,
                            const std::string& combine = "");

  // Reduces `inputs` over `dimensions` with `body` (args: accumulators then elements).
  std::vector<Value> reduce(const std::vector<Value>& inputs, const std::vector<Value>& inits,
                            const std::vector<int64_t>& dimensions, const RegionBody& body);

  // Escape hatch for ops without a method yet: generic form with raw attribute
  // text (e.g. "dimension = 0 : i64") and result types.
  std::vector<Value> emit(const std::string& op, const std::vector<Value>& operands,
                          const std::string& attributes, const std::vector<TensorType>& results,
                          const std::vector<std::pair<std::vector<TensorType>, RegionBody>>& regions = {});
  Value emit1(const std::string& op, const std::vector<Value>& operands,
              const std::string& attributes, const TensorType& result) {
    return emit(op, operands, attributes, {result})[0];
  }

  // A private function of the module, given whole as MLIR text (a kernel
  // traced elsewhere, e.g. by JAX); defined once per symbol however often
  // it is called. Its text must name itself @`symbol`.
  void define_function(const std::string& symbol, const std::string& text);
  // "func.call" of a function defined above.
  std::vector<Value> call(const std::string& symbol, const std::vector<Value>& args,
                          const std::vector<TensorType>& results);

  // The complete module with `results` returned from @main.
  std::string finish(const std::vector<Value>& results);

  size_t num_parameters() const { return params_.size(); }

 private:
  struct Shared {
    int next_id = 0;
    std::vector<std::pair<std::string, std::string>> functions;  // (symbol, text), in definition order
    // Float values that are a constant or a broadcast of one: name -> (value, the 0-d constant).
    std::unordered_map<std::string, std::pair<double, Value>> float_constants;
    // Values made by an op whose quotient XLA rewrites (divide, sqrt, rsqrt, exponential, power): name -> op.
    std::unordered_map<std::string, std::string> rewritten_in_quotients;
  };
  // Records `v` as the constant `c` (or a broadcast of its 0-d `scalar`).
  Value track_constant(const Value& v, double c, const Value& scalar);
  Builder(std::shared_ptr<Shared> shared, int indent);
  std::string fresh_name();
  std::string region_text(const std::vector<TensorType>& arg_types, const RegionBody& body);

  std::shared_ptr<Shared> shared_;
  int indent_ = 4;
  std::ostringstream body_;
  std::vector<std::pair<TensorType, int>> params_;
};

std::string int_array(const std::vector<int64_t>& v);  // "array<i64: 1, 2>"
std::string int_list(const std::vector<int64_t>& v);   // "[1, 2]"

}  // namespace torch_tpu::hlo
