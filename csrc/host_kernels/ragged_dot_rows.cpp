// tpu::ragged_dot's decode form on the CPU plugin: rows of x in consecutive
// groups, each row times its group's [N, K] block (Transformers' [E, out, in]
// expert weights, read in place).
//
// Why a host kernel: XLA's CPU backend runs this as a loop over rows, each a
// vector times the whole block, so a group of s rows reads its block s times
// (from L2 after the first) at matrix-vector speed: ~2 ms for a decode-sized
// product (lhs [512, 256], 64 groups, blocks [256, 256]), against 0.35 ms for
// a dense matmul of the same FLOPs. Every multi-row form XLA offers copies or
// transposes each block first (docs/benchmarks.md, "Mixture of experts").
// Here up to 8 rows of a group accumulate along K in 8 vector registers
// against one block row at a time, so the block is read once per 8 rows:
// 1.1-1.4 ms for that product against XLA's 2.0 ms, 0.6 against 1.0 ms with
// K = 128 (one core; the weights come from DRAM, 16.8 MB a product), and
// the groups are split across the plugin's threads.
//
// Arithmetic (ragged_dot_rows_math.h): float32 with fused multiply-adds,
// summed along K in 8 lanes and then across them, so results match a float32
// dot to rounding, not bitwise; bfloat16 operands are widened on load and
// the result rounded to nearest even, as the StableHLO forms do.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "host_kernels/ragged_dot_rows_math.h"
#include "host_kernels/registry.h"

namespace torch_tpu::host_kernels {
namespace {

using rows_math::BF16;

// One clone per instruction set, picked when the library loads (AVX2 + FMA
// where the CPU has them).
#if defined(__x86_64__)
#define TORCH_TPU_PER_ISA [[gnu::target_clones("arch=x86-64-v3", "default")]]
#else
#define TORCH_TPU_PER_ISA
#endif

TORCH_TPU_PER_ISA void group_f32(const void* x, int64_t rows, const void* w, int64_t n, int64_t k, void* out) {
  rows_math::group_times_block(static_cast<const float*>(x), rows, static_cast<const float*>(w), n, k,
                               static_cast<float*>(out));
}

TORCH_TPU_PER_ISA void group_bf16(const void* x, int64_t rows, const void* w, int64_t n, int64_t k, void* out) {
  rows_math::group_times_block(static_cast<const BF16*>(x), rows, static_cast<const BF16*>(w), n, k,
                               static_cast<BF16*>(out));
}

ffi::Error* fail(ffi::CallFrame* frame, const std::string& message) {
  ffi::ErrorCreateArgs args{offsetof(ffi::ErrorCreateArgs, errc) + sizeof(int), nullptr, message.c_str(), 3};
  return frame->api->error_create(&args);
}

bool is_buffer(const ffi::Buffer* b, ffi::DataType dtype, int64_t rank) {
  return b != nullptr && b->dtype == dtype && b->rank == rank;
}

// One call's groups, handed out one at a time to the calling thread and to
// helpers on the plugin's intra-op pool. A helper that starts after the
// caller has taken every group returns without touching the buffers, so the
// caller waits only for groups a helper took; the job itself lives as long
// as its last holder.
struct Job {
  const char* x;
  const char* w;
  char* out;
  int64_t n = 0, k = 0, element_size = 4;
  void (*group_times_block)(const void* x, int64_t rows, const void* w, int64_t n, int64_t k, void* out);
  struct Group {
    int64_t index, lo, hi;
  };
  std::vector<Group> groups;  // the non-empty ones
  std::atomic<size_t> next{0}, finished{0};

