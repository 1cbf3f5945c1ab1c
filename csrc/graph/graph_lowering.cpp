// Graph description -> one StableHLO function: every node becomes an OpCall
// for the same rules the eager executor uses.
#include <stdexcept>

#include "eager/float64_rule.h"
#include "graph/graph_desc.h"
#include "graph/structural_rules.h"
#include "ops/lowering_error.h"
#include "ops/lowering_helpers.h"
#include "ops/number_precision.h"
#include "ops/registry.h"

namespace torch_tpu::graph {
namespace {

using ops::Arg;

const ops::LoweringRule* rule_for(const std::string& op) {
  if (const ops::LoweringRule* r = find_structural_rule(op)) return r;
  return ops::find_lowering(op);
}

// Whether the node's f64 number constants may be f32 (a TPU has no f64):
// the eager rule (ops/number_precision.h), with the results known.
bool f32_numbers(const GraphNode& node, const std::vector<hlo::Value>& values) {
  ops::NumberContext c;
  bool pred_input = false;
  for (const NodeArg& na : node.args) {
    if (na.kind == Arg::Kind::DType) c.see_dtype_arg(na.dtype);
    if (na.constant && ops::is_wide(na.number_dtype) && !na.is_number)
      c.wide = true;  // a 0-d float64 CPU constant tensor keeps its type next to integers
    if (na.kind != Arg::Kind::Tensor && na.kind != Arg::Kind::TensorList) continue;
    for (int id : na.values) {
      if (id < 0) continue;
      hlo::DType t = values.at(id).type.dtype;
      c.see_tensor(t);
      pred_input |= t == hlo::DType::Pred;
    }
  }
  std::vector<hlo::DType> results;
  for (const hlo::TensorType& o : node.outputs) {
    c.see_tensor(o.dtype);
    results.push_back(o.dtype);
  }
  switch (ops::number_width(c, /*exact_in_narrow=*/false)) {
    case ops::NumberWidth::Narrow: return true;
    case ops::NumberWidth::NarrowIfFloatResults: return ops::results_take_narrow(results, pred_input);
    case ops::NumberWidth::Keep: return false;
  }
  return false;
}

hlo::Value number_constant(hlo::Builder& b, const NodeArg& a, bool f32) {
  if (a.number_dtype == hlo::DType::Pred) return b.constant_bool(a.b);
  // A Python number exact in f32 is the same number either way.
  bool exact = a.is_number && a.number_dtype == hlo::DType::F64 && static_cast<double>(static_cast<float>(a.d)) == a.d;
  if (a.number_dtype == hlo::DType::F64 && (f32 || exact || a.d != a.d)) return b.constant_float(hlo::DType::F32, a.d);
  if (hlo::is_float(a.number_dtype)) return b.constant_float(a.number_dtype, a.d);
  return b.constant_int(a.number_dtype, a.i);
}

// The OpCall for `node` and its operands, in the eager parser's conventions.
void build_call(hlo::Builder& b, const GraphNode& node, const std::vector<hlo::Value>& values,
                const std::vector<hlo::Value>& generator_operands, ops::OpCall& call,
                std::vector<hlo::Value>& operands) {
  auto add_operand = [&](const hlo::Value& v, bool is_number) {
    operands.push_back(v);
    call.operands.push_back(v.type);
    call.operand_is_number.push_back(is_number);
    call.operand_contiguous.push_back(-1);
    return static_cast<int>(operands.size()) - 1;
  };
  bool f32 = f32_numbers(node, values) || eager::platform_lacks_float64();
  for (const NodeArg& na : node.args) {
    Arg a;
    a.kind = na.kind;
    switch (na.kind) {
      case Arg::Kind::Tensor:
      case Arg::Kind::Scalar:
        a.operands.push_back(na.constant ? add_operand(number_constant(b, na, f32), na.is_number)
                                         : add_operand(values.at(na.values.at(0)), false));
        call.operand_contiguous.back() = static_cast<int8_t>(na.contiguous);
        break;
      case Arg::Kind::TensorList:
        for (int id : na.values) a.operands.push_back(id < 0 ? -1 : add_operand(values.at(id), false));
        break;
      case Arg::Kind::Generator:
        for (int k = 0; k < 2; ++k) a.operands.push_back(add_operand(generator_operands.at(2 * na.generator + k), false));
        break;
      default:
        a.i = na.i;
        a.d = na.d;
        a.b = na.b;
        a.ints = na.ints;
        a.dtype = na.dtype;
        a.s = na.s;
    }
    call.args.push_back(std::move(a));
  }
}

template <typename E>
[[noreturn]] void rethrow_with_node(const E& e, size_t k, const GraphNode& node) {
  throw E("graph node " + std::to_string(k) + " (aten." + node.op + "): " + e.what());
}

}  // namespace

bool has_graph_lowering(const std::string& op) { return rule_for(op) != nullptr; }

std::vector<hlo::Value> lower_graph(hlo::Builder& b, const GraphDesc& g, const std::vector<hlo::Value>& inputs,
                                    const std::vector<hlo::Value>& generator_operands) {
  if (static_cast<int>(inputs.size()) != g.num_inputs)
    throw std::invalid_argument("graph: expected " + std::to_string(g.num_inputs) + " inputs, got " +
                                std::to_string(inputs.size()));
  std::vector<hlo::Value> values = inputs;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const GraphNode& node = g.nodes[k];
    const ops::LoweringRule* rule = rule_for(node.op);
    if (!rule) throw std::invalid_argument("graph: no lowering rule for aten." + node.op);
    ops::OpCall call;
    call.op = node.op;
    call.default_float = g.default_float;
    call.matmul_precision = g.matmul_precision;
    call.outputs = node.outputs;
    std::vector<hlo::Value> operands;
    std::vector<hlo::Value> results;
    try {
      build_call(b, node, values, generator_operands, call, operands);
      results = (*rule)(b, call, operands);
    } catch (const ops::NotLowered& e) {
      throw NodeNotLowered("graph node " + std::to_string(k) + " (aten." + node.op + "): " + e.what());
    } catch (const std::out_of_range& e) {
      rethrow_with_node(e, k, node);
    } catch (const std::invalid_argument& e) {
      rethrow_with_node(e, k, node);
    }
    if (results.size() != node.outputs.size())
      throw std::invalid_argument("graph node " + std::to_string(k) + " (aten." + node.op + "): the rule produced " +
                                  std::to_string(results.size()) + " results, the graph expects " +
                                  std::to_string(node.outputs.size()));
    for (size_t r = 0; r < results.size(); ++r)
      if (results[r].type != node.outputs[r])
        throw std::invalid_argument("graph node " + std::to_string(k) + " (aten." + node.op + "): result " +
                                    std::to_string(r) + " is " + results[r].type.str() + ", the graph expects " +
                                    node.outputs[r].str());
    values.insert(values.end(), results.begin(), results.end());
  }
  std::vector<hlo::Value> out;
  for (const auto& w : g.writes) out.push_back(ops::to_type(b, values.at(w.second), inputs.at(w.first).type));
  for (int id : g.results) out.push_back(values.at(id));
  return out;
}

}  // namespace torch_tpu::graph
