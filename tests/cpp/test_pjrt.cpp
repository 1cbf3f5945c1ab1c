// Tests of the torch-free PJRT layer against a real plugin (the CPU plugin
// in CI): load, client, transfers, compile/execute, donation, errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "pjrt/pjrt.h"
#include "pjrt/pjrt_c_abi_sizes.h"
#include "pjrt_test_env.h"

namespace torch_tpu::pjrt {
namespace {

using testing::plugin_path;
using testing::ScopedEnv;
using testing::shared_client;

const char kAddProgram[] = R"mlir(
module @m {
  func.func public @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = stablehlo.add %a, %b : tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}
)mlir";

// %a is aliased to output 0, so it is donated unless marked non-donatable.
const char kDonatingProgram[] = R"mlir(
module @m {
  func.func public @main(%a: tensor<4xf32> {tf.aliasing_output = 0 : i32}, %b: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, %b : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)mlir";

const char kTwoOutputProgram[] = R"mlir(
module @m {
  func.func public @main(%a: tensor<3xi64>, %b: tensor<3xi64>) -> (tensor<3xi64>, tensor<3xi64>) {
    %0 = stablehlo.add %a, %b : tensor<3xi64>
    %1 = stablehlo.multiply %a, %b : tensor<3xi64>
    return %0, %1 : tensor<3xi64>, tensor<3xi64>
  }
}
)mlir";

const Device& device(int i) { return shared_client()->addressable_devices()[i]; }

template <typename T>
std::shared_ptr<Buffer> upload(const std::vector<T>& data, ElementType type,
                               const std::vector<int64_t>& dims, int dev = 0) {
  return Buffer::from_host(*shared_client(), data.data(), type, dims,
                           device(dev));
}

template <typename T>
std::vector<T> download(Buffer& buffer) {
  std::vector<T> out(buffer.host_size_bytes() / sizeof(T));
  buffer.to_host(out.data(), out.size() * sizeof(T));
  return out;
}

template <typename T>
void expect_round_trip(const std::vector<T>& data, ElementType type,
                       const std::vector<int64_t>& dims) {
  SCOPED_TRACE(element_type_name(type));
  auto buffer = upload(data, type, dims);
  EXPECT_EQ(buffer->element_type(), type);
  EXPECT_EQ(buffer->dims(), dims);
  EXPECT_EQ(buffer->host_size_bytes(), data.size() * sizeof(T));
  EXPECT_EQ(buffer->device(), device(0));
  EXPECT_FALSE(buffer->is_deleted());
  EXPECT_EQ(download<T>(*buffer), data);
}

// ------------------------------- loading ------------------------------------

TEST(PjrtApi, LoadsAndChecksVersion) {
  TPU_PJRT_REQUIRE_PLUGIN();
  auto api = Api::load(plugin_path());
  EXPECT_EQ(api->api_major(), 0);
  EXPECT_GE(api->api_minor(), Api::kMinApiMinor);
  EXPECT_EQ(api->path(), plugin_path());
  EXPECT_EQ(Api::load(plugin_path()), api) << "a plugin is loaded once";

  auto attributes = api->plugin_attributes();
  EXPECT_FALSE(attributes.empty());
  for (const auto& [name, value] : attributes) {
    std::printf("  plugin attribute %s = %s\n", name.c_str(), value.c_str());
  }
  std::printf("  PJRT API %d.%d\n", api->api_major(), api->api_minor());
}

TEST(PjrtApi, MissingFileNamesPath) {
  try {
    Api::load("/nonexistent/plugin.so");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kNotFound);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/plugin.so"),
              std::string::npos);
  }
}

TEST(PjrtApi, LibraryWithoutGetPjrtApiIsRejected) {
  try {
    Api::load("libm.so.6");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GetPjrtApi"), std::string::npos);
  }
}

