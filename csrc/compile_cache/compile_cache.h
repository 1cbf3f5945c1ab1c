// The persistent compile cache: compile() is Executable::compile with a
// folder of serialized executables behind it, so a later process loads a
// program instead of compiling it again.
//
// Configuration, read once on first use:
//   TORCH_TPU_COMPILE_CACHE         folder (default ~/.cache/torch_tpu/xla);
//                                   "0" turns the cache off
//   TORCH_TPU_COMPILE_CACHE_MAX_MB  bound on the folder in MB (default 4096,
//                                   0: none); least recently used entries go
//                                   first
//
// The key is a SHA-256 of the program text, the serialized compile options,
// the plugin's identity (platform name and version, PJRT API version,
// attributes, file path, size and mtime), XLA_FLAGS and the devices' kind and count: an
// entry is never loaded by a different plugin build. Any trouble (bad entry,
// full disk, a plugin that cannot serialize) costs a compile and one warning
// line on stderr, never a wrong program or a crash. Processes that miss the
// same program at once compile it once (compile_claim.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "pjrt/client.h"
#include "pjrt/compile_options.h"
#include "pjrt/executable.h"

namespace torch_tpu::compile_cache {

std::shared_ptr<pjrt::Executable> compile(
    const std::shared_ptr<pjrt::Client>& client, const std::string& program,
    const pjrt::CompileSettings& settings = {});

struct Stats {
  int64_t hits = 0;      // programs loaded from the folder
  int64_t misses = 0;    // programs compiled (and then written)
  int64_t waits = 0;     // misses that waited for another process compiling
                         // the same program (compile_claim.h)
  int64_t writes = 0;    // entries written
  int64_t errors = 0;    // bad entries, failed writes or loads
  int64_t evictions = 0;
  double load_seconds = 0;  // reading + checking + deserializing hits
};
Stats stats();
void reset_stats();

// The folder in use, or "" when the cache is off (also after it turned
// itself off in this process).
std::string active_dir();

}  // namespace torch_tpu::compile_cache
