#include "compile_cache/entry.h"

#include <cstring>

namespace torch_tpu::compile_cache {

namespace {

constexpr char kMagic[8] = {'T', 'P', 'U', 'X', 'L', 'A', 'C', '\0'};

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(char(uint8_t(v >> (8 * i))));
}

uint64_t get_le(const std::string& in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(uint8_t(in[at + i])) << (8 * i);
  return v;
}

}  // namespace

std::string encode_entry(const Digest& key, const std::string& payload) {
  std::string out;
  out.reserve(kHeaderSize + payload.size());
  out.append(kMagic, sizeof(kMagic));
  put_le(out, kFormatVersion, 4);
  put_le(out, kHeaderSize, 4);
  out.append(reinterpret_cast<const char*>(key.data()), key.size());
  put_le(out, payload.size(), 8);
  Digest sum = sha256(payload);
  out.append(reinterpret_cast<const char*>(sum.data()), sum.size());
  out.append(payload);
  return out;
}

std::string decode_entry(std::string bytes, const Digest& key,
                         std::string* payload) {
  if (bytes.size() < kHeaderSize) return "truncated header";
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return "not a cache entry (bad magic)";
  }
  if (get_le(bytes, 8, 4) != kFormatVersion ||
      get_le(bytes, 12, 4) != kHeaderSize) {
    return "format version " + std::to_string(get_le(bytes, 8, 4)) +
           " (this build reads " + std::to_string(kFormatVersion) + ")";
  }
  if (std::memcmp(bytes.data() + 16, key.data(), key.size()) != 0) {
    return "written for another key";
  }
  const uint64_t length = get_le(bytes, 48, 8);
  if (bytes.size() - kHeaderSize != length) {
    return "payload is " + std::to_string(bytes.size() - kHeaderSize) +
           " bytes, header says " + std::to_string(length) + " (truncated?)";
  }
  Digest sum = sha256(bytes.data() + kHeaderSize, length);
  if (std::memcmp(bytes.data() + 56, sum.data(), sum.size()) != 0) {
    return "checksum mismatch";
  }
  bytes.erase(0, kHeaderSize);
  *payload = std::move(bytes);
  return "";
}

}  // namespace torch_tpu::compile_cache