// A fake function table: version/size checks run before any entry is read.
abi::PJRT_Api fake_table(int major, int minor, size_t struct_size) {
  abi::PJRT_Api table;
  std::memset(static_cast<void*>(&table), 0, sizeof(table));
  table.struct_size = struct_size;
  table.pjrt_api_version.struct_size = sizeof(abi::PJRT_Api_Version);
  table.pjrt_api_version.major_version = major;
  table.pjrt_api_version.minor_version = minor;
  return table;
}

std::string refusal(const abi::PJRT_Api& table, int expected_code) {
  try {
    Api::from_table(&table, "fake.so");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), expected_code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "table was accepted";
  return "";
}

TEST(PjrtApi, RefusesOldMinorNamingBothVersions) {
  const std::string what =
      refusal(fake_table(0, 56, sizeof(abi::PJRT_Api)), kFailedPrecondition);
  EXPECT_NE(what.find("0.56"), std::string::npos) << what;
  EXPECT_NE(what.find("0.57"), std::string::npos) << what;
  EXPECT_NE(what.find("fake.so"), std::string::npos) << what;
}

TEST(PjrtApi, RefusesOtherMajor) {
  const std::string what =
      refusal(fake_table(1, 90, sizeof(abi::PJRT_Api)), kFailedPrecondition);
  EXPECT_NE(what.find("1.90"), std::string::npos) << what;
}

TEST(PjrtApi, RefusesShortTable) {
  const size_t needed = TPU_PJRT_API_ENTRY_END(PJRT_Buffer_ReadyEvent);
  std::string what = refusal(fake_table(0, 81, needed - 8), kFailedPrecondition);
  EXPECT_NE(what.find(std::to_string(needed)), std::string::npos) << what;
  // Too short to even hold the version.
  refusal(fake_table(0, 81, 16), kFailedPrecondition);
}

TEST(PjrtApi, RefusesMissingRequiredEntry) {
  const std::string what =
      refusal(fake_table(0, 81, sizeof(abi::PJRT_Api)), kUnimplemented);
  EXPECT_NE(what.find("PJRT_Error_Destroy"), std::string::npos) << what;
}

TEST(PjrtLocator, MissingEnvPathThrowsWithInstallHelp) {
  ScopedEnv env(kPluginEnvVar, "/nonexistent");
  try {
    locate_plugin({});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), kNotFound);
    EXPECT_NE(what.find("/nonexistent"), std::string::npos) << what;
    EXPECT_NE(what.find("pip install xla-cpu-pjrt"), std::string::npos);
    EXPECT_NE(what.find("pip install libtpu"), std::string::npos);
  }
}

TEST(PjrtLocator, EnvPathWins) {
  TPU_PJRT_REQUIRE_PLUGIN();
  EXPECT_EQ(locate_plugin({"/does/not/matter"}), plugin_path());
}

TEST(PjrtLocator, SearchesSysPathForCpuPlugin) {
  TPU_PJRT_REQUIRE_PLUGIN();
  const std::string tail = "/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so";
  const std::string path = plugin_path();
  if (path.size() <= tail.size() ||
      path.compare(path.size() - tail.size(), tail.size(), tail) != 0 ||
      tpu_device_present()) {
    GTEST_SKIP() << "needs the pip-installed CPU plugin and no TPU";
  }
  const std::string site_packages = path.substr(0, path.size() - tail.size());
  ScopedEnv env(kPluginEnvVar, std::nullopt);
  EXPECT_EQ(locate_plugin({"/nowhere", site_packages}), path);
}

TEST(PjrtLocator, NothingFoundThrows) {
  ScopedEnv env(kPluginEnvVar, std::nullopt);
  try {
    locate_plugin({"/nowhere"});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kNotFound);
    EXPECT_NE(std::string(e.what()).find("/nowhere"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("pip install"), std::string::npos);
  }
}

// ------------------------------- client -------------------------------------

