// One cache entry on disk: a fixed header, then the plugin's serialized
// executable. The header names the key the entry was written for and a
// checksum of the payload, so a truncated, corrupted or misplaced file is
// recognised and never handed to the plugin.
//
//   offset  size  field (integers little-endian)
//        0     8  magic "TPUXLAC\0"
//        8     4  format version (kFormatVersion)
//       12     4  header size (kHeaderSize)
//       16    32  key (SHA-256 of everything the program depends on)
//       48     8  payload length
//       56    32  SHA-256 of the payload
//       88     -  payload
#pragma once

#include <cstdint>
#include <string>

#include "compile_cache/sha256.h"

namespace torch_tpu::compile_cache {

constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderSize = 88;

std::string encode_entry(const Digest& key, const std::string& payload);

// Checks `bytes` against the header and `key`. On success moves the payload
// into `*payload` and returns ""; otherwise returns why the entry is unusable
// ("truncated", "checksum mismatch", ...) and leaves `*payload` alone.
std::string decode_entry(std::string bytes, const Digest& key,
                         std::string* payload);

}  // namespace torch_tpu::compile_cache
