#include "eager/cache_key_fields.h"
#include "eager/float64_rule.h"

#include <ATen/Context.h>
#include <c10/core/DefaultDtype.h>

#include <cstdlib>
#include <sstream>

namespace torch_tpu::eager {

namespace {

const char* field_name(KeyField f) {
  switch (f) {
    case KeyField::OperandSources: return "operand_sources";
    case KeyField::DefaultDtype: return "default_dtype";
    case KeyField::DeterministicAlgorithms: return "deterministic_algorithms";
    case KeyField::MatmulPrecision: return "matmul_precision";
    case KeyField::Float64Rule: return "float64_rule";
  }
  return "";
}

bool narrowed(KeyField f) {
  static const std::string list = [] {
    const char* v = std::getenv("TORCH_TPU_DEBUG_NARROW_CACHE_KEY");
    return std::string(v ? v : "");
  }();
  if (list.empty()) return false;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ','))
    if (item == field_name(f)) return true;
  return false;
}

}  // namespace

// Per thread, as torch.tpu.precision() contexts nest per thread.
thread_local std::optional<ops::MatmulPrecision> precision_override;

void set_matmul_precision_override(std::optional<ops::MatmulPrecision> p) { precision_override = p; }
std::optional<ops::MatmulPrecision> matmul_precision_override() { return precision_override; }

ops::MatmulPrecision matmul_precision() {
  if (precision_override) return *precision_override;
  try {
    switch (at::globalContext().float32MatmulPrecision()) {
      case at::Float32MatmulPrecision::HIGH: return ops::MatmulPrecision::High;
      case at::Float32MatmulPrecision::MEDIUM: return ops::MatmulPrecision::Medium;
      default: return ops::MatmulPrecision::Highest;
    }
  } catch (const c10::Error&) {
    // Mixed legacy and per-backend fp32_precision settings have no single
    // answer (PyTorch refuses to give one): keep full precision.
    return ops::MatmulPrecision::Highest;
  }
}

bool key_field_enabled(KeyField field) {
  static const bool enabled[] = {!narrowed(KeyField::OperandSources), !narrowed(KeyField::DefaultDtype),
                                 !narrowed(KeyField::DeterministicAlgorithms), !narrowed(KeyField::MatmulPrecision),
                                 !narrowed(KeyField::Float64Rule)};
  return enabled[static_cast<int>(field)];
}

void key_global_state(std::string& key) {
  // Autocast state joins here once the backend has autocast.
  if (key_field_enabled(KeyField::DefaultDtype))
    key.push_back(static_cast<char>(c10::typeMetaToScalarType(c10::get_default_dtype())));
  if (key_field_enabled(KeyField::DeterministicAlgorithms))
    key.push_back(at::globalContext().deterministicAlgorithms() ? 'D' : 'd');
  if (key_field_enabled(KeyField::MatmulPrecision)) key.push_back(static_cast<char>(matmul_precision()));
  if (key_field_enabled(KeyField::Float64Rule)) key.push_back(platform_lacks_float64() ? 'T' : 't');
  key.push_back('|');
}

}  // namespace torch_tpu::eager
