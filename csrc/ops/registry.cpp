#include "ops/registry.h"

#include <map>
#include <set>
#include <stdexcept>

#include "ops/lowering_error.h"

namespace torch_tpu::ops {

namespace {
std::map<std::string, LoweringRule>& table() {
  static std::map<std::string, LoweringRule> t;  // function-local: safe static-init order
  return t;
}

std::set<std::string>& complex_ops() {
  static std::set<std::string> s;
  return s;
}

std::map<std::string, LoweringRule>& complex_table() {
  static std::map<std::string, LoweringRule> t;
  return t;
}

bool touches_complex(const OpCall& c, const std::vector<hlo::Value>& operands) {
  for (const hlo::Value& v : operands)
    if (hlo::is_complex(v.type.dtype)) return true;
  for (const hlo::TensorType& t : c.outputs)
    if (hlo::is_complex(t.dtype)) return true;
  return false;
}
}  // namespace

void accept_complex(const std::string& op) { complex_ops().insert(op); }

void register_complex_lowering(const std::string& op, LoweringRule rule) {
  if (!complex_table().emplace(op, std::move(rule)).second)
    throw std::logic_error("torch_tpu: two complex lowering rules for " + op);
}

void register_lowering(const std::string& op, LoweringRule rule) {
  // Looked up per call, so TORCH_TPU_ACCEPTS_COMPLEX and complex rules may come
  // in any file and order.
  rule = [op, inner = std::move(rule)](hlo::Builder& b, const OpCall& c, const std::vector<hlo::Value>& v) {
    if (touches_complex(c, v) && !complex_ops().count(op)) {
      auto it = complex_table().find(op);
      if (it == complex_table().end()) throw NoComplexRule(op + " has no complex lowering");
      return it->second(b, c, v);
    }
    return inner(b, c, v);
  };
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