  void work() {
    for (size_t i; (i = next.fetch_add(1)) < groups.size();) {
      const Group& g = groups[i];
      group_times_block(x + g.lo * k * element_size, g.hi - g.lo, w + g.index * n * k * element_size, n, k,
                        out + g.lo * n * element_size);
      finished.fetch_add(1, std::memory_order_release);
    }
  }
};

void run_helper(void* data) {
  auto* job = static_cast<std::shared_ptr<Job>*>(data);
  (*job)->work();
  delete job;
}

// Errors from the API calls below only mean "no helpers": dropped.
void discard(const ffi::Api* api, ffi::Error* error) {
  ffi::ErrorDestroyArgs args{sizeof(ffi::ErrorDestroyArgs), nullptr, error};
  api->error_destroy(&args);
}

// Below this many multiply-adds a call runs on the calling thread alone.
constexpr int64_t kParallelWork = int64_t{1} << 21;

// Helpers to start: the pool's other threads, when the plugin's FFI API has
// a pool for this call (0 if not).
int64_t helpers_available(ffi::CallFrame* frame) {
  const ffi::Api* api = frame->api;
  if (api->struct_size < offsetof(ffi::Api, thread_pool_num_threads) + sizeof(void*) ||
      api->thread_pool_num_threads == nullptr || api->thread_pool_schedule == nullptr)
    return 0;
  int64_t threads = 0;
  ffi::ThreadPoolNumThreadsArgs args{sizeof(ffi::ThreadPoolNumThreadsArgs), nullptr, frame->ctx, &threads};
  if (ffi::Error* e = api->thread_pool_num_threads(&args)) {
    discard(api, e);
    return 0;
  }
  return std::max<int64_t>(threads - 1, 0);
}

void run_in_parallel(ffi::CallFrame* frame, const std::shared_ptr<Job>& job, int64_t helpers) {
  const ffi::Api* api = frame->api;
  for (int64_t i = 0; i < helpers; ++i) {
    auto* held = new std::shared_ptr<Job>(job);
    ffi::ThreadPoolScheduleArgs args{sizeof(ffi::ThreadPoolScheduleArgs), nullptr, frame->ctx, &run_helper, held};
    if (ffi::Error* e = api->thread_pool_schedule(&args)) {
      discard(api, e);
      delete held;
      break;
    }
  }
  job->work();
  while (job->finished.load(std::memory_order_acquire) < job->groups.size()) std::this_thread::yield();
}

}  // namespace

// Args: x [M, K], w [G, N, K] (both f32 or both bf16), group_sizes [G]
// s32|s64; result [M, N] in x's dtype.
ffi::Error* ragged_dot_rows(ffi::CallFrame* frame) {
  if (frame->extension_start != nullptr && frame->extension_start->type == ffi::kExtensionMetadata) {
    ffi::Metadata* meta = reinterpret_cast<ffi::MetadataExtension*>(frame->extension_start)->metadata;
    meta->api_version.major_version = ffi::kApiMajor;
    meta->api_version.minor_version = ffi::kApiMinor;
    meta->traits = 0;
    return nullptr;
  }
  if (frame->stage != ffi::kExecute) return nullptr;
  if (frame->args.size != 3 || frame->rets.size != 1)
    return fail(frame, std::string(kRaggedDotRows) + ": expected 3 operands and 1 result");
  for (int i = 0; i < 3; ++i)
    if (frame->args.types[i] != ffi::kArgBuffer) return fail(frame, std::string(kRaggedDotRows) + ": operands must be buffers");
  if (frame->rets.types[0] != ffi::kRetBuffer) return fail(frame, std::string(kRaggedDotRows) + ": result must be a buffer");
  auto* x = static_cast<ffi::Buffer*>(frame->args.args[0]);
  auto* w = static_cast<ffi::Buffer*>(frame->args.args[1]);
  auto* sizes = static_cast<ffi::Buffer*>(frame->args.args[2]);
  auto* out = static_cast<ffi::Buffer*>(frame->rets.rets[0]);
  bool sizes_ok = is_buffer(sizes, ffi::kS32, 1) || is_buffer(sizes, ffi::kS64, 1);
  const ffi::DataType dtype = x != nullptr && x->dtype == ffi::kBF16 ? ffi::kBF16 : ffi::kF32;
  if (!is_buffer(x, dtype, 2) || !is_buffer(w, dtype, 3) || !sizes_ok || !is_buffer(out, dtype, 2))
    return fail(frame, std::string(kRaggedDotRows) +
                           ": expected x [M, K], w [G, N, K] and the result of one dtype (f32 or bf16), integer "
                           "sizes [G]");
  const int64_t m = x->dims[0], k = x->dims[1], num_groups = w->dims[0], n = w->dims[1];
  if (w->dims[2] != k || sizes->dims[0] != num_groups || out->dims[0] != m || out->dims[1] != n)
    return fail(frame, std::string(kRaggedDotRows) + ": operand shapes disagree");
  auto job = std::make_shared<Job>();
  job->x = static_cast<const char*>(x->data);
  job->w = static_cast<const char*>(w->data);
  job->out = static_cast<char*>(out->data);
  job->n = n;
  job->k = k;
  job->element_size = dtype == ffi::kBF16 ? 2 : 4;
  job->group_times_block = dtype == ffi::kBF16 ? &group_bf16 : &group_f32;
  const int64_t row_bytes = n * job->element_size;
  // Group g's rows: [clamp(end_g - s_g), max(that, clamp(end_g))) within
  // [0, M), as the StableHLO forms compute them; rows no group covers are zero.
  // (Negative sizes raise at the next synchronization, from a check the
  // lowering adds; here they only make empty groups.)
  int64_t covered_to = 0, end = 0, rows = 0;
  for (int64_t g = 0; g < num_groups; ++g) {
    int64_t s = sizes->dtype == ffi::kS32 ? static_cast<const int32_t*>(sizes->data)[g]
                                         : static_cast<const int64_t*>(sizes->data)[g];
    end += s;
    int64_t lo = std::clamp<int64_t>(end - s, 0, m);
    int64_t hi = std::max(lo, std::clamp<int64_t>(end, 0, m));
    if (lo > covered_to) std::memset(job->out + covered_to * row_bytes, 0, (lo - covered_to) * row_bytes);
    if (hi > lo) {
      job->groups.push_back({g, lo, hi});
      rows += hi - lo;
    }
    covered_to = std::max(covered_to, hi);
  }
  if (covered_to < m) std::memset(job->out + covered_to * row_bytes, 0, (m - covered_to) * row_bytes);
  int64_t helpers = rows * n * k >= kParallelWork && job->groups.size() > 1 ? helpers_available(frame) : 0;
  if (helpers > 0) {
    run_in_parallel(frame, job, helpers);
  } else {
    job->work();
  }
  return nullptr;
}

}  // namespace torch_tpu::host_kernels
