// The two ops torch.amp.GradScaler("tpu") runs each step: unscale the
// gradients while noting any inf/NaN, then grow or back off the scale. Both
// stay on the device (found_inf and the scale are device tensors), so a
// float16 training step never waits for the host. Semantics as CUDA's kernels:
// unscaling multiplies in float32 and casts back; a grown scale that is not
// finite is not taken.
#include <torch/library.h>

#include "eager/dtype_map.h"
#include "eager/executor.h"

namespace torch_tpu::eager {
namespace {

using hlo::Builder;
using hlo::DType;
using hlo::Value;

void check_single_float(const char* op, const char* name, const at::Tensor& t, const at::Tensor& like) {
  TORCH_CHECK(t.numel() == 1, op, ": ", name, " must be a 1-element tensor, got shape ", t.sizes());
  TORCH_CHECK(t.scalar_type() == at::kFloat, op, ": ", name, " must be a float tensor, got ", t.scalar_type());
  TORCH_CHECK(t.device() == like.device(), op, ": ", name, " is on ", t.device(), " but the tensors are on ",
              like.device());
}

// A 1-element value as 0-d, and back to `like`'s shape.
Value scalar_of(Builder& b, const Value& v) { return b.reshape(v, {}); }
Value shaped_like(Builder& b, const Value& s, const Value& like) { return b.reshape(s, like.type.dims); }

void non_finite_check_and_unscale(at::TensorList grads, at::Tensor& found_inf, const at::Tensor& inv_scale) {
  const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  if (grads.empty()) return;
  check_single_float(op, "found_inf", found_inf, grads[0]);
  check_single_float(op, "inv_scale", inv_scale, grads[0]);
  for (const at::Tensor& g : grads) {
    TORCH_CHECK(g.device() == found_inf.device(), op, ": a gradient is on ", g.device(), ", found_inf on ",
                found_inf.device());
    TORCH_CHECK(at::isFloatingType(g.scalar_type()), op, ": expected floating point gradients, got ",
                g.scalar_type());
    if (g.numel() == 0) continue;
    Invocation inv;
    inv.op = op;
    inv.device_index = g.device().index();
    inv.inputs = {g, found_inf, inv_scale};
    inv.targets = {g, found_inf};
    inv.infer_fresh = [] { return std::vector<FreshOutput>{}; };
    inv.lower = [](Builder& b, const std::vector<Value>& t, const std::vector<Value>&) {
      const Value& g = t[0];
      Value gf = b.convert(g, DType::F32);
      Value scale = b.broadcast_to(scalar_of(b, t[2]), gf.type.dims);
      Value unscaled = b.convert(b.multiply(gf, scale), g.type.dtype);
      Value finite = b.is_finite(gf);
      std::vector<int64_t> all(gf.type.rank());
      for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
      Value all_finite = all.empty() ? finite
                                     : b.reduce({finite}, {b.constant_bool(true)}, all,
                                                [](Builder& rb, const std::vector<Value>& a) {
                                                  return std::vector<Value>{rb.binary("and", a[0], a[1])};
                                                })[0];
      Value found = b.select(all_finite, scalar_of(b, t[1]), b.constant_float(DType::F32, 1.0));
      return std::vector<Value>{unscaled, shaped_like(b, found, t[1])};
    };
    execute(inv);
  }
}

at::Tensor& update_scale(at::Tensor& scale, at::Tensor& growth_tracker, const at::Tensor& found_inf,
                         double growth_factor, double backoff_factor, int64_t growth_interval) {
  const char* op = "_amp_update_scale_";
  check_single_float(op, "current_scale", scale, scale);
  check_single_float(op, "found_inf", found_inf, scale);
  TORCH_CHECK(growth_tracker.numel() == 1 && growth_tracker.scalar_type() == at::kInt, op,
              ": growth_tracker must be a 1-element int32 tensor, got ", growth_tracker.scalar_type(), " of shape ",
              growth_tracker.sizes());
  TORCH_CHECK(growth_tracker.device() == scale.device(), op, ": growth_tracker is on ", growth_tracker.device(),
              ", current_scale on ", scale.device());
  Invocation inv;
  inv.op = op;
  inv.device_index = scale.device().index();
  inv.inputs = {scale, growth_tracker, found_inf};
  inv.targets = {scale, growth_tracker};
  inv.scalars = {runtime_scalar_as(c10::Scalar(growth_factor), DType::F32),
                 runtime_scalar_as(c10::Scalar(backoff_factor), DType::F32),
                 runtime_scalar_as(c10::Scalar(growth_interval), DType::I32)};
  inv.infer_fresh = [] { return std::vector<FreshOutput>{}; };
  inv.lower = [](Builder& b, const std::vector<Value>& t, const std::vector<Value>& s) {
    Value cur = scalar_of(b, t[0]), tracker = scalar_of(b, t[1]), found = scalar_of(b, t[2]);
    Value inf = b.compare(found, b.constant_float(DType::F32, 0.0), "NE");
    Value successful = b.add(tracker, b.constant_int(DType::I32, 1));
    Value grow = b.compare(successful, s[2], "EQ");
    Value grown = b.multiply(cur, s[0]);
    Value grown_ok = b.is_finite(grown);
    Value zero = b.constant_int(DType::I32, 0);
    Value if_ok_scale = b.select(grow, b.select(grown_ok, grown, cur), cur);
    Value if_ok_tracker = b.select(grow, zero, successful);
    Value new_scale = b.select(inf, b.multiply(cur, s[1]), if_ok_scale);
    Value new_tracker = b.select(inf, zero, if_ok_tracker);
    return std::vector<Value>{shaped_like(b, new_scale, t[0]), shaped_like(b, new_tracker, t[1])};
  };
  execute(inv);
  return scale;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_", non_finite_check_and_unscale);
  m.impl("_amp_update_scale_", update_scale);
}

}  // namespace torch_tpu::eager
