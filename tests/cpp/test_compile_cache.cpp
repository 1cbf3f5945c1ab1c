// Tests of the persistent compile cache's torch-free pieces: SHA-256 against
// the FIPS 180-4 examples, the entry format's checks, the folder's atomic
// writes and LRU bound, and a serialize/deserialize round trip on the plugin.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compile_cache/compile_cache.h"
#include "compile_cache/entry.h"
#include "compile_cache/folder.h"
#include "compile_cache/sha256.h"
#include "pjrt_test_env.h"

namespace torch_tpu::compile_cache {
namespace {

// Fresh folders under /tmp, removed when the test binary exits.
std::vector<std::string>& made_dirs() {
  static auto* dirs = new std::vector<std::string>();
  return *dirs;
}
struct RemoveDirsAtExit {
  ~RemoveDirsAtExit() {
    for (const std::string& d : made_dirs()) std::filesystem::remove_all(d);
  }
} remove_dirs_at_exit;

std::string temp_dir() {
  char tmpl[] = "/tmp/tpu_cc_test.XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  EXPECT_NE(d, nullptr);
  if (d) made_dirs().push_back(d);
  return d ? d : "";
}

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(hex(sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A million 'a's, fed in odd-sized pieces to exercise the buffering.
  Sha256 h;
  std::string chunk(997, 'a');
  size_t left = 1000000;
  while (left > 0) {
    size_t n = std::min(left, chunk.size());
    h.update(chunk.data(), n);
    left -= n;
  }
  EXPECT_EQ(hex(h.finish()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, FieldsAreDelimited) {
  EXPECT_NE(Sha256().field("ab").field("c").finish(),
            Sha256().field("a").field("bc").finish());
}

TEST(CacheEntry, RoundTripAndRejections) {
  const Digest key = sha256("key"), other = sha256("other");
  const std::string payload(1000, 'x');
  const std::string bytes = encode_entry(key, payload);
  ASSERT_EQ(bytes.size(), kHeaderSize + payload.size());

  std::string out;
  EXPECT_EQ(decode_entry(bytes, key, &out), "");
  EXPECT_EQ(out, payload);

  out.clear();
  EXPECT_NE(decode_entry(bytes, other, &out), "");
  EXPECT_NE(decode_entry(bytes.substr(0, bytes.size() - 1), key, &out), "");
  EXPECT_NE(decode_entry(bytes.substr(0, 20), key, &out), "");
  EXPECT_NE(decode_entry(bytes + "y", key, &out), "");
  std::string flipped = bytes;
  flipped[kHeaderSize + 500] ^= 1;
  EXPECT_EQ(decode_entry(flipped, key, &out), "checksum mismatch");
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_NE(decode_entry(bad_magic, key, &out), "");
  EXPECT_TRUE(out.empty());
}

TEST(CacheFolder, StoreLoadAndBadEntries) {
  Folder folder(temp_dir() + "/nested/xla", 0);
  ASSERT_EQ(folder.open(), "");
  const Digest key = sha256("program");
  std::string payload, problem;
  EXPECT_EQ(folder.load(key, &payload, &problem), Folder::Load::kMiss);
  ASSERT_EQ(folder.store(key, "compiled bytes"), "");
  EXPECT_EQ(folder.load(key, &payload, &problem), Folder::Load::kHit);
  EXPECT_EQ(payload, "compiled bytes");

  // Truncated on disk: rejected, deleted, then a miss.
  const std::string path = folder.path_of(key);
  write(path, read(path).substr(0, kHeaderSize + 3));
  EXPECT_EQ(folder.load(key, &payload, &problem), Folder::Load::kBad);
  EXPECT_NE(problem, "");
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
  EXPECT_EQ(folder.load(key, &payload, &problem), Folder::Load::kMiss);

  // Another key's entry under this key's name.
  ASSERT_EQ(folder.store(sha256("else"), "other"), "");
  write(path, read(folder.path_of(sha256("else"))));
  EXPECT_EQ(folder.load(key, &payload, &problem), Folder::Load::kBad);
  EXPECT_EQ(problem, "written for another key");
}

TEST(CacheFolder, EvictsLeastRecentlyUsed) {
  const std::string dir = temp_dir();
  Folder folder(dir, 10 * 1024);  // room for about three 3 KB entries
  ASSERT_EQ(folder.open(), "");
  std::vector<Digest> keys;
  for (int i = 0; i < 3; ++i) {
    keys.push_back(sha256("p" + std::to_string(i)));
    ASSERT_EQ(folder.store(keys.back(), std::string(3000, 'a' + i)), "");
    // Distinct, ordered mtimes without sleeping.
    struct timeval times[2] = {{1000 + i, 0}, {1000 + i, 0}};
    ::utimes(folder.path_of(keys.back()).c_str(), times);
  }
  std::string payload, problem;
  // Using entry 0 makes entry 1 the least recently used.
  EXPECT_EQ(folder.load(keys[0], &payload, &problem), Folder::Load::kHit);
  ASSERT_EQ(folder.store(sha256("p3"), std::string(3000, 'd')), "");
  EXPECT_EQ(folder.load(keys[1], &payload, &problem), Folder::Load::kMiss);
  EXPECT_EQ(folder.load(keys[0], &payload, &problem), Folder::Load::kHit);
  EXPECT_EQ(folder.load(sha256("p3"), &payload, &problem), Folder::Load::kHit);
  EXPECT_GE(folder.evicted(), 1);
}

const char kProgram[] = R"mlir(
module @m {
  func.func public @main(%a: tensor<3xf32>) -> tensor<3xf32> {
    %0 = stablehlo.multiply %a, %a : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
)mlir";

float run_first(pjrt::Executable& exe) {
  auto client = pjrt::testing::shared_client();
  const pjrt::Device& dev = client->addressable_devices()[0];
  std::vector<float> in = {3, 4, 5};
  auto buf = pjrt::Buffer::from_host(*client, in.data(), pjrt::ElementType::F32, {3}, dev);
  auto r = exe.execute({buf.get()}, dev);
  r.done.await();
  std::vector<float> out(3);
  r.outputs[0]->to_host(out.data(), out.size() * sizeof(float));
  return out[0];
}

TEST(PjrtSerialize, RoundTrip) {
  TPU_PJRT_REQUIRE_PLUGIN();
  auto exe = pjrt::Executable::compile(pjrt::testing::shared_client(), kProgram);
  const std::string bytes = exe->serialize();
  EXPECT_FALSE(bytes.empty());
  auto loaded = pjrt::Executable::deserialize(pjrt::testing::shared_client(), bytes);
  EXPECT_EQ(loaded->num_outputs(), 1u);
  EXPECT_EQ(run_first(*loaded), 9.0f);
  EXPECT_THROW(pjrt::Executable::deserialize(pjrt::testing::shared_client(), "junk"),
               pjrt::Error);
}

TEST(CompileCache, SecondCompileLoadsFromFolder) {
  TPU_PJRT_REQUIRE_PLUGIN();
  // The cache reads its configuration once, at first use in the process.
  const std::string dir = temp_dir();
  pjrt::testing::ScopedEnv env("TORCH_TPU_COMPILE_CACHE", dir);
  auto client = pjrt::testing::shared_client();
  reset_stats();
  auto first = compile(client, kProgram);
  EXPECT_EQ(active_dir(), dir);
  EXPECT_EQ(stats().misses, 1);
  EXPECT_EQ(stats().writes, 1);
  auto second = compile(client, kProgram);
  EXPECT_EQ(stats().hits, 1);
  EXPECT_EQ(run_first(*second), 9.0f);
}

}  // namespace
}  // namespace torch_tpu::compile_cache
