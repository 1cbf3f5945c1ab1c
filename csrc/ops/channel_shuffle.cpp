// channel_shuffle / native_channel_shuffle(self, groups): [N, C, *] viewed as
// [N, g, C/g, *], the two group dims swapped, flattened back.
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

Values channel_shuffle(Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  int64_t g = c.arg(1).i;
  if (x.type.rank() < 3 || g <= 0 || x.type.dims[1] % g != 0)
    throw std::invalid_argument(c.op + ": needs a [N, C, *] input with C divisible by groups");
  std::vector<int64_t> dims{x.type.dims[0], g, x.type.dims[1] / g};
  std::vector<int64_t> perm{0, 2, 1};
  for (int64_t d = 2; d < x.type.rank(); ++d) {
    dims.push_back(x.type.dims[d]);
    perm.push_back(d + 1);
  }
  return Values{b.reshape(b.transpose(b.reshape(x, dims), perm), c.outputs[0].dims)};
}
TORCH_TPU_ACCEPTS_COMPLEX("channel_shuffle", "native_channel_shuffle");
TORCH_TPU_LOWERING("channel_shuffle", channel_shuffle);
TORCH_TPU_LOWERING("native_channel_shuffle", channel_shuffle);

}  // namespace
}  // namespace torch_tpu::ops
