// The host kernels (csrc/host_kernels) called directly with call frames we
// build (shapes, group layouts, the thread-pool protocol, errors, the
// metadata query), and once through the CPU plugin: registered with its FFI
// extension and called from a compiled program.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "host_kernels/registry.h"
#include "pjrt/ffi_extension.h"
#include "pjrt_test_env.h"

namespace torch_tpu::host_kernels {
namespace {

// A fake XLA FFI API: records created errors; an optional thread pool.
struct FakeApi {
  ffi::Api api{};
  static inline std::string last_error;
  static inline std::vector<std::pair<ffi::Task, void*>> deferred;  // tasks run after the call returns
  static inline int pool_threads = 0;
  static inline bool run_on_threads = false;
  static inline std::vector<std::thread> threads;

  static ffi::Error* create_error(ffi::ErrorCreateArgs* a) {
    last_error = a->message;
    return reinterpret_cast<ffi::Error*>(&last_error);
  }
  static void destroy_error(ffi::ErrorDestroyArgs*) {}
  static ffi::Error* num_threads(ffi::ThreadPoolNumThreadsArgs* a) {
    *a->num_threads = pool_threads;
    return nullptr;
  }
  static ffi::Error* schedule(ffi::ThreadPoolScheduleArgs* a) {
    if (run_on_threads) {
      threads.emplace_back(a->task, a->data);
    } else {
      deferred.emplace_back(a->task, a->data);
    }
    return nullptr;
  }

