// max_unpool2d(self, indices, output_size) and max_unpool3d(self, indices,
// output_size, stride, padding): each value of a plane is written to its
// flat in-plane index of the (zero) output plane. Where several values target
// one element the CPU's sequential loop keeps the last, so the rule scatters
// the source position with `maximum` and then gathers that source's value:
// deterministic and exactly the CPU's choice. An index outside the output
// plane raises a RuntimeError at the next synchronization, like the CPU.
#include <stdexcept>
#include <string>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"
#include "ops/runtime_check.h"

namespace torch_tpu::ops {
namespace {

Values max_unpool(Builder& b, const OpCall& c, const Values& v, int64_t n) {
  const Value& x = operand(c, v, 0);
  const Value& idx = operand(c, v, 1);
  const TensorType& out = c.outputs[0];
  if (out.rank() < n + 1 || x.type.rank() != out.rank())
    throw std::invalid_argument(c.op + ": unexpected input rank " + x.type.str());
  int64_t planes = 1, in_plane = 1, out_plane = 1;
  for (int64_t d = 0; d < out.rank() - n; ++d) planes *= out.dims[d];
  for (int64_t d = out.rank() - n; d < out.rank(); ++d) {
    in_plane *= x.type.dims[d];
    out_plane *= out.dims[d];
  }
  int64_t m = planes * in_plane;
  if (out.numel() == 0 || m == 0) return Values{b.splat_float(out, 0)};
  TensorType pos_t(DType::I64, {planes, in_plane});
  Value at = b.reshape(b.convert(idx, DType::I64), {planes, in_plane});
  Value bad = b.binary("or", b.compare(at, b.splat_int(pos_t, 0), "LT"),
                       b.compare(at, b.splat_int(pos_t, out_plane), "GE"));
  std::vector<int64_t> both{0, 1};
  add_runtime_check(b.reduce({bad}, {b.constant_bool(false)}, both,
                             [](Builder& r, const Values& a) { return Values{r.binary("or", a[0], a[1])}; })[0],
                    CheckKind::Runtime,
                    "Found an invalid max index (output volumes are of size " + std::to_string(out_plane) + ")");
  // Global target = plane * out_plane + index; a bad index targets -1, which scatter skips.
  Value target = b.add(b.multiply(b.iota(pos_t, 0), b.splat_int(pos_t, out_plane)), at);
  target = b.reshape(b.select(bad, b.splat_int(pos_t, -1), target), {m});
  TensorType flat_out(DType::I64, {planes * out_plane});
  Value source = b.iota(TensorType(DType::I64, {m}), 0);
  Value src = b.scatter_elements_1d(b.splat_int(flat_out, -1), target, source, "maximum");
  Value taken = b.compare(src, b.splat_int(flat_out, 0), "GE");
  Value vals = b.gather_elements_1d(b.reshape(x, {m}), b.maximum(src, b.splat_int(flat_out, 0)));
  Value r = b.select(taken, vals, b.splat_float(vals.type, 0));
  return Values{b.reshape(r, out.dims)};
}

TORCH_TPU_LOWERING("max_unpool2d", [](Builder& b, const OpCall& c, const Values& v) { return max_unpool(b, c, v, 2); });
TORCH_TPU_LOWERING("max_unpool3d", [](Builder& b, const OpCall& c, const Values& v) { return max_unpool(b, c, v, 3); });

}  // namespace
}  // namespace torch_tpu::ops
