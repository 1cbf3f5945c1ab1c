#include "eager/boxed_kernel.h"

#include <set>
#include <unordered_map>

#include <ATen/core/enum_tag.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DefaultDtype.h>
#include <torch/library.h>

#include "eager/cache_key_fields.h"
#include "eager/cache_validation.h"
#include "eager/call_parser.h"
#include "eager/dtype_map.h"
#include "eager/executor.h"
#include "eager/float8_ops.h"
#include "eager/meta_overrides/registry.h"
#include "eager/native_meta.h"
#include "eager/op_variants.h"
#include "eager/argument_kinds.h"
#include "eager/cpu_argument_checks.h"
#include "eager/out_dtype_check.h"
#include "eager/out_meta_memo.h"
#include "eager/scalar_range_checks.h"
#include "eager/written_overlap.h"
#include "ops/registry.h"

namespace torch_tpu::eager {

namespace {

bool is_tpu(const at::Tensor& t) { return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1; }

at::Tensor meta_like(const at::Tensor& t) {
  if (is_tpu(t)) return at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta));
  if (t.defined() && t.dim() == 0 && t.device().is_cpu() && !t.unsafeGetTensorImpl()->is_wrapped_number()) {
    // A 0-d CPU tensor joins as a meta scalar (some meta kernels insist on one
    // device). Python numbers stay CPU wrapped numbers: Python meta kernels
    // read them as numbers.
    return at::empty_strided({}, {}, t.options().device(c10::kMeta));
  }
  return t;
}

// Reductions whose out= variants compute in the out tensor's dtype.
bool reduces_in_out_dtype(const std::string& rule) {
  static const std::set<std::string> ops = {"sum", "sum.dim_IntList", "prod", "prod.dim_int", "nansum", "all",
                                            "all.dim", "all.dims", "any", "any.dim", "any.dims"};
  return ops.count(rule) > 0;
}

// Runs `handle` on meta tensors shaped like the first `nargs` arguments:
// PyTorch's own shape and dtype rules (and their errors) decide the outputs.
std::vector<c10::IValue> run_meta(const c10::OperatorHandle& handle, const torch::jit::Stack& stack, size_t first,
                                  size_t nargs, bool all_outputs = false) {
  if (const MetaOverride* m = find_meta_override(handle.operator_name())) return (*m)(stack, first);
  torch::jit::Stack meta;
  for (size_t i = 0; i < nargs; ++i) {
    const c10::IValue& v = stack[first + i];
    if (all_outputs && v.isBoolList()) {
      // output_mask: ask for every output to learn the shapes of masked ones
      c10::List<bool> all;
      for (size_t k = 0; k < v.toBoolList().size(); ++k) all.push_back(true);
      meta.emplace_back(all);
    } else if (v.isTensor()) {
      meta.emplace_back(meta_like(v.toTensor()));
    } else if (v.isTensorList()) {
      std::vector<at::Tensor> ts;
      for (const at::Tensor& t : v.toTensorList().vec()) ts.push_back(meta_like(t));
      meta.emplace_back(ts);
    } else if (is_tensors_list(v)) {  // Tensor?[]
      c10::List<std::optional<at::Tensor>> ts;
      for (const c10::IValue& e : v.toListRef())
        ts.push_back(e.isNone() ? std::optional<at::Tensor>() : std::optional<at::Tensor>(meta_like(e.toTensor())));
      meta.emplace_back(ts);
    } else {
      meta.push_back(v);
    }
  }
  call_meta_kernel(handle, meta);
  return meta;
}

bool writes(const c10::Argument& a) { return a.alias_info() && a.alias_info()->isWrite(); }

// What a call learns from its schema alone, looked up once per op and thread
// (by the schema's address: registered schemas stay put).
struct OpStatics {
  std::string op;  // op_name()
  const OpVariant* variant;
  const ops::LoweringRule* rule;
  bool is_index_tensor;
  bool meta_reads_values;  // its meta override reads tensor values: never the out= memo's sizes
  std::vector<ScalarRangeCheck> scalar_checks;  // numbers the CPU kernel range-checks
  CpuArgumentChecks cpu_checks;                 // arguments only the CPU kernel checks
  WrittenOverlapRule overlap;  // what its written tensors may share with its inputs
};

