// SHA-256 (FIPS 180-4): the compile cache's key and entry checksum. Written
// here so the cache adds no dependency; speed matters little next to XLA.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace torch_tpu::compile_cache {

using Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  Sha256& update(const void* data, size_t size);
  Sha256& update(const std::string& s) { return update(s.data(), s.size()); }
  // Length-prefixed field: "ab"+"c" and "a"+"bc" hash differently.
  Sha256& field(const std::string& s);
  Digest finish();  // the object is spent afterwards

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

Digest sha256(const void* data, size_t size);
inline Digest sha256(const std::string& s) { return sha256(s.data(), s.size()); }
std::string hex(const Digest& d);

}  // namespace torch_tpu::compile_cache
