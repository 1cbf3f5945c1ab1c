// FFTs: _fft_r2c, _fft_c2c and _fft_c2r (what torch.fft.* and stft decompose
// into) as stablehlo.fft over the transformed dims, moved innermost. XLA
// transforms at most 3 innermost dims at once, so more dims go in groups:
// complex-to-complex groups first (r2c: after the real last dim; c2r: before
// it). XLA scales inverse transforms by 1/n and PyTorch's `normalization`
// (0: none, 1: 1/sqrt(n), 2: 1/n) applies to either direction, so the rule
// multiplies by the ratio of the two.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/registry.h"

namespace torch_tpu::ops {
namespace {

// The permutation that moves `dims` (in order) innermost, and its inverse.
std::vector<int64_t> dims_last(int64_t rank, const std::vector<int64_t>& dims) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
  perm.insert(perm.end(), dims.begin(), dims.end());
  return perm;
}

std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

std::vector<int64_t> normalized_dims(const OpCall& c, int64_t rank) {
  std::vector<int64_t> dims;
  for (int64_t d : c.arg(1).ints) dims.push_back(d < 0 ? d + rank : d);
  for (int64_t d : dims)
    if (d < 0 || d >= rank) throw std::out_of_range(c.op + ": dimension out of range");
  return dims;
}

const char* kNames[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
enum Kind { kFft, kIfft, kRfft, kIrfft };

// One stablehlo.fft over the innermost `lengths.size()` (<= 3) dims.
Value fft(Builder& b, const Value& x, Kind kind, const std::vector<int64_t>& lengths, const TensorType& out) {
  std::string attr = std::string("fft_type = #stablehlo<fft_type ") + kNames[kind] + ">, fft_length = array<i64";
  for (size_t i = 0; i < lengths.size(); ++i) attr += (i ? ", " : ": ") + std::to_string(lengths[i]);
  return b.emit1("fft", {x}, attr + ">", out);
}

// Complex-to-complex over the innermost `count` dims, in groups of 3 from the inside.
Value fft_c2c_innermost(Builder& b, Value x, int64_t count, bool forward) {
  int64_t r = x.type.rank();
  for (int64_t done = 0; done < count;) {
    int64_t k = std::min<int64_t>(3, count - done);
    // Bring the group [r-done-k, r-done) innermost, transform, put it back.
    std::vector<int64_t> group;
    for (int64_t d = r - done - k; d < r - done; ++d) group.push_back(d);
    std::vector<int64_t> perm = dims_last(r, group);
    Value t = b.transpose(x, perm);
    std::vector<int64_t> lengths(t.type.dims.end() - k, t.type.dims.end());
    t = fft(b, t, forward ? kFft : kIfft, lengths, t.type);
    x = b.transpose(t, inverse(perm));
    done += k;
  }
  return x;
}

// Multiplies by PyTorch's normalization over n points, undoing XLA's 1/n of
// an inverse transform.
Value normalize(Builder& b, const Value& x, int64_t normalization, double n, bool xla_inverse) {
  double scale = normalization == 1 ? 1 / std::sqrt(n) : normalization == 2 ? 1 / n : 1;
  if (xla_inverse) scale *= n;
  if (scale == 1) return x;
  return b.multiply(x, b.splat_float(x.type, scale));
}

double points(const std::vector<int64_t>& sizes, const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(sizes[d]);
  return n;
}

TORCH_TPU_ACCEPTS_COMPLEX("_fft_c2c", "_fft_r2c", "_fft_c2r");

TORCH_TPU_LOWERING("_fft_c2c", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value x = to_type(b, operand(c, v, 0), out);
  std::vector<int64_t> dims = normalized_dims(c, out.rank());
  bool forward = c.arg(3).b;
  if (dims.empty()) return Values{x};
  std::vector<int64_t> perm = dims_last(out.rank(), dims);
  Value y = fft_c2c_innermost(b, b.transpose(x, perm), static_cast<int64_t>(dims.size()), forward);
  y = normalize(b, y, c.arg(2).i, points(out.dims, dims), !forward);
  return Values{b.transpose(y, inverse(perm))};
});

TORCH_TPU_LOWERING("_fft_r2c", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value x = operand(c, v, 0);
  x = b.convert(x, hlo::complex_component(out.dtype));
  std::vector<int64_t> dims = normalized_dims(c, x.type.rank());
  bool onesided = c.arg(3).b;
  double n = points(x.type.dims, dims);
  std::vector<int64_t> perm = dims_last(x.type.rank(), dims);
  Value t = b.transpose(x, perm);
  int64_t k = static_cast<int64_t>(dims.size());
  if (onesided) {
    // Real transform of the last dim, then complex transforms of the others.
    std::vector<int64_t> half = t.type.dims;
    half.back() = half.back() / 2 + 1;
    t = fft(b, t, kRfft, {t.type.dims.back()}, TensorType(out.dtype, half));
    t = b.transpose(t, inverse(perm));
    std::vector<int64_t> rest(dims.begin(), dims.end() - 1), rest_perm = dims_last(out.rank(), rest);
    t = b.transpose(fft_c2c_innermost(b, b.transpose(t, rest_perm), k - 1, true), inverse(rest_perm));
    return Values{normalize(b, t, c.arg(2).i, n, false)};
  }
  t = fft_c2c_innermost(b, b.convert(t, out.dtype), k, true);
  return Values{normalize(b, b.transpose(t, inverse(perm)), c.arg(2).i, n, false)};
});

TORCH_TPU_LOWERING("_fft_c2r", [](Builder& b, const OpCall& c, const Values& v) {
  const TensorType& out = c.outputs[0];
  Value x = operand(c, v, 0);
  std::vector<int64_t> dims = normalized_dims(c, x.type.rank());
  int64_t k = static_cast<int64_t>(dims.size());
  // Inverse complex transforms of all but the last dim, then the inverse real one.
  std::vector<int64_t> rest(dims.begin(), dims.end() - 1), rest_perm = dims_last(x.type.rank(), rest);
  x = b.transpose(fft_c2c_innermost(b, b.transpose(x, rest_perm), k - 1, false), inverse(rest_perm));
  std::vector<int64_t> perm = dims_last(x.type.rank(), {dims.back()});
  Value t = b.transpose(x, perm);
  std::vector<int64_t> real_dims = t.type.dims;
  real_dims.back() = out.dims[dims.back()];
  // XLA's IRFFT reads exactly n/2+1 points (PyTorch's last_dim_size // 2 + 1).
  t = fft(b, t, kIrfft, {real_dims.back()}, TensorType(out.dtype, real_dims));
  t = b.transpose(t, inverse(perm));
  return Values{normalize(b, t, c.arg(2).i, points(out.dims, dims), true)};
});

}  // namespace
}  // namespace torch_tpu::ops
