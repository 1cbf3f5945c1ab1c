// A module printed by Builder::finish, turned into one private function of
// another module: how a fused eager window calls each op's own program.
#pragma once
#include <string>

namespace torch_tpu::hlo {

// The module's @main as `func.func private @symbol`, without its donation
// attributes (only the calling module's @main donates). Throws
// std::invalid_argument when the text is not one function printed by Builder.
std::string main_as_private_function(const std::string& module_text, const std::string& symbol);

// Whether the module holds functions besides @main (a kernel traced by JAX).
bool has_other_functions(const std::string& module_text);

}  // namespace torch_tpu::hlo
