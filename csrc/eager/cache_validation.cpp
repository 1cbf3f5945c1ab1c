#include "eager/cache_validation.h"
#include "eager/program_text.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <cstdlib>
#include <sstream>

namespace torch_tpu::eager {

namespace {

std::atomic<int64_t> validations{0};

std::string describe(const FreshOutput& f) {
  if (!f.defined) return "undefined";
  std::ostringstream s;
  s << c10::toString(f.dtype) << c10::IntArrayRef(f.sizes) << " strides " << c10::IntArrayRef(f.strides);
  return s.str();
}

[[noreturn]] void gap(const std::string& op, const std::string& fact) {
  TORCH_CHECK(false, "torch_tpu cache validation: ", op,
              ": the cached program was built for a different call (the cache key misses a fact it depends "
              "on): ", fact);
}

}  // namespace

bool cache_validation_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("TORCH_TPU_VALIDATE_CACHE");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

int64_t cache_validations() { return validations.load(); }

void check_program_fits(const std::string& op, const ProgramFacts& cached, const ProgramFacts& now) {
  validations++;
  if (cached.fresh.size() != now.fresh.size())
    gap(op, "it has " + std::to_string(cached.fresh.size()) + " outputs, this call " +
                std::to_string(now.fresh.size()));
  for (size_t k = 0; k < now.fresh.size(); ++k) {
    std::string a = describe(cached.fresh[k]), b = describe(now.fresh[k]);
    if (a != b) gap(op, "output " + std::to_string(k) + " is " + a + " there, " + b + " in this call");
  }
  if (cached.parameters.size() != now.parameters.size())
    gap(op, "it has " + std::to_string(cached.parameters.size()) + " parameters, this call " +
                std::to_string(now.parameters.size()));
  for (size_t k = 0; k < now.parameters.size(); ++k)
    if (cached.parameters[k] != now.parameters[k])
      gap(op, "parameter " + std::to_string(k) + " is " + cached.parameters[k] + " there, " + now.parameters[k] +
                  " in this call");
  if (cached.checks != now.checks)
    gap(op, "its runtime checks report other errors (" + std::to_string(cached.checks.size()) + " checks there, " +
                std::to_string(now.checks.size()) + " in this call)");
  if (cached.text != now.text) {
    size_t pos = 0;
    while (pos < cached.text.size() && pos < now.text.size() && cached.text[pos] == now.text[pos]) ++pos;
    gap(op, "the programs differ at `" + line_at(cached.text, pos) + "` (this call: `" + line_at(now.text, pos) +
                "`)");
  }
}

}  // namespace torch_tpu::eager
