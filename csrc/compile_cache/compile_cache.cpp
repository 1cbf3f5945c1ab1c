#include "compile_cache/compile_cache.h"

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "compile_cache/compile_claim.h"
#include "compile_cache/folder.h"
#include "compile_cache/program_dump.h"
#include "pjrt/api.h"
#include "pjrt/error.h"

namespace torch_tpu::compile_cache {

namespace {

// Bump when what a key covers changes meaning, to orphan old entries.
constexpr char kKeyScheme[] = "torch_tpu compile cache key v1";
constexpr int kDefaultMaxMb = 4096;

void warn(const std::string& message) {
  std::fprintf(stderr, "torch_tpu: compile cache: %s\n", message.c_str());
  std::fflush(stderr);
}

std::unique_ptr<Folder> folder_from_env() {
  std::string dir;
  if (const char* v = std::getenv("TORCH_TPU_COMPILE_CACHE"); v && *v) {
    if (std::string(v) == "0") return nullptr;
    dir = v;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    dir = std::string(home) + "/.cache/torch_tpu/xla";
  } else {
    return nullptr;  // nowhere sensible to write
  }
  double max_mb = kDefaultMaxMb;  // fractions allowed (tests use tiny bounds)
  if (const char* v = std::getenv("TORCH_TPU_COMPILE_CACHE_MAX_MB"); v && *v) {
    char* end = nullptr;
    double n = std::strtod(v, &end);
    if (end && *end == '\0' && n >= 0) {
      max_mb = n;
    } else {
      warn("TORCH_TPU_COMPILE_CACHE_MAX_MB='" + std::string(v) +
           "' is not a size in MB; using " + std::to_string(kDefaultMaxMb));
    }
  }
  auto folder = std::make_unique<Folder>(dir, uint64_t(max_mb * 1048576.0));
  std::string why = folder->open();
  if (!why.empty()) {
    warn(why + "; compile cache off for this process");
    return nullptr;
  }
  return folder;
}

struct State {
  std::unique_ptr<Folder> folder = folder_from_env();
  std::atomic<bool> on{folder != nullptr};
  std::mutex mu;  // guards the members below
  Stats stats;
  bool write_warned = false;
  int64_t evictions_base = 0;  // folder's count at the last reset
  std::map<const pjrt::Client*, std::string> identities;
};

State& state() {
  static auto* s = new State();  // never destroyed: used until exit
  return *s;
}

void turn_off(State& s, const std::string& why) {
  if (s.on.exchange(false)) warn(why + "; compile cache off for this process");
}

std::string file_facts(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "?";
  return std::to_string(st.st_size) + "@" + std::to_string(st.st_mtim.tv_sec) +
         "." + std::to_string(st.st_mtim.tv_nsec);
}

// Everything about the plugin and devices a compiled program depends on.
const std::string& identity(State& s, const pjrt::Client& client) {
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.identities.find(&client);
  if (it != s.identities.end()) return it->second;
  const pjrt::Api& api = *client.api();
  Sha256 h;
  h.field(client.platform_name()).field(client.platform_version());
  h.field(std::to_string(api.api_major()) + "." +
          std::to_string(api.api_minor()));
  for (const auto& [name, value] : api.plugin_attributes()) {
    h.field(name).field(value);
  }
  h.field(api.path()).field(file_facts(api.path()));
  const auto& devices = client.addressable_devices();
  h.field(std::to_string(devices.size()));
  for (const pjrt::Device& d : devices) h.field(d.kind());
  // The plugin's flags change what it compiles (read here, after the runtime set its own).
  const char* flags = std::getenv("XLA_FLAGS");
  h.field(flags ? flags : "");
  return s.identities.emplace(&client, hex(h.finish())).first->second;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

// The folder's entry for `key` as a loaded executable, or null (no entry, a
// bad one, which is deleted with a warning, or one the plugin refused).
std::shared_ptr<pjrt::Executable> load_entry(
    State& s, const Digest& key, const std::shared_ptr<pjrt::Client>& client,
    const pjrt::CompileSettings& settings,
    std::chrono::steady_clock::time_point t0) {
  Folder& folder = *s.folder;
  std::string payload, problem;
  switch (folder.load(key, &payload, &problem)) {
    case Folder::Load::kHit:
      try {
        auto exe = pjrt::Executable::deserialize(client, payload, settings);
        std::lock_guard<std::mutex> lock(s.mu);
        s.stats.hits += 1;
        s.stats.load_seconds += seconds_since(t0);
        return exe;
      } catch (const pjrt::Error& e) {
        folder.remove(key);
        { std::lock_guard<std::mutex> lock(s.mu); s.stats.errors += 1; }
        turn_off(s, "the plugin could not load entry " + folder.path_of(key) +
                        " (" + e.what() + ")");
      }
      break;
    case Folder::Load::kBad:
      { std::lock_guard<std::mutex> lock(s.mu); s.stats.errors += 1; }
      warn("ignored and deleted entry " + folder.path_of(key) + ": " +
           problem + "; recompiling");
      break;
    case Folder::Load::kMiss:
      break;
  }
  return nullptr;
}

}  // namespace

std::shared_ptr<pjrt::Executable> compile(
    const std::shared_ptr<pjrt::Client>& client, const std::string& program,
    const pjrt::CompileSettings& settings) {
  dump_program(program);
  State& s = state();
  if (!s.on || !client) return pjrt::Executable::compile(client, program, settings);
  Folder& folder = *s.folder;
  const auto t0 = std::chrono::steady_clock::now();
  const Digest key = Sha256()
                         .field(kKeyScheme)
                         .field(identity(s, *client))
                         .field(pjrt::serialize_compile_options(client->compile_settings(settings)))
                         .field(program)
                         .finish();
  if (auto exe = load_entry(s, key, client, settings, t0)) return exe;
  if (!s.on) return pjrt::Executable::compile(client, program, settings);
  // Missed: compile, unless another process is compiling this very program
  // (ranks of one job miss the same programs together); then its entry.
  CompileClaim claim(folder.lock_path_of(key));
  if (claim.waited()) {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stats.waits += 1;
  }
  // Looked up again even without a wait: a holder may have finished between
  // our miss and our claim. (The wait is not load time.)
  const auto t1 = std::chrono::steady_clock::now();
  if (auto exe = load_entry(s, key, client, settings, t1)) return exe;

  auto exe = pjrt::Executable::compile(client, program, settings);
  { std::lock_guard<std::mutex> lock(s.mu); s.stats.misses += 1; }
  if (!s.on) return exe;
  std::string bytes;
  try {
    bytes = exe->serialize();
  } catch (const pjrt::Error& e) {
    turn_off(s, std::string("the plugin cannot serialize executables (") +
                    e.what() + ")");
    return exe;
  }
  const std::string why = folder.store(key, bytes);
  std::lock_guard<std::mutex> lock(s.mu);
  if (why.empty()) {
    s.stats.writes += 1;
  } else {
    s.stats.errors += 1;
    // A full or read-only disk fails every write: say it once.
    if (!s.write_warned) warn(why + " (programs still compile; further write failures are counted silently)");
    s.write_warned = true;
  }
  return exe;
}

Stats stats() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  Stats out = s.stats;
  if (s.folder) out.evictions = s.folder->evicted() - s.evictions_base;
  return out;
}

void reset_stats() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.stats = Stats();
  if (s.folder) s.evictions_base = s.folder->evicted();
}

std::string active_dir() {
  State& s = state();
  return s.on ? s.folder->dir() : "";
}

}  // namespace torch_tpu::compile_cache
