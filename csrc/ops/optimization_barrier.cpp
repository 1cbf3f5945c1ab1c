// tpu::optimization_barrier: its inputs, unchanged, through
// stablehlo.optimization_barrier, which XLA may not move computation across
// (e.g. to keep a rematerialized value from being merged with its original
// inside a compiled graph). In eager mode it is an identity program.
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

Values optimization_barrier_rule(Builder& b, const OpCall& c, const Values& v) {
  Values in;
  for (int k : c.arg(0).operands) {
    if (k < 0) throw std::invalid_argument(c.op + ": expected tensors, got None");
    in.push_back(v.at(k));
  }
  if (in.empty()) return {};
  std::vector<TensorType> types;
  for (const Value& x : in) types.push_back(x.type);
  return b.emit("stablehlo.optimization_barrier", in, "", types);
}

TORCH_TPU_LOWERING("tpu::optimization_barrier", optimization_barrier_rule);
TORCH_TPU_ACCEPTS_COMPLEX("tpu::optimization_barrier");

}  // namespace
}  // namespace torch_tpu::ops
