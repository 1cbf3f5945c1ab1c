#include "pjrt/compile_options.h"

#include <cstdint>

namespace torch_tpu::pjrt {
namespace {

// Minimal protobuf wire-format writer: varint (wire type 0) and
// length-delimited (wire type 2) fields are all CompileOptionsProto needs.
class ProtoWriter {
 public:
  void varint_field(int field, uint64_t value) {
    tag(field, 0);
    varint(value);
  }
  // int64 fields encode negatives as 10-byte two's complement varints.
  void int64_field(int field, int64_t value) {
    varint_field(field, static_cast<uint64_t>(value));
  }
  void bool_field(int field, bool value) { varint_field(field, value ? 1 : 0); }
  // Strings, bytes and embedded messages share this encoding.
  void bytes_field(int field, const std::string& bytes) {
    tag(field, 2);
    varint(bytes.size());
    out_ += bytes;
  }
  const std::string& str() const { return out_; }

 private:
  void tag(int field, int wire_type) {
    varint((static_cast<uint64_t>(field) << 3) | wire_type);
  }
  void varint(uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }

  std::string out_;
};

// Field numbers from xla/pjrt/proto/compile_options.proto.
namespace build_options {
constexpr int kDeviceOrdinal = 1;
constexpr int kNumReplicas = 4;
constexpr int kNumPartitions = 5;
constexpr int kUseSpmdPartitioning = 6;
}  // namespace build_options
namespace compile_options {
constexpr int kExecutableBuildOptions = 3;
constexpr int kCompilePortableExecutable = 4;
constexpr int kEnvOptionOverrides = 7;
}  // namespace compile_options
constexpr int kOptionOverrideStringField = 1;
constexpr int kMapEntryKey = 1;
constexpr int kMapEntryValue = 2;

}  // namespace

CompileSettings with_default_overrides(CompileSettings settings, const OptionOverrides& defaults) {
  for (const auto& entry : defaults) {
    bool named = false;
    for (const auto& own : settings.env_option_overrides) named = named || own.first == entry.first;
    if (!named) settings.env_option_overrides.push_back(entry);
  }
  return settings;
}

std::string serialize_compile_options(const CompileSettings& settings) {
  ProtoWriter build;
  build.int64_field(build_options::kDeviceOrdinal, -1);
  build.int64_field(build_options::kNumReplicas, settings.num_replicas);
  build.int64_field(build_options::kNumPartitions, settings.num_partitions);
  if (settings.num_partitions > 1) {
    build.bool_field(build_options::kUseSpmdPartitioning, true);
  }

  ProtoWriter options;
  options.bytes_field(compile_options::kExecutableBuildOptions, build.str());
  options.bool_field(compile_options::kCompilePortableExecutable,
                     settings.portable);
  // A proto map is a repeated message {key = 1; value = 2}.
  for (const auto& [name, value] : settings.env_option_overrides) {
    ProtoWriter override_value;
    override_value.bytes_field(kOptionOverrideStringField, value);
    ProtoWriter entry;
    entry.bytes_field(kMapEntryKey, name);
    entry.bytes_field(kMapEntryValue, override_value.str());
    options.bytes_field(compile_options::kEnvOptionOverrides, entry.str());
  }
  return options.str();
}

}  // namespace torch_tpu::pjrt
