// embedding's backward. The forward (CompositeExplicitAutograd) is index_select.
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/type_promotion.h"

namespace torch_tpu::ops {
namespace {

// operand[indices[i], ...] += updates[i, ...] for a [V, D] operand, [N] indices
// and [N, D] updates. Indices outside [0, V) are dropped (XLA scatter semantics).
Value scatter_add_rows(Builder& b, const Value& operand, const Value& indices, const Value& updates) {
  TensorType elem(operand.type.dtype, {});
  hlo::RegionBody add = [](Builder& rb, const Values& a) { return Values{rb.add(a[0], a[1])}; };
  bool rows = operand.type.rank() == 2;
  std::string dims = rows ? "update_window_dims = [1], " : "";
  return b.emit("scatter", {operand, b.reshape(indices, {indices.type.dims[0], 1}), updates},
                "scatter_dimension_numbers = #stablehlo.scatter<" + dims +
                    "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, "
                    "indices_are_sorted = false, unique_indices = false",
                {operand.type}, {{{elem, elem}, add}})[0];
}

// embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)
TORCH_TPU_LOWERING("embedding_dense_backward", [](Builder& b, const OpCall& c, const Values& v) {
  const auto& out = c.outputs[0];  // [num_weights, D]
  const Value& indices_in = operand(c, v, 1);
  if (!hlo::is_integral(indices_in.type.dtype))
    throw std::invalid_argument(c.op + ": indices must be an integer tensor");
  if (out.rank() != 2) throw std::invalid_argument(c.op + ": expected a 2-D weight gradient");
  int64_t n = indices_in.type.numel(), d = out.dims[1];
  // Accumulate in f32 for half types: duplicate indices sum many rows.
  DType ct = compute_type(out.dtype);
  Value idx = b.reshape(b.convert(indices_in, DType::I64), {n});
  Value grad = b.reshape(b.convert(operand(c, v, 0), ct), {n, d});
  TensorType rows(ct, {n, d});
  int64_t padding = c.arg(3).i;
  if (padding >= 0) {  // rows of the padding index get no gradient (negative: none)
    Value pad = b.compare(idx, b.splat_int(idx.type, padding), "EQ");
    grad = b.select(b.broadcast_in_dim(pad, rows.dims, {0}), b.splat_float(rows, 0.0), grad);
  }
  if (c.arg(4).b) {  // scale_grad_by_freq: each row divided by its index's count
    TensorType counts_t(ct, {out.dims[0]});
    Value counts = scatter_add_rows(b, b.splat_float(counts_t, 0.0), idx, b.splat_float(TensorType(ct, {n}), 1.0));
    Value freq = b.gather_elements_1d(counts, idx);
    grad = b.divide(grad, b.broadcast_in_dim(freq, rows.dims, {0}));
  }
  Value gw = scatter_add_rows(b, b.splat_float(out.with_dtype(ct), 0.0), idx, grad);
  return Values{b.convert(gw, out.dtype)};
});

}  // namespace
}  // namespace torch_tpu::ops
