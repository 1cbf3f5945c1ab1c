// Lowering rules that only compiled graphs need: views, copies and factories.
// Eager runs these ops as metadata changes or in its own kernels (view_ops,
// copy, tensor_factories), so they must not enter the shared ops/ registry,
// which would register an eager boxed kernel for each; in a functional graph
// every one of them is a value-producing op like any other.
#pragma once
#include <string>

#include "ops/registry.h"

namespace torch_tpu::graph {

// The graph-only rule for `op` ("view", "slice.Tensor"), or nullptr.
const ops::LoweringRule* find_structural_rule(const std::string& op);
std::vector<std::string> structural_ops();

}  // namespace torch_tpu::graph