  explicit FakeApi(bool with_pool) {
    api.struct_size = with_pool ? sizeof(ffi::Api) : offsetof(ffi::Api, error_get_message);
    api.error_create = &create_error;
    api.error_destroy = &destroy_error;
    api.thread_pool_num_threads = &num_threads;
    api.thread_pool_schedule = &schedule;
  }
};

struct Case {
  int64_t m, k, n;
  std::vector<int64_t> sizes;
  bool int64_sizes = false;
};

// out rows of group g = x rows @ w[g]^T by the running sum, cut at M; others zero.
std::vector<float> reference(const std::vector<float>& x, const std::vector<float>& w, const Case& c) {
  std::vector<float> out(c.m * c.n, 0.0f);
  int64_t start = 0;
  for (size_t g = 0; g < c.sizes.size(); ++g) {
    for (int64_t r = start; r < std::min(c.m, start + c.sizes[g]); ++r)
      for (int64_t j = 0; j < c.n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < c.k; ++p) s += double(x[r * c.k + p]) * w[(g * c.n + j) * c.k + p];
        out[r * c.n + j] = float(s);
      }
    start += c.sizes[g];
  }
  return out;
}

// The call frame XLA would pass for operands x, w, sizes and result out.
struct Frame {
  ffi::ArgType arg_types[3] = {ffi::kArgBuffer, ffi::kArgBuffer, ffi::kArgBuffer};
  ffi::RetType ret_types[1] = {ffi::kRetBuffer};
  void* args[3];
  void* rets[1];
  ffi::CallFrame f{};
  Frame(FakeApi& api, ffi::Buffer* x, ffi::Buffer* w, ffi::Buffer* sizes, ffi::Buffer* out)
      : args{x, w, sizes}, rets{out} {
    f.struct_size = sizeof(f);
    f.api = &api.api;
    f.stage = ffi::kExecute;
    f.args = {sizeof(ffi::Args), nullptr, 3, arg_types, args};
    f.rets = {sizeof(ffi::Rets), nullptr, 1, ret_types, rets};
  }
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
};

// Runs the kernel on `c` with `api`; returns the output and the error message ("" for none).
std::pair<std::vector<float>, std::string> call(const Case& c, const std::vector<float>& x,
                                                const std::vector<float>& w, FakeApi& api,
                                                std::vector<float>* out_storage = nullptr) {
  int64_t g = c.sizes.size();
  std::vector<int32_t> s32(c.sizes.begin(), c.sizes.end());
  std::vector<int64_t> s64(c.sizes);
  std::vector<float> local(c.m * c.n, -7.0f);  // garbage: every element must be written
  std::vector<float>& out = out_storage ? *out_storage : local;
  out.assign(c.m * c.n, -7.0f);
  int64_t xd[2] = {c.m, c.k}, wd[3] = {g, c.n, c.k}, sd[1] = {g}, od[2] = {c.m, c.n};
  ffi::Buffer bx{sizeof(ffi::Buffer), nullptr, ffi::kF32, const_cast<float*>(x.data()), 2, xd};
  ffi::Buffer bw{sizeof(ffi::Buffer), nullptr, ffi::kF32, const_cast<float*>(w.data()), 3, wd};
  ffi::Buffer bs{sizeof(ffi::Buffer), nullptr, c.int64_sizes ? ffi::kS64 : ffi::kS32,
                 c.int64_sizes ? static_cast<void*>(s64.data()) : static_cast<void*>(s32.data()), 1, sd};
  ffi::Buffer bo{sizeof(ffi::Buffer), nullptr, ffi::kF32, out.data(), 2, od};
  Frame frame(api, &bx, &bw, &bs, &bo);
  FakeApi::last_error.clear();
  ffi::Error* e = all().at(0).handler(&frame.f);
  return {out, e ? FakeApi::last_error : ""};
}

std::pair<std::vector<float>, std::vector<float>> inputs(const Case& c, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> x(c.m * c.k), w(c.sizes.size() * c.n * c.k);
  for (float& v : x) v = d(rng);
  for (float& v : w) v = d(rng);
  return {x, w};
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, int64_t k) {
  ASSERT_EQ(got.size(), want.size());
  double tol = 1e-5 * std::max<int64_t>(1, k / 8);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << "element " << i;
}

const std::vector<Case> kCases = {
    {16, 8, 12, {3, 0, 5, 8}},
    {37, 6, 7, {3, 0, 20, 9, 1}},            // K < 8 lanes; a group of 20 rows: 8 + 8 + 4
    {64, 13, 10, {5, 0, 9, 1, 0, 13, 2, 7, 0, 4, 8, 3, 0, 6, 1, 2}, true},  // K tail; sum 61 < 64
    {20, 9, 5, {10, 15, 4}},                 // sum 29 > 20: cut at M
    {24, 5, 3, {0, 0, 0}},                   // no rows at all
    {0, 4, 3, {0, 0}},                       // M = 0
    {512, 64, 72, std::vector<int64_t>(64, 8)},  // 2.4M multiply-adds: past the threading threshold
};

TEST(HostKernelRaggedDotRows, MatchesTheLoopOnTheCallingThread) {
  FakeApi api(/*with_pool=*/false);
  for (const Case& c : kCases) {
    auto [x, w] = inputs(c, 1);
    auto [out, error] = call(c, x, w, api);
    EXPECT_EQ(error, "");
    expect_near_all(out, reference(x, w, c), c.k);
  }
}

TEST(HostKernelRaggedDotRows, SplitsGroupsWithPoolThreads) {
  FakeApi api(/*with_pool=*/true);
  FakeApi::pool_threads = 3;
  FakeApi::run_on_threads = true;
  for (const Case& c : kCases) {
    auto [x, w] = inputs(c, 2);
    auto [out, error] = call(c, x, w, api);
    EXPECT_EQ(error, "");
    expect_near_all(out, reference(x, w, c), c.k);
  }
  for (std::thread& t : FakeApi::threads) t.join();
  FakeApi::threads.clear();
  FakeApi::run_on_threads = false;
}

TEST(HostKernelRaggedDotRows, HelpersThatStartAfterTheCallTouchNothing) {
  // A busy pool runs the helpers only after the call has returned: the
  // calling thread did every group, and the late helpers must not write the
  // (by then reused) output.
  FakeApi api(/*with_pool=*/true);
  FakeApi::pool_threads = 2;
  const Case& c = kCases.back();
  auto [x, w] = inputs(c, 3);
  std::vector<float> out;
  auto result = call(c, x, w, api, &out);
  EXPECT_EQ(result.second, "");
  expect_near_all(out, reference(x, w, c), c.k);
  ASSERT_EQ(FakeApi::deferred.size(), 1u);
  std::fill(out.begin(), out.end(), 5.0f);
  for (auto& [task, data] : FakeApi::deferred) task(data);
  FakeApi::deferred.clear();
  for (float v : out) ASSERT_EQ(v, 5.0f);
}

uint16_t to_bf16_bits(float f) {  // round to nearest even (finite inputs)
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float from_bf16_bits(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(HostKernelRaggedDotRows, Bfloat16WidensAndRoundsLikeStablehlo) {
  // bfloat16 in memory, float32 sums, each result rounded to nearest even;
  // a NaN in a row makes that row's results NaN.
  FakeApi api(/*with_pool=*/false);
  Case c{37, 13, 9, {3, 0, 20, 9, 1}};
  auto [xf, wf] = inputs(c, 6);
  std::vector<uint16_t> x(xf.size()), w(wf.size()), out(c.m * c.n, 0xffff);
  for (size_t i = 0; i < x.size(); ++i) x[i] = to_bf16_bits(xf[i]);
  for (size_t i = 0; i < w.size(); ++i) w[i] = to_bf16_bits(wf[i]);
  for (size_t i = 0; i < x.size(); ++i) xf[i] = from_bf16_bits(x[i]);
  for (size_t i = 0; i < w.size(); ++i) wf[i] = from_bf16_bits(w[i]);
  const float nan = std::nanf("");
  x[4 * c.k + 2] = 0x7fc0;  // row 4 (group 2) holds a NaN
  xf[4 * c.k + 2] = nan;
  std::vector<int32_t> sizes(c.sizes.begin(), c.sizes.end());
  int64_t xd[2] = {c.m, c.k}, wd[3] = {int64_t(c.sizes.size()), c.n, c.k}, sd[1] = {int64_t(c.sizes.size())},
          od[2] = {c.m, c.n};
  ffi::Buffer bx{sizeof(ffi::Buffer), nullptr, ffi::kBF16, x.data(), 2, xd};
  ffi::Buffer bw{sizeof(ffi::Buffer), nullptr, ffi::kBF16, w.data(), 3, wd};
  ffi::Buffer bs{sizeof(ffi::Buffer), nullptr, ffi::kS32, sizes.data(), 1, sd};
  ffi::Buffer bo{sizeof(ffi::Buffer), nullptr, ffi::kBF16, out.data(), 2, od};
  Frame frame(api, &bx, &bw, &bs, &bo);
  ASSERT_EQ(all().at(0).handler(&frame.f), nullptr) << FakeApi::last_error;
  std::vector<float> want = reference(xf, wf, c);
  for (int64_t i = 0; i < c.m * c.n; ++i) {
    float got = from_bf16_bits(out[i]);
    if (i / c.n == 4) {
      ASSERT_TRUE(std::isnan(got)) << "element " << i;
      continue;
    }
    // Rounded to nearest: within half a bfloat16 step of the exact sum, plus
    // float32 summation error (truncating would miss by up to a whole step).
    float half_step = want[i] == 0 ? 0 : std::ldexp(0.5f, std::ilogb(want[i]) - 7);
    ASSERT_NEAR(got, want[i], half_step + 1e-5f * std::abs(want[i]) + 1e-6f) << "element " << i;
  }
}

TEST(HostKernelRaggedDotRows, BadCallsReturnErrorsNamingTheKernel) {
  FakeApi api(false);
  std::vector<float> x(4 * 3, 1.0f), w(1 * 2 * 5, 1.0f), out(4 * 2);
  int64_t xd[2] = {4, 3}, wd[3] = {1, 2, 5}, sd[1] = {1}, od[2] = {4, 2};
  int32_t sizes[1] = {4};
  ffi::Buffer bx{sizeof(ffi::Buffer), nullptr, ffi::kF32, x.data(), 2, xd};
  ffi::Buffer bw{sizeof(ffi::Buffer), nullptr, ffi::kF32, w.data(), 3, wd};
  ffi::Buffer bs{sizeof(ffi::Buffer), nullptr, ffi::kS32, sizes, 1, sd};
  ffi::Buffer bo{sizeof(ffi::Buffer), nullptr, ffi::kF32, out.data(), 2, od};
  Frame frame(api, &bx, &bw, &bs, &bo);
  ffi::CallFrame& f = frame.f;
  ASSERT_NE(all().at(0).handler(&f), nullptr);  // w's K (5) is not x's (3)
  EXPECT_NE(FakeApi::last_error.find(kRaggedDotRows), std::string::npos);
  EXPECT_NE(FakeApi::last_error.find("shapes disagree"), std::string::npos);
  f.args.size = 2;
  ASSERT_NE(all().at(0).handler(&f), nullptr);
  EXPECT_NE(FakeApi::last_error.find("expected 3 operands"), std::string::npos);
}

TEST(HostKernelRaggedDotRows, AnswersTheMetadataQuery) {
  ffi::Metadata meta{};
  meta.struct_size = sizeof(meta);
  meta.api_version.major_version = meta.api_version.minor_version = -1;
  meta.traits = 99;
  ffi::MetadataExtension ext{{sizeof(ffi::MetadataExtension), ffi::kExtensionMetadata, nullptr}, &meta};
  ffi::CallFrame f{};
  f.extension_start = &ext.extension_base;
  EXPECT_EQ(all().at(0).handler(&f), nullptr);
  EXPECT_EQ(meta.api_version.major_version, ffi::kApiMajor);
  EXPECT_EQ(meta.api_version.minor_version, ffi::kApiMinor);
  EXPECT_EQ(meta.traits, 0u);
}

// Through the plugin: registered with its FFI extension, then called by a
// compiled program's typed custom call.
TEST(HostKernelRaggedDotRows, RunsAsACustomCallOfTheCpuPlugin) {
  TPU_PJRT_REQUIRE_PLUGIN();
  using namespace torch_tpu::pjrt;
  using namespace torch_tpu::pjrt::testing;
  auto client = shared_client();
  EXPECT_EQ(register_ffi_handler(*client->api(), kRaggedDotRows, reinterpret_cast<void*>(all().at(0).handler),
                                 "cpu"),
            "");
  const std::string program = std::string(R"(
func.func public @main(%x: tensor<6x3xf32>, %w: tensor<2x4x3xf32>, %s: tensor<2xi32>) -> tensor<6x4xf32> {
  %0 = "stablehlo.custom_call"(%x, %w, %s) {call_target_name = ")") +
                              kRaggedDotRows + R"(", api_version = 4 : i32, backend_config = {}} : (tensor<6x3xf32>, tensor<2x4x3xf32>, tensor<2xi32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}
)";
  auto exe = Executable::compile(client, program);
  Case c{6, 3, 4, {2, 3}};
  auto [x, w] = inputs(c, 5);
  std::vector<int32_t> sizes = {2, 3};
  const Device& dev = client->addressable_devices().at(0);
  auto bx = Buffer::from_host(*client, x.data(), ElementType::F32, {6, 3}, dev);
  auto bw = Buffer::from_host(*client, w.data(), ElementType::F32, {2, 4, 3}, dev);
  auto bs = Buffer::from_host(*client, sizes.data(), ElementType::S32, {2}, dev);
  ExecuteResult result = exe->execute({bx.get(), bw.get(), bs.get()}, dev);
  std::vector<float> out(24);
  result.outputs.at(0)->to_host(out.data(), out.size() * sizeof(float));
  expect_near_all(out, reference(x, w, c), c.k);
}

}  // namespace
}  // namespace torch_tpu::host_kernels
