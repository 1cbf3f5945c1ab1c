#include "ops/registry.h"

#include <map>
#include <stdexcept>

namespace torch_tpu::ops {

namespace {
std::map<std::string, LoweringRule>& table() {
  static std::map<std::string, LoweringRule> t;  // function-local: safe static-init order
  return t;
}
}  // namespace

void register_lowering(const std::string& op, LoweringRule rule) {
  if (!table().emplace(op, std::move(rule)).second)
    throw std::logic_error("torch_tpu: two lowering rules for " + op);
}

const LoweringRule* find_lowering(const std::string& op) {
  auto it = table().find(op);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> lowered_ops() {
  std::vector<std::string> names;
  for (const auto& kv : table()) names.push_back(kv.first);
  return names;
}

}  // namespace torch_tpu::ops
