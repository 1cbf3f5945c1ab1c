// The arithmetic of the ragged_dot rows kernel (ragged_dot_rows.cpp): rows
// of one group times that group's [N, K] block, float32 or bfloat16 in
// memory, float32 in registers (as the StableHLO forms compute: convert to
// f32, dot, convert back).
//
// Up to 8 rows accumulate along K in 8 vector registers against one block
// row at a time, so the block is read once per 8 rows; the 8 totals come out
// of one shuffle-add tree instead of 8 horizontal sums. GCC/Clang vector
// extensions, compiled per instruction set by the caller's target_clones.
#pragma once

#include <cstdint>
#include <cstring>

namespace torch_tpu::host_kernels::rows_math {

typedef float v8 __attribute__((vector_size(32)));
typedef float v8_unaligned __attribute__((vector_size(32), aligned(4)));
typedef uint16_t v8_u16_unaligned __attribute__((vector_size(16), aligned(2)));
typedef uint32_t v8_u32 __attribute__((vector_size(32)));

// bfloat16 is the top half of a float32.
struct BF16 {
  uint16_t bits;
};

[[gnu::always_inline]] inline float to_float(float v) { return v; }
[[gnu::always_inline]] inline float to_float(BF16 v) {
  uint32_t u = uint32_t(v.bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

[[gnu::always_inline]] inline void store(float* p, float v) { *p = v; }
// Round to nearest even, NaN kept quiet: what StableHLO's convert f32 -> bf16 does.
[[gnu::always_inline]] inline void store(BF16* p, float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    p->bits = uint16_t((u >> 16) | 0x40);
    return;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  p->bits = uint16_t(u >> 16);
}

[[gnu::always_inline]] inline v8 load8(const float* p) { return *reinterpret_cast<const v8_unaligned*>(p); }
[[gnu::always_inline]] inline v8 load8(const BF16* p) {
  v8_u32 wide = __builtin_convertvector(*reinterpret_cast<const v8_u16_unaligned*>(p), v8_u32) << 16;
  return reinterpret_cast<v8&>(wide);
}

[[gnu::always_inline]] inline v8 pair_lanes(v8 a, v8 b) {
  return __builtin_shufflevector(a, b, 0, 8, 2, 10, 4, 12, 6, 14) + __builtin_shufflevector(a, b, 1, 9, 3, 11, 5, 13, 7, 15);
}
[[gnu::always_inline]] inline v8 pair_pairs(v8 a, v8 b) {
  return __builtin_shufflevector(a, b, 0, 1, 8, 9, 4, 5, 12, 13) + __builtin_shufflevector(a, b, 2, 3, 10, 11, 6, 7, 14, 15);
}
[[gnu::always_inline]] inline v8 pair_halves(v8 a, v8 b) {
  return __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11) + __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15);
}
// Lane r of the result: the sum of v[r]'s lanes.
[[gnu::always_inline]] inline v8 totals(const v8* v) {
  return pair_halves(pair_pairs(pair_lanes(v[0], v[1]), pair_lanes(v[2], v[3])),
                     pair_pairs(pair_lanes(v[4], v[5]), pair_lanes(v[6], v[7])));
}

// out[r, j] = x[r, :] . w[j, :] for R <= 8 rows of x (row stride k) and all
// n rows of w ([n, k], contiguous); out's row stride is n.
template <int R, typename E>
[[gnu::always_inline]] inline void rows_times_block(const E* x, const E* w, int64_t n, int64_t k, E* out) {
  const int64_t k8 = k & ~int64_t{7};
  for (int64_t j = 0; j < n; ++j) {
    const E* wj = w + j * k;
    v8 acc[8];
    for (int r = 0; r < 8; ++r) acc[r] = v8{};
    for (int64_t p = 0; p < k8; p += 8) {
      v8 wv = load8(wj + p);
      for (int r = 0; r < R; ++r) acc[r] += load8(x + r * k + p) * wv;
    }
    v8 sums = totals(acc);
    for (int r = 0; r < R; ++r) {
      float s = sums[r];
      for (int64_t p = k8; p < k; ++p) s += to_float(x[r * k + p]) * to_float(wj[p]);
      store(out + r * n + j, s);
    }
  }
}

// A group of `rows` rows: tiles of 8, then the rest.
template <typename E>
[[gnu::always_inline]] inline void group_times_block(const E* x, int64_t rows, const E* w, int64_t n, int64_t k,
                                                     E* out) {
  int64_t r = 0;
  for (; r + 8 <= rows; r += 8) rows_times_block<8>(x + r * k, w, n, k, out + r * n);
  const E* xr = x + r * k;
  E* o = out + r * n;
  switch (rows - r) {
    case 7: rows_times_block<7>(xr, w, n, k, o); break;
    case 6: rows_times_block<6>(xr, w, n, k, o); break;
    case 5: rows_times_block<5>(xr, w, n, k, o); break;
    case 4: rows_times_block<4>(xr, w, n, k, o); break;
    case 3: rows_times_block<3>(xr, w, n, k, o); break;
    case 2: rows_times_block<2>(xr, w, n, k, o); break;
    case 1: rows_times_block<1>(xr, w, n, k, o); break;
    default: break;
  }
}

}  // namespace torch_tpu::host_kernels::rows_math
