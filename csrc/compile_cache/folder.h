// The cache folder: one file per entry named by its key, written atomically
// (temp file in the same folder, fsync, rename) so a reader sees a whole
// entry or none, and two processes writing the same key at once leave one
// whole entry. A hit touches the file's mtime; when the folder grows past
// its bound the least recently used entries are removed.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "compile_cache/sha256.h"

namespace torch_tpu::compile_cache {

class Folder {
 public:
  // `max_bytes` bounds the sum of entry sizes (0: no bound).
  Folder(std::string dir, uint64_t max_bytes);

  const std::string& dir() const { return dir_; }
  std::string path_of(const Digest& key) const;
  // The entry's compile claim (compile_claim.h): `<entry>.lock`.
  std::string lock_path_of(const Digest& key) const;

  // Creates the folder; returns "" or why it cannot be used.
  std::string open();

  enum class Load { kHit, kMiss, kBad };
  // kHit: `*payload` holds the entry's payload. kBad: the entry existed but
  // failed its checks; it has been deleted and `*problem` says why.
  Load load(const Digest& key, std::string* payload, std::string* problem);

  // Writes the entry; returns "" or what failed (the folder is unchanged then).
  std::string store(const Digest& key, const std::string& payload);

  // Deletes a (just loaded) entry the plugin refused.
  void remove(const Digest& key);

  // Removes least recently used entries until the folder is under 90% of its
  // bound, and temp and lock files left by processes that died. Returns
  // entries removed.
  int64_t evict();
  int64_t evicted() const { return evicted_; }

 private:
  std::string dir_;
  uint64_t max_bytes_;
  std::mutex mu_;
  // Bytes this process believes the folder holds; -1 until first scanned.
  // Other processes write too, so it is only a trigger for a real scan.
  int64_t estimate_ = -1;
  std::atomic<int64_t> evicted_{0};
};

}  // namespace torch_tpu::compile_cache
