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

bool touches_complex(const OpCall& c, const std::vector<hlo::Value>& operands) {
  for (const hlo::Value& v : operands)
    if (hlo::is_complex(v.type.dtype)) return true;
  for (const hlo::TensorType& t : c.outputs)
    if (hlo::is_complex(t.dtype)) return true;
  return false;
}
}  // namespace

void accept_complex(const std::string& op) { complex_ops().insert(op); }

void register_lowering(const std::string& op, LoweringRule rule) {
  // Checked per call, so TORCH_TPU_ACCEPTS_COMPLEX may come in any file and order.
  rule = [op, inner = std::move(rule)](hlo::Builder& b, const OpCall& c, const std::vector<hlo::Value>& v) {
    if (!complex_ops().count(op) && touches_complex(c, v))
      throw NoComplexRule(op + " has no complex lowering");
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
