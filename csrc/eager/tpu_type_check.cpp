#include "eager/tpu_type_check.h"
#include "eager/program_text.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <cstdlib>

namespace torch_tpu::eager {

namespace {

// The first f64 element type in the text ("tensor<f64>", "tensor<2xf64>",
// "complex<f64>"), or npos.
size_t find_f64(const std::string& text) {
  for (size_t pos = text.find("f64"); pos != std::string::npos; pos = text.find("f64", pos + 3)) {
    char before = pos ? text[pos - 1] : ' ';
    char after = pos + 3 < text.size() ? text[pos + 3] : ' ';
    if ((before == '<' || before == 'x') && (after == '>' || after == ',')) return pos;
  }
  return std::string::npos;
}

std::atomic<bool> check_on{[] {
  const char* v = std::getenv("TORCH_TPU_CHECK_TPU_TYPES");
  return v && *v && std::string(v) != "0";
}()};

}  // namespace

bool tpu_type_check_enabled() { return check_on.load(std::memory_order_relaxed); }
void set_tpu_type_check(bool on) { check_on = on; }

void check_tpu_types(const std::string& op, const std::vector<hlo::DType>& work, const std::string& text) {
  for (hlo::DType d : work)
    if (d == hlo::DType::F64 || d == hlo::DType::C128) return;  // float64 work: f64 is the user's choice
  size_t pos = find_f64(text);
  if (pos == std::string::npos) return;
  bool complex = pos >= 8 && text.compare(pos - 8, 8, "complex<") == 0;
  TORCH_CHECK(false, "torch_tpu TPU type check (TORCH_TPU_CHECK_TPU_TYPES=1): the program for ", op, " uses ",
              complex ? "complex128" : "float64", ", which a TPU does not have, though none of its tensors is "
              "float64 or complex128: `", line_at(text, pos), "`");
}

}  // namespace torch_tpu::eager