TEST(PjrtClient, TwoCpuDevices) {
  TPU_PJRT_REQUIRE_PLUGIN();
  auto client = shared_client();
  EXPECT_EQ(client->platform_name(), "cpu");
  EXPECT_EQ(client->process_index(), 0);
  ASSERT_EQ(client->addressable_devices().size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const Device& d = client->addressable_devices()[i];
    EXPECT_EQ(d.id(), i);
    EXPECT_FALSE(d.kind().empty());
    EXPECT_FALSE(d.to_string().empty());
    EXPECT_FALSE(d.debug_string().empty());
    std::printf("  device %d: kind=%s str=%s hw=%d\n", d.id(), d.kind().c_str(),
                d.to_string().c_str(), d.local_hardware_id());
  }
  auto stats = client->addressable_devices()[0].memory_stats();
  std::printf("  memory stats: %s\n", stats ? "reported" : "not reported");
  std::printf("  platform version: %s\n", client->platform_version().c_str());
}

TEST(PjrtClient, CreateAndDestroyOwnClient) {
  TPU_PJRT_REQUIRE_PLUGIN();
  auto client = Client::create(Api::load(plugin_path()),
                               ClientOptions{/*cpu_device_count=*/3});
  EXPECT_EQ(client->addressable_devices().size(), 3u);
  auto buffer = Buffer::from_host(*client, std::vector<float>{1, 2}.data(),
                                  ElementType::F32, {2},
                                  client->addressable_devices()[2]);
  client.reset();  // the buffer keeps the client alive
  float out[2];
  buffer->to_host(out, sizeof(out));
  EXPECT_EQ(out[1], 2.0f);
}

// ------------------------------- transfers ----------------------------------

TEST(PjrtBuffer, RoundTrips) {
  TPU_PJRT_REQUIRE_PLUGIN();
  expect_round_trip<float>({1.5f, -2.0f, 3.25f, 0.0f, 1e30f, -7.0f},
                           ElementType::F32, {2, 3});
  expect_round_trip<int64_t>({INT64_MIN, -1, 0, 1, INT64_MAX},
                             ElementType::S64, {5});
  expect_round_trip<uint8_t>({1, 0, 1, 1}, ElementType::Pred, {2, 2});
  // bf16 as raw bits: 1.0, -2.0, +inf, smallest subnormal, a NaN.
  expect_round_trip<uint16_t>({0x3F80, 0xC000, 0x7F80, 0x0001, 0x7FC1, 0x0000},
                              ElementType::BF16, {3, 2});
  expect_round_trip<uint8_t>({0, 1, 127, 128, 255, 42, 7, 9}, ElementType::U8,
                             {2, 2, 2});
  expect_round_trip<float>({42.0f}, ElementType::F32, {});  // 0-d
}

