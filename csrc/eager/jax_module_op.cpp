#include "eager/jax_module_op.h"

#include <c10/util/Exception.h>

#include "eager/dtype_map.h"
#include "eager/executor.h"
#include "ops/view_lowering.h"

namespace torch_tpu::eager {

std::vector<at::Tensor> run_module_call(const ModuleCall& call, const std::vector<at::Tensor>& inputs) {
  const std::string op = "jax_op " + call.name;
  TORCH_CHECK(call.result_dtypes.size() == call.result_sizes.size(), op, ": one dtype per result size");
  TORCH_CHECK(!inputs.empty(), op, ": a kernel needs at least one tpu tensor input (it names the device)");
  for (const auto& t : inputs) {
    TORCH_CHECK(t.defined() && t.device().is_privateuseone(), op, ": expected tpu tensors, got one on ",
                t.defined() ? t.device().str() : std::string("(undefined)"));
    TORCH_CHECK(t.device() == inputs[0].device(), op, ": inputs on different devices (", inputs[0].device(),
                " and ", t.device(), ")");
  }
  const size_t n = call.result_dtypes.size();
  std::vector<bool> aliased(n, false);
  Invocation inv;
  for (const auto& [i, j] : call.aliases) {
    TORCH_CHECK(i >= 0 && i < static_cast<int>(inputs.size()) && j >= 0 && j < static_cast<int>(n) && !aliased[j],
                op, ": bad donation pair (input ", i, ", result ", j, ")");
    const at::Tensor& target = inputs[i];
    TORCH_CHECK(target.scalar_type() == call.result_dtypes[j] && target.sizes().vec() == call.result_sizes[j], op,
                ": donated input ", i, " (", target.scalar_type(), target.sizes(), ") cannot hold result ", j, " (",
                call.result_dtypes[j], c10::IntArrayRef(call.result_sizes[j]), ")");
    aliased[j] = true;
    inv.targets.push_back(target);
  }
  inv.op = op;
  inv.static_key = call.fingerprint;
  inv.inputs = inputs;
  inv.device_index = inputs[0].device().index();
  inv.infer_fresh = [&]() {
    std::vector<FreshOutput> out;
    for (size_t j = 0; j < n; ++j) {
      if (!aliased[j])
        out.push_back(FreshOutput{call.result_dtypes[j], call.result_sizes[j],
                                  ops::contiguous_strides(call.result_sizes[j])});
    }
    return out;
  };
  inv.lower = [&](hlo::Builder& b, const std::vector<hlo::Value>& t, const std::vector<hlo::Value>&) {
    std::vector<hlo::TensorType> types;
    for (size_t j = 0; j < n; ++j) types.emplace_back(to_hlo(call.result_dtypes[j], "jax_op"), call.result_sizes[j]);
    b.define_function(call.symbol, call.functions);
    std::vector<hlo::Value> args(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(inputs.size()));
    std::vector<hlo::Value> results = b.call(call.symbol, args, types);
    // Targets first (the executor's order), then the fresh results.
    std::vector<hlo::Value> ordered;
    for (const auto& alias : call.aliases) ordered.push_back(results[alias.second]);
    for (size_t j = 0; j < n; ++j) {
      if (!aliased[j]) ordered.push_back(results[j]);
    }
    return ordered;
  };
  return execute(inv);
}

}  // namespace torch_tpu::eager
