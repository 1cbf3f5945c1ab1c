#include "eager/fused/window_state.h"

#include "hlo/builder.h"
#include "hlo/function_text.h"

namespace torch_tpu::eager::fused {

namespace {
void append(std::string& key, int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
void append(std::string& key, const std::vector<int>& v) {
  append(key, static_cast<int64_t>(v.size()));
  for (int x : v) append(key, x);
}
}  // namespace

std::vector<int> Window::outputs() const {
  std::vector<int> out(storages.size(), -1);
  int n = 0;
  for (size_t s = 0; s < storages.size(); ++s)
    if (storages[s].written && storages[s].slot) out[s] = n++;
  return out;
}

OperandLayout operand_layout(const Window& w) {
  // A chosen threshold, not a tuned one: packing costs a by-content lookup
  // per dtype per run, and an upload when the values are new; a window of
  // 128 adds (bench/eager_overhead.py) ran faster packed, a single op needs none.
  constexpr size_t kPackFrom = 16;
  OperandLayout l;
  size_t n = 0;
  bool whole_bytes = true;  // packed elements are copied byte-wise
  for (const RecordedOp& r : w.ops) {
    n += r.operands.size();
    for (const OperandValue& v : r.operands)
      whole_bytes &= v.value.dtype == hlo::DType::Pred || hlo::dtype_bits(v.value.dtype) % 8 == 0;
  }
  l.packed = n >= kPackFrom && whole_bytes;
  if (!l.packed) return l;
  l.place.resize(w.ops.size());
  for (size_t i = 0; i < w.ops.size(); ++i) {
    for (const OperandValue& v : w.ops[i].operands) {
      size_t p = 0;
      while (p < l.pack_dtypes.size() && l.pack_dtypes[p] != v.value.dtype) ++p;
      if (p == l.pack_dtypes.size()) {
        l.pack_dtypes.push_back(v.value.dtype);
        l.pack_sizes.push_back(0);
      }
      l.place[i].emplace_back(static_cast<int>(p), l.pack_sizes[p]++);
    }
  }
  return l;
}

std::string window_key(const Window& w) {
  // A plan id stands for its op's whole cache key (program, parameter
  // layouts, scalar types); the ids of storages wire the ops together.
  std::string key;
  size_t words = w.ops.size() * 4;
  for (const RecordedOp& r : w.ops) words += r.bases.size() + r.targets.size() + r.fresh.size();
  key.reserve(8 * words + w.storages.size());
  for (const RecordedOp& r : w.ops) {
    append(key, static_cast<int64_t>(r.plan->id));
    append(key, r.bases);
    append(key, r.targets);
    append(key, r.fresh);
  }
  // Per storage: parameter or not, written or not, alive or not.
  for (const WindowStorage& s : w.storages)
    key.push_back(static_cast<char>('a' + (s.read_before_written ? 1 : 0) + (s.written ? 2 : 0) + (s.slot ? 4 : 0)));
  return key;
}

namespace {

// Whether the window's program would be its one op's program wrapped in a
// call: the op's parameters (its bases in order, then its operands) and its
// results (targets, fresh outputs, checks) are the window's own, in the same
// order, and nothing is donated. A window flushed right after one op (a host
// read of its result) is usually that.
bool is_one_ops_own_program(const Window& w) {
  if (w.ops.size() != 1 || operand_layout(w).packed) return false;
  const RecordedOp& r = w.ops[0];
  const OpPlan& plan = *r.plan;
  for (bool aliased : plan.base_aliased)
    if (aliased) return false;
  std::vector<int> params, results;
  std::vector<int> out = w.outputs();
  for (size_t s = 0; s < w.storages.size(); ++s) {
    const WindowStorage& st = w.storages[s];
    if (st.read_before_written && st.written) return false;  // would be donated
    if (st.read_before_written) params.push_back(static_cast<int>(s));
    if (out[s] >= 0) results.push_back(static_cast<int>(s));
  }
  if (params != r.bases) return false;
  std::vector<int> op_results(r.targets.begin(), r.targets.end());
  op_results.resize(r.targets.size() + r.fresh.size(), -1);
  size_t n = r.targets.size();
  for (size_t k = 0; k < r.fresh.size(); ++k) {
    if (plan.fresh_output[k] < 0) continue;
    if (r.fresh[k] < 0 || plan.fresh_output[k] >= static_cast<int>(op_results.size())) return false;
    op_results[plan.fresh_output[k]] = r.fresh[k];
    ++n;
  }
  op_results.resize(n);
  return results == op_results;
}

}  // namespace

std::string window_program(const Window& w) {
  // The op's own program, as strict mode compiles it: the two modes (and
  // processes, through the persistent cache) share one compiled program.
  if (is_one_ops_own_program(w)) return w.ops[0].plan->text;
  hlo::Builder b;
  std::vector<int> out = w.outputs();
  std::vector<hlo::Value> value(w.storages.size());
  for (size_t s = 0; s < w.storages.size(); ++s)
    if (w.storages[s].read_before_written) value[s] = b.parameter(w.storages[s].layout, out[s]);
  std::vector<std::vector<hlo::Value>> operands(w.ops.size());
  OperandLayout layout = operand_layout(w);
  if (layout.packed) {
    std::vector<hlo::Value> packs;
    for (size_t p = 0; p < layout.pack_dtypes.size(); ++p)
      packs.push_back(b.parameter(hlo::TensorType(layout.pack_dtypes[p], {layout.pack_sizes[p]})));
    for (size_t i = 0; i < w.ops.size(); ++i)
      for (auto [p, k] : layout.place[i])
        operands[i].push_back(b.reshape(b.slice(packs[p], {k}, {k + 1}, {1}), {}));
  } else {
    for (size_t i = 0; i < w.ops.size(); ++i)
      for (const OperandValue& v : w.ops[i].operands)
        operands[i].push_back(b.parameter(hlo::TensorType(v.value.dtype, {})));
  }
  std::vector<hlo::Value> checks;
  for (size_t i = 0; i < w.ops.size(); ++i) {
    const RecordedOp& r = w.ops[i];
    const OpPlan& plan = *r.plan;
    std::string symbol = "op" + std::to_string(plan.id);
    b.define_function(symbol, hlo::main_as_private_function(plan.text, symbol));
    std::vector<hlo::Value> args;
    for (int s : r.bases) args.push_back(value[s]);
    args.insert(args.end(), operands[i].begin(), operands[i].end());
    std::vector<hlo::TensorType> types = plan.target_layouts;
    for (size_t k = 0; k < plan.fresh.size(); ++k)
      if (plan.fresh_output[k] >= 0) types.push_back(plan.fresh_layouts[k]);
    for (const ops::RuntimeCheck& c : plan.checks) types.push_back(c.failed.type);
    std::vector<hlo::Value> res = b.call(symbol, args, types);
    for (size_t t = 0; t < r.targets.size(); ++t) value[r.targets[t]] = res[t];
    for (size_t k = 0; k < r.fresh.size(); ++k)
      if (r.fresh[k] >= 0) value[r.fresh[k]] = res[plan.fresh_output[k]];
    checks.insert(checks.end(), res.end() - plan.checks.size(), res.end());
  }
  std::vector<hlo::Value> results;
  for (size_t s = 0; s < w.storages.size(); ++s)
    if (out[s] >= 0) results.push_back(value[s]);
  results.insert(results.end(), checks.begin(), checks.end());
  return b.finish(results);
}

}  // namespace torch_tpu::eager::fused