const OpStatics& statics_of(const c10::FunctionSchema& schema) {
  thread_local std::unordered_map<const c10::FunctionSchema*, OpStatics> known;
  auto it = known.find(&schema);
  if (it != known.end()) return it->second;
  OpStatics s;
  s.op = op_name(schema);
  s.variant = &op_variants().at(s.op);
  s.rule = ops::find_lowering(s.variant->rule);
  s.is_index_tensor = schema.name() == "aten::index" && schema.overload_name() == "Tensor";
  s.meta_reads_values = meta_override_reads_values(schema.operator_name());
  s.scalar_checks = scalar_range_checks(schema);
  s.cpu_checks = cpu_argument_checks_of(schema);
  s.overlap = written_overlap_rule(schema);
  return known.emplace(&schema, std::move(s)).first->second;
}

void boxed_lowered_op(const c10::OperatorHandle& handle, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = handle.schema();
  size_t nargs = schema.arguments().size();
  size_t first = stack->size() - nargs;
  const OpStatics& statics = statics_of(schema);
  if (statics.is_index_tensor) {
    auto indices = (*stack)[first + 1].to<c10::List<std::optional<at::Tensor>>>();
    if (has_mask_index(indices)) {
      at::Tensor out = index_by_masks((*stack)[first].toTensor(), indices);
      torch::jit::drop(*stack, nargs);
      stack->emplace_back(std::move(out));
      return;
    }
  }
  if (!statics.scalar_checks.empty()) check_scalar_ranges(statics.scalar_checks, *stack, first, nargs);
  if (statics.cpu_checks.asked_now(CpuArgumentCheck::kEveryCall, *stack, first))
    check_arguments_like_cpu(handle, *stack, first, nargs);
  PooledCall pooled;
  ParsedCall& p = *pooled;
  parse_call(schema, statics.op, *stack, first, p);
  const OpVariant& variant = *statics.variant;
  const ops::LoweringRule* rule = statics.rule;
  TORCH_CHECK(rule, "torch_tpu: no lowering rule for ", variant.rule);
  TORCH_CHECK(p.device_index >= 0, p.inv.op, ": no tpu tensor among the arguments");
  p.inv.device_index = p.device_index;
  // A rule registered for this very op sees all its arguments and writes its
  // outputs directly; an in-place/out= variant runs its functional op's rule.
  bool direct = variant.rule == p.inv.op;
  const auto& returns = schema.returns();

  std::vector<c10::IValue> meta_results;
  bool meta_done = false;
  bool data_dependent = false;
  auto meta = [&]() -> const std::vector<c10::IValue>& {
    if (!meta_done) {
      try {
        meta_results = run_meta(handle, *stack, first, nargs);
      } catch (const c10::NotImplementedError&) {
        // The output shape depends on values (x[mask], nonzero): no static program.
        // Our own overrides never depend on values: theirs is the CPU's refusal
        // (a dtype it has no kernel for), raised as it is.
        data_dependent = find_meta_override(handle.operator_name()) == nullptr;
        throw;
      }
    }
    meta_done = true;
    return meta_results;
  };
  bool has_out = false;
  for (size_t i : p.write_args) has_out |= schema.arguments()[i].kwarg_only();
  if (has_out) {
    // out= tensors may need resizing before the program's key is known: the
    // sizes the meta kernel gave this very signature before (out_meta_memo.h),
    // or the meta kernel's (it resized its copies, returned as the written aliases).
    thread_local std::string memo_key;
    bool keyed = !statics.meta_reads_values &&
                 out_meta_key(p.inv.op, p.inv.static_key, *stack, first, nargs, memo_key);
    const OutSizes* known = keyed ? find_out_meta(memo_key) : nullptr;
    if (known && !cache_validation_enabled()) {
      for (size_t k = 0; k < known->size(); ++k) {
        at::Tensor& real = p.inv.targets.at(k);
        if (real.sizes() != at::IntArrayRef((*known)[k])) real.resize_((*known)[k]);
      }
    } else {  // a miss, or a hit that TORCH_TPU_VALIDATE_CACHE=1 checks against the meta kernel
      try {
        meta();
      } catch (const c10::NotImplementedError&) {
        if (!data_dependent) throw;
        run_cpu_fallback(handle, stack);
        return;
      }
      const auto& m = meta();
      OutSizes sizes;
      bool quiet = true;  // no non-empty output resized (that warns, on every call)
      size_t k = 0;
      for (size_t r = 0; r < returns.size() && r < m.size(); ++r) {
        if (!writes(returns[r])) continue;
        at::Tensor& real = p.inv.targets.at(k++);
        const at::Tensor& shaped = m[r].toTensor();
        if (real.sizes() != shaped.sizes()) {
          quiet = quiet && real.numel() == 0;
          real.resize_(shaped.sizes());
        }
        sizes.push_back(shaped.sizes().vec());
      }
      if (known) {
        TORCH_CHECK(sizes == *known, "torch_tpu: ", p.inv.op, ": the remembered out= sizes differ from the meta "
                    "kernel's (the out_meta_memo key misses a fact)");
      } else if (keyed && quiet && k == p.inv.targets.size()) {
        remember_out_meta(memo_key, std::move(sizes));
      }
    }
  }
  // The closures capture this frame by reference; the Invocation holds
  // one-pointer wrappers of them, which std::function keeps without allocating.
  auto infer_fresh = [&]() {
    std::vector<FreshOutput> fresh;
    bool any = false;
    for (const auto& r : returns) any |= !writes(r);
    if (!any) return fresh;
    const auto& m = meta();
    std::vector<c10::IValue> full;  // every output, when some were masked off
    for (size_t r = 0; r < returns.size(); ++r) {
      if (writes(returns[r])) continue;
      if (m.at(r).isTensorList()) {  // a Tensor[] result (tpu::optimization_barrier): one output each
        for (const at::Tensor& t : m[r].toTensorList().vec())
          fresh.push_back(FreshOutput{t.scalar_type(), t.sizes().vec(), t.strides().vec(), true});
        continue;
      }
      const at::Tensor* t = &m.at(r).toTensor();
      bool defined = t->defined();
      if (!defined) {
        if (full.empty()) full = run_meta(handle, *stack, first, nargs, /*all_outputs=*/true);
        t = &full.at(r).toTensor();
        if (!t->defined()) {  // not computable here either (e.g. grad of an absent bias)
          fresh.push_back(FreshOutput{c10::kFloat, {}, {}, false});
          continue;
        }
      }
      fresh.push_back(FreshOutput{t->scalar_type(), t->sizes().vec(), t->strides().vec(), defined});
    }
    return fresh;
  };
  p.inv.infer_fresh = [f = &infer_fresh]() { return (*f)(); };
  auto lower = [&](hlo::Builder& b, const std::vector<hlo::Value>& tensors, const std::vector<hlo::Value>& scalars) {
    // Only on a miss: dtypes are in the key, so a cached program passed it.
    // The default dtype and matmul precision are key fields too, read here
    // (still inside this call) so a hit pays for neither.
    check_float8_support(schema, *stack, first);
    if (statics.cpu_checks.asked_now(CpuArgumentCheck::kAtBuild, *stack, first))
      check_arguments_like_cpu(handle, *stack, first, nargs);
    ops::OpCall call;
    call.op = variant.rule;
    call.default_float = to_hlo(c10::typeMetaToScalarType(c10::get_default_dtype()));
    call.matmul_precision = matmul_precision();
    size_t n_args = direct ? p.args.size() : variant.num_functional_args;
    call.args.assign(p.args.begin(), p.args.begin() + n_args);
    std::vector<hlo::Value> operands;
    for (size_t k = 0; k < p.input_of_operand.size(); ++k)
      operands.push_back(p.input_of_operand[k] >= 0 ? tensors[p.input_of_operand[k]]
                                                   : scalars[p.scalar_of_operand[k]]);
    for (const hlo::Value& o : operands) call.operands.push_back(o.type);
    call.operand_is_number = p.operand_is_number;
    for (int input : p.input_of_operand)
      call.operand_contiguous.push_back(input >= 0 && p.inv.inputs[input].is_contiguous() ? 1 : 0);
    if (direct) {
      for (const at::Tensor& t : p.inv.targets)
        call.outputs.emplace_back(to_hlo(t.scalar_type(), call.op.c_str()), t.sizes().vec());
      for (const FreshOutput& f : p.inv.infer_fresh())
        call.outputs.emplace_back(to_hlo(f.dtype, call.op.c_str()), f.sizes);
      return (*rule)(b, call, operands);
    }
    meta();  // the variant's own checks (in-place broadcasting, output casts)
    std::vector<c10::IValue> fm = run_meta(variant.functional, *stack, first, n_args);
    for (const c10::IValue& r : fm) {
      const at::Tensor& t = r.toTensor();
      call.outputs.emplace_back(to_hlo(t.scalar_type(), call.op.c_str()), t.sizes().vec());
    }
    // sum/prod/nansum/all/any into an out= of another dtype reduce in out's
    // dtype (the CPU converts the input first: 0.5 counts as 0 for an int out).
    if (has_out && reduces_in_out_dtype(variant.rule))
      for (size_t t = 0; t < p.inv.targets.size() && t < call.outputs.size(); ++t)
        call.outputs[t].dtype = to_hlo(p.inv.targets[t].scalar_type(), call.op.c_str());
    // The CPU's TensorIterator refuses an unsafe cast of the result into an
    // in-place or pointwise out= tensor (float into int, complex into real);
    // PyTorch's meta kernels don't check it, and the write-back would cast.
    bool in_place = !has_out;
    if (in_place || handle.hasTag(at::Tag::pointwise)) {
      for (size_t t = 0; t < p.inv.targets.size() && t < fm.size(); ++t) {
        c10::ScalarType from = fm[t].toTensor().scalar_type(), to = p.inv.targets[t].scalar_type();
        TORCH_CHECK(c10::canCast(from, to), "result type ", from, " can't be cast to the desired output type ", to);
      }
    }
    // Some CPU kernels refuse any other out= dtype (neg, clamp, hardtanh): theirs to say.
    bool out_dtype_differs = false;
    for (size_t t = 0; t < p.inv.targets.size() && t < fm.size(); ++t)
      out_dtype_differs |= fm[t].toTensor().scalar_type() != p.inv.targets[t].scalar_type();
    if (has_out && out_dtype_differs) check_out_dtypes_like_cpu(handle, *stack, first, nargs, p.inv.targets.at(0));
    std::vector<hlo::Value> results = (*rule)(b, call, operands);
    // The functional results, cast into the written tensors.
    for (size_t t = 0; t < p.inv.targets.size(); ++t) {
      const at::Tensor& target = p.inv.targets[t];
      TORCH_CHECK(results.at(t).type.dims == target.sizes().vec(), p.inv.op, ": result shape ",
                  results[t].type.str(), " does not match the output's ", target.sizes());
      results[t] = b.convert(results[t], to_hlo(target.scalar_type(), p.inv.op.c_str()));
    }
    return results;
  };
  p.inv.lower = [f = &lower](hlo::Builder& b, const std::vector<hlo::Value>& tensors,
                              const std::vector<hlo::Value>& scalars) { return (*f)(b, tensors, scalars); };
  check_written_overlap(statics.overlap, p.inv.targets, p.inv.inputs, *stack, first);
  std::vector<at::Tensor> fresh;
  try {
    fresh = execute(p.inv);
  } catch (const FallbackRequired&) {
    run_cpu_fallback(handle, stack);
    return;
  } catch (const c10::NotImplementedError&) {
    if (!data_dependent) throw;
    run_cpu_fallback(handle, stack);  // visible: warned, counted, or an error under TORCH_TPU_FALLBACK=error
    return;
  }

  std::vector<c10::IValue> written;
  for (size_t i : p.write_args) written.push_back((*stack)[first + i]);
  torch::jit::drop(*stack, nargs);
  size_t next_fresh = 0, next_written = 0;
  for (const auto& r : returns) {
    if (writes(r)) {
      stack->push_back(written.at(next_written++));
    } else if (r.type()->kind() == c10::TypeKind::ListType) {
      // A Tensor[] result is the last fresh one: it takes every output left
      // (their count is known here without the meta kernel, which a cache hit skips).
      TORCH_CHECK(&r == &returns.back(), p.inv.op, ": a Tensor[] result must be the last one");
      stack->emplace_back(std::vector<at::Tensor>(fresh.begin() + next_fresh, fresh.end()));
      next_fresh = fresh.size();
    } else {
      stack->emplace_back(fresh.at(next_fresh++));
    }
  }
}

}  // namespace

void register_lowered_ops() {
  static bool done = false;
  if (done) return;
  done = true;
  static auto* lib = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__,
                                        __LINE__);
  // Our own ops ("tpu::ragged_dot", schemas in tpu_op_schemas.cpp) need a library of their namespace.
  static auto* tpu_lib = new torch::Library(torch::Library::IMPL, "tpu", c10::DispatchKey::PrivateUse1, __FILE__,
                                            __LINE__);
  for (const auto& kv : op_variants()) {
    const std::string& name = kv.first;
    if (name.rfind("tpu::", 0) == 0)
      tpu_lib->impl(name.substr(5).c_str(), torch::CppFunction::makeFromBoxedFunction<&boxed_lowered_op>());
    else
      lib->impl(name.c_str(), torch::CppFunction::makeFromBoxedFunction<&boxed_lowered_op>());
  }
  register_foreach_ops();
}

}  // namespace torch_tpu::eager
