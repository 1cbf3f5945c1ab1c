#include "eager/op_variants.h"

#include <set>

#include "ops/registry.h"

namespace torch_tpu::eager {

std::string op_name(const c10::FunctionSchema& schema) {
  std::string n = schema.name();  // ATen ops without their namespace; others ("tpu::ragged_dot") with it
  if (n.rfind("aten::", 0) == 0) n = n.substr(6);
  if (!schema.overload_name().empty()) n += "." + schema.overload_name();
  return n;
}

namespace {

bool is_write(const c10::Argument& a) { return a.alias_info() && a.alias_info()->isWrite(); }

bool same_arg(const c10::Argument& a, const c10::Argument& b) {
  return a.name() == b.name() && a.type()->str() == b.type()->str();
}

std::string base_name(const c10::FunctionSchema& s) {
  std::string n = s.name();
  return n.rfind("aten::", 0) == 0 ? n.substr(6) : n;
}

// Number of leading args of `variant` that repeat `functional`'s args, when
// `variant` is its in-place or out= form; 0 when it is not.
size_t matches(const c10::FunctionSchema& functional, const c10::FunctionSchema& variant) {
  const auto& fa = functional.arguments();
  const auto& va = variant.arguments();
  std::string fb = base_name(functional), vb = base_name(variant);
  if (vb == fb + "_") {  // in-place: same arguments, self written
    if (fa.size() != va.size() || va.empty() || !is_write(va[0])) return 0;
    for (size_t i = 0; i < fa.size(); ++i)
      if (!same_arg(fa[i], va[i])) return 0;
    return fa.size();
  }
  if (vb == fb) {  // out=: the functional args, then kwarg-only written outs
    if (va.size() <= fa.size()) return 0;
    for (size_t i = 0; i < fa.size(); ++i)
      if (!same_arg(fa[i], va[i]) || is_write(va[i])) return 0;
    for (size_t i = fa.size(); i < va.size(); ++i)
      if (!is_write(va[i]) || !va[i].kwarg_only()) return 0;
    return fa.size();
  }
  return 0;
}

}  // namespace

const std::map<std::string, OpVariant>& op_variants() {
  static const std::map<std::string, OpVariant> table = [] {
    std::map<std::string, OpVariant> t;
    auto& dispatcher = c10::Dispatcher::singleton();
    std::map<std::string, std::vector<c10::OperatorHandle>> rules_by_base;
    for (const std::string& rule : ops::lowered_ops()) {
      auto dot = rule.find('.');
      bool qualified = rule.find("::") != std::string::npos;  // "tpu::ragged_dot": our own ops
      std::string name = (qualified ? "" : "aten::") + rule.substr(0, dot);
      std::string overload = dot == std::string::npos ? "" : rule.substr(dot + 1);
      auto handle = dispatcher.findSchema({name, overload});
      TORCH_CHECK(handle, "torch_tpu: lowering rule for unknown op ", rule);
      t.emplace(rule, OpVariant{rule, *handle, handle->schema().arguments().size()});
      if (!qualified) rules_by_base[rule.substr(0, dot)].push_back(*handle);
    }
    for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
      if (name.name.rfind("aten::", 0) != 0) continue;
      std::string base = name.name.substr(6);
      std::string stem = !base.empty() && base.back() == '_' ? base.substr(0, base.size() - 1) : base;
      auto it = rules_by_base.find(stem);
      if (it == rules_by_base.end()) continue;
      auto handle = dispatcher.findSchema(name);
      if (!handle) continue;
      std::string vname = op_name(handle->schema());
      if (t.count(vname)) continue;
      for (const c10::OperatorHandle& f : it->second) {
        if (size_t n = matches(f.schema(), handle->schema())) {
          t.emplace(vname, OpVariant{op_name(f.schema()), f, n});
          break;
        }
      }
    }
    return t;
  }();
  return table;
}

}  // namespace torch_tpu::eager
