#include "hlo/function_text.h"

#include <stdexcept>

namespace torch_tpu::hlo {

namespace {
const char kMain[] = "  func.func public @main(";
const char kAlias[] = " {tf.aliasing_output = ";
}  // namespace

bool has_other_functions(const std::string& text) {
  size_t first = text.find("func.func");
  return first != std::string::npos && text.find("func.func", first + 1) != std::string::npos;
}

std::string main_as_private_function(const std::string& text, const std::string& symbol) {
  size_t start = text.find(kMain);
  // Builder::finish closes @main with "  }\n" and the module with "}\n".
  size_t end = text.rfind("\n  }\n");
  if (start == std::string::npos || end == std::string::npos || end < start || has_other_functions(text))
    throw std::invalid_argument("torch_tpu: not a one-function module printed by hlo::Builder");
  std::string signature_end = ") -> (";
  size_t sig = text.find(signature_end, start);
  std::string head = text.substr(start + sizeof(kMain) - 1, sig - (start + sizeof(kMain) - 1));
  std::string args;  // the parameters without their donation attributes
  for (size_t i = 0; i < head.size();) {
    size_t a = head.find(kAlias, i);
    if (a == std::string::npos) {
      args += head.substr(i);
      break;
    }
    args += head.substr(i, a - i);
    i = head.find('}', a) + 1;
  }
  return "  func.func private @" + symbol + "(" + args + text.substr(sig, end + 5 - sig);
}

}  // namespace torch_tpu::hlo