TEST(PjrtBuffer, EmptyArray) {
  TPU_PJRT_REQUIRE_PLUGIN();
  auto buffer = Buffer::from_host(*shared_client(), nullptr, ElementType::F32,
                                  {0, 3}, device(0));
  EXPECT_EQ(buffer->dims(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(buffer->element_count(), 0);
  EXPECT_EQ(buffer->host_size_bytes(), 0u);
  buffer->to_host(nullptr, 0);
  buffer->ready_event().await();
}

TEST(PjrtBuffer, AsyncCopyAndReadyEvent) {
  TPU_PJRT_REQUIRE_PLUGIN();
  std::vector<int32_t> data(1024);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<int32_t>(i);
  auto buffer = upload(data, ElementType::S32, {32, 32});
  buffer->ready_event().await();
  EXPECT_GT(buffer->on_device_size_bytes(), 0u);

  std::vector<int32_t> out(data.size(), -1);
  Event copy = buffer->to_host_async(out.data(), out.size() * sizeof(int32_t));
  buffer.reset();  // the pending copy keeps the buffer alive
  copy.await();
  EXPECT_TRUE(copy.is_ready());
  EXPECT_EQ(out, data);
}

TEST(PjrtBuffer, ErrorsAreReported) {
  TPU_PJRT_REQUIRE_PLUGIN();
  auto buffer = upload<float>({1, 2, 3}, ElementType::F32, {3});
  float small[2];
  try {
    buffer->to_host(small, sizeof(small));
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kInvalidArgument);
  }
  EXPECT_THROW(upload<float>({1}, ElementType::F32, {-1}), Error);

  buffer->delete_now();
  EXPECT_TRUE(buffer->is_deleted());
  float out[3];
  EXPECT_THROW(buffer->to_host(out, sizeof(out)), Error);
}

TEST(PjrtBuffer, CopyToOtherDevice) {
  TPU_PJRT_REQUIRE_PLUGIN();
  auto buffer = upload<int64_t>({5, 6, 7}, ElementType::S64, {3});
  auto moved = buffer->copy_to_device(device(1));
  EXPECT_EQ(moved->device(), device(1));
  EXPECT_EQ(download<int64_t>(*moved), (std::vector<int64_t>{5, 6, 7}));
}

TEST(PjrtEvent, EmptyEventIsDone) {
  Event event;
  EXPECT_TRUE(event.empty());
  EXPECT_TRUE(event.is_ready());
  event.await();
}

// ----------------------------- compile / run --------------------------------

TEST(PjrtExecutable, CompileAndRun) {
  TPU_PJRT_REQUIRE_PLUGIN();
  auto exe = Executable::compile(shared_client(), kAddProgram);
  EXPECT_EQ(exe->num_outputs(), 1u);
  EXPECT_TRUE(exe->portable());

  auto a = upload<float>({1, 2, 3, 4, 5, 6}, ElementType::F32, {2, 3});
  auto b = upload<float>({10, 20, 30, 40, 50, 60}, ElementType::F32, {2, 3});
  ExecuteResult result = exe->execute({a.get(), b.get()}, device(0));
  ASSERT_EQ(result.outputs.size(), 1u);
  result.done.await();
  Buffer& out = *result.outputs[0];
  EXPECT_EQ(out.element_type(), ElementType::F32);
  EXPECT_EQ(out.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(download<float>(out),
            (std::vector<float>{11, 22, 33, 44, 55, 66}));
  EXPECT_FALSE(a->is_deleted());  // no aliasing: inputs untouched
}

TEST(PjrtExecutable, RunsOnSecondDevice) {
  TPU_PJRT_REQUIRE_PLUGIN();
  auto exe = Executable::compile(shared_client(), kAddProgram);
  auto a = upload<float>({1, 1, 1, 1, 1, 1}, ElementType::F32, {2, 3}, 1);
  auto b = upload<float>({0, 1, 2, 3, 4, 5}, ElementType::F32, {2, 3}, 1);
  ExecuteResult result = exe->execute({a.get(), b.get()}, device(1));
  EXPECT_EQ(result.outputs[0]->device(), device(1));
  EXPECT_EQ(download<float>(*result.outputs[0]),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(PjrtExecutable, MultipleOutputs) {
  TPU_PJRT_REQUIRE_PLUGIN();
  auto exe = Executable::compile(shared_client(), kTwoOutputProgram);
  ASSERT_EQ(exe->num_outputs(), 2u);
  auto a = upload<int64_t>({1, 2, 3}, ElementType::S64, {3});
  auto b = upload<int64_t>({4, 5, 6}, ElementType::S64, {3});
  ExecuteResult result = exe->execute({a.get(), b.get()}, device(0));
  EXPECT_EQ(download<int64_t>(*result.outputs[0]),
            (std::vector<int64_t>{5, 7, 9}));
  EXPECT_EQ(download<int64_t>(*result.outputs[1]),
            (std::vector<int64_t>{4, 10, 18}));
}

TEST(PjrtExecutable, AliasedInputIsDonated) {
  TPU_PJRT_REQUIRE_PLUGIN();
  auto exe = Executable::compile(shared_client(), kDonatingProgram);
  auto a = upload<float>({1, 2, 3, 4}, ElementType::F32, {4});
  auto b = upload<float>({10, 10, 10, 10}, ElementType::F32, {4});
  ExecuteResult result = exe->execute({a.get(), b.get()}, device(0));
  result.done.await();
  EXPECT_TRUE(a->is_deleted());
  EXPECT_FALSE(b->is_deleted());
  EXPECT_EQ(download<float>(*result.outputs[0]),
            (std::vector<float>{11, 12, 13, 14}));
}

TEST(PjrtExecutable, NonDonatableInputSurvives) {
  TPU_PJRT_REQUIRE_PLUGIN();
  auto exe = Executable::compile(shared_client(), kDonatingProgram);
  auto a = upload<float>({1, 2, 3, 4}, ElementType::F32, {4});
  auto b = upload<float>({10, 10, 10, 10}, ElementType::F32, {4});
  ExecuteResult result =
      exe->execute({a.get(), b.get()}, device(0), /*non_donatable=*/{0});
  result.done.await();
  EXPECT_FALSE(a->is_deleted());
  EXPECT_EQ(download<float>(*a), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(download<float>(*result.outputs[0]),
            (std::vector<float>{11, 12, 13, 14}));
}

TEST(PjrtExecutable, InvalidMlirRaisesPluginMessage) {
  TPU_PJRT_REQUIRE_PLUGIN();
  try {
    Executable::compile(shared_client(), "module @m { this is not mlir }");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    const std::string what = e.what();
    std::printf("  compile error: %s\n", what.c_str());
    EXPECT_NE(e.code(), 0);
    EXPECT_NE(what.find("PJRT_Client_Compile"), std::string::npos);
    EXPECT_NE(what.find(error_code_name(e.code())), std::string::npos);
    EXPECT_GT(e.message().size(), std::string("PJRT_Client_Compile: ").size());
  }
}

TEST(PjrtExecutable, EnvOptionOverrides) {
  TPU_PJRT_REQUIRE_PLUGIN();
  CompileSettings settings;
  settings.env_option_overrides = {{"xla_backend_optimization_level", "1"}};
  auto exe = Executable::compile(shared_client(), kAddProgram, settings);
  EXPECT_EQ(exe->num_outputs(), 1u);

  settings.env_option_overrides = {{"no_such_xla_option", "1"}};
  EXPECT_THROW(Executable::compile(shared_client(), kAddProgram, settings),
               Error);
}

TEST(PjrtExecutable, NonPortableRunsOnItsDevice) {
  TPU_PJRT_REQUIRE_PLUGIN();
  CompileSettings settings;
  settings.portable = false;
  auto exe = Executable::compile(shared_client(), kAddProgram, settings);
  EXPECT_FALSE(exe->portable());
  auto a = upload<float>({1, 2, 3, 4, 5, 6}, ElementType::F32, {2, 3});
  ExecuteResult result = exe->execute({a.get(), a.get()}, device(0));
  EXPECT_EQ(download<float>(*result.outputs[0]),
            (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_THROW(exe->execute({a.get(), a.get()}, device(1)), Error);
}

// ------------------------------- encoding -----------------------------------

TEST(PjrtCompileOptions, Encoding) {
  CompileSettings settings;
  settings.env_option_overrides = {{"k", "v"}};
  const std::string bytes = serialize_compile_options(settings);
  // field 3 (build options): device_ordinal -1 (10-byte varint), replicas 1,
  // partitions 1; field 4 = true; field 7 = {1: "k", 2: {1: "v"}}.
  const std::string expected =
      std::string("\x1a\x0f\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
                  "\x20\x01\x28\x01",
                  17) +
      std::string("\x20\x01", 2) +
      std::string("\x3a\x08\x0a\x01k\x12\x03\x0a\x01v", 10);
  EXPECT_EQ(bytes, expected);
}

TEST(PjrtCompileOptions, DefaultOverridesYieldToTheCallersOwn) {
  CompileSettings settings;
  settings.env_option_overrides = {{"a", "mine"}};
  const CompileSettings merged = with_default_overrides(settings, {{"a", "default"}, {"b", "default"}});
  EXPECT_EQ(merged.env_option_overrides,
            (OptionOverrides{{"a", "mine"}, {"b", "default"}}));
  EXPECT_EQ(with_default_overrides(CompileSettings{}, {}).env_option_overrides, OptionOverrides{});
}

}  // namespace
}  // namespace torch_tpu::pjrt
