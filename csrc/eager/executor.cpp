#include "eager/executor.h"
#include "eager/float64_rule.h"

#include <ATen/EmptyTensor.h>
#include <c10/core/DefaultDtype.h>
#include <c10/core/StorageImpl.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <memory>
#include <chrono>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "compile_cache/compile_cache.h"
#include "device/allocator.h"
#include "device/device_error.h"
#include "device/generator.h"
#include "device/profiler/program_spans.h"
#include "device/runtime.h"
#include "device/storage_slot.h"
#include "eager/buffer_trace.h"
#include "eager/cache_validation.h"
#include "eager/dtype_map.h"
#include "eager/fused/window.h"
#include "eager/op_plan.h"
#include "eager/per_thread_pool.h"
#include "eager/metrics.h"
#include "eager/map_pressure.h"
#include "eager/program_cache.h"
#include "eager/scalar_operand_cache.h"
#include "eager/tpu_type_check.h"
#include "ops/lowering_error.h"
#include "ops/number_precision.h"
#include "ops/runtime_check.h"
#include "ops/view_lowering.h"
#include "hlo/function_text.h"
#include "pjrt/error.h"
#include "pjrt/executable.h"

namespace torch_tpu::eager {

using ops::classify_view;
using ops::read_view;
using ops::ViewAccess;
using ops::ViewGeometry;
using ops::write_view;

using device::StorageSlot;

namespace {

using Plan = OpPlan;

// A plan before XLA compiles its program.
struct Draft {
  std::shared_ptr<Plan> plan;
  ProgramFacts facts;
};

ProgramCache<Plan>& cache() {
  static auto* c = new ProgramCache<Plan>();
  return *c;
}


// Fills `f` (its vectors' capacity reused: see CallScratch).
void facts_of(TensorFacts& f, const at::Tensor& t, std::vector<StorageSlot*>& groups, const char* op) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, op, ": expected a tpu tensor, got one on ",
              t.device());
  f.view.dtype = to_hlo(t.scalar_type(), op);
  f.view.sizes.assign(t.sizes().begin(), t.sizes().end());
  f.view.strides.assign(t.strides().begin(), t.strides().end());
  f.slot = &device::slot_of(*t.unsafeGetTensorImpl());
  f.offset = t.storage_offset();
  auto it = std::find(groups.begin(), groups.end(), f.slot);
  f.group = static_cast<int>(it - groups.begin());
  if (it == groups.end()) groups.push_back(f.slot);
  f.access = classify_view(f.slot->layout, f.view);
  f.rebase = false;
}

// execute()'s per-call vectors and key, borrowed per call (per_thread_pool.h).
struct CallScratch {
  std::vector<StorageSlot*> groups;
  std::vector<TensorFacts> facts;
  std::string key;
};

// Permutation that orders dims by decreasing stride when the strides are a
// dense permutation of the sizes; empty otherwise.
std::vector<int64_t> dense_order(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  std::vector<int64_t> order(sizes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  int64_t expect = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (sizes[*it] != 1 && strides[*it] != expect) return {};
    expect *= sizes[*it];
  }
  return order;
}

std::shared_ptr<pjrt::Buffer> scalar_buffer(const RuntimeScalar& s, int device_index) {
  return device::upload(s.bytes.data(), hlo::TensorType(s.dtype, {}), device_index);
}

// The program type of each runtime scalar: as parsed, but f32 for a
// f32_if_float_results scalar when the results say so (ops/number_precision.h),
// and f32/c64 for every 64-bit one under the float64 rule: the one place that
// rule narrows numbers (Python floats, 0-d CPU float64 tensors, graph inputs);
// the key keeps the parsed dtype and the rule is a key field.
std::vector<hlo::DType> scalar_types(const Invocation& inv, const std::vector<TensorFacts>& facts,
                                     const std::vector<FreshOutput>& fresh) {
  std::vector<hlo::DType> results;
  for (size_t i = inv.inputs.size(); i < facts.size(); ++i) results.push_back(facts[i].view.dtype);
  for (const FreshOutput& f : fresh)
    if (f.defined) results.push_back(to_hlo(f.dtype, inv.op.c_str()));
  bool pred_input = false;
  for (size_t i = 0; i < inv.inputs.size(); ++i) pred_input |= facts[i].view.dtype == hlo::DType::Pred;
  bool narrow = ops::results_take_narrow(results, pred_input);
  bool no_f64 = platform_lacks_float64();
  std::vector<hlo::DType> types;
  for (const RuntimeScalar& s : inv.scalars) {
    hlo::DType t = s.f32_if_float_results && narrow ? hlo::DType::F32 : s.dtype;
    if (no_f64 && t == hlo::DType::F64) t = hlo::DType::F32;
    if (no_f64 && t == hlo::DType::C128) t = hlo::DType::C64;
    types.push_back(t);
  }
  return types;
}

// Everything a miss does short of compiling: meta kernel, lowering, program
// text. Validation mode runs it on hits too, to compare with the cached plan.
Draft draft_plan(const Invocation& inv, const std::vector<TensorFacts>& facts,
                 const std::vector<StorageSlot*>& groups) {
  Draft draft;
  auto plan = draft.plan = std::make_shared<Plan>();
  static std::atomic<uint64_t> next_id{1};
  plan->id = next_id++;
  std::vector<std::string>& params = draft.facts.parameters;
  if (inv.infer_fresh) plan->fresh = inv.infer_fresh();
  size_t n_in = inv.inputs.size(), n_tg = inv.targets.size();

  // Which groups need their base buffer: read by an input, or written in place.
  std::vector<int> group_param(groups.size(), -1);
  std::vector<int> group_alias(groups.size(), -1);
  for (size_t i = 0; i < facts.size(); ++i) {
    bool is_target = i >= n_in;
    if (is_target && facts[i].rebase) continue;
    if (is_target) {
      TORCH_CHECK(group_alias[facts[i].group] < 0, inv.op, ": two outputs write the same storage");
      group_alias[facts[i].group] = static_cast<int>(i - n_in);
    }
    if (group_param[facts[i].group] < 0) {
      group_param[facts[i].group] = static_cast<int>(plan->base_groups.size());
      plan->base_groups.push_back(facts[i].group);
    }
  }
  // A target that overwrites its whole storage, which the op also reads (a
  // static cache's index_copy_, an in-place update), gets that parameter as
  // its output buffer: a donated base is updated in place, where a fresh
  // result would cost XLA a copy of the whole storage first.
  for (size_t t = 0; t < n_tg; ++t) {
    const TensorFacts& f = facts[n_in + t];
    if (f.rebase && group_param[f.group] >= 0 && group_alias[f.group] < 0 &&
        groups[f.group]->layout == hlo::TensorType(f.view.dtype, f.view.sizes))
      group_alias[f.group] = static_cast<int>(t);
  }
  hlo::Builder b;
  std::vector<hlo::Value> bases;
  for (int g : plan->base_groups) {
    bases.push_back(b.parameter(groups[g]->layout, group_alias[g]));
    plan->base_aliased.push_back(group_alias[g] >= 0);
    params.push_back("storage " + std::to_string(g) + " " + groups[g]->layout.str() +
                     (group_alias[g] >= 0 ? " written" : ""));
  }
  std::vector<hlo::Value> offsets(facts.size());
  for (size_t i = 0; i < facts.size(); ++i) {
    if (facts[i].access == ViewAccess::Whole || facts[i].rebase) continue;
    offsets[i] = b.parameter(hlo::TensorType(hlo::DType::I64, {}));
    plan->offset_tensors.push_back(static_cast<int>(i));
    params.push_back("offset of tensor " + std::to_string(i));
  }
  std::vector<hlo::Value> scalars;
  plan->scalar_types = scalar_types(inv, facts, plan->fresh);
  for (hlo::DType t : plan->scalar_types) {
    scalars.push_back(b.parameter(hlo::TensorType(t, {})));
    params.push_back(std::string("runtime scalar ") + hlo::dtype_name(t));
  }
  for (size_t g = 0; g < inv.generators.size(); ++g) {
    scalars.push_back(b.parameter(hlo::TensorType(hlo::DType::U64, {})));  // seed
    scalars.push_back(b.parameter(hlo::TensorType(hlo::DType::U64, {})));  // offset
    params.push_back("generator seed");
    params.push_back("generator offset");
  }

  std::vector<hlo::Value> views;
  for (size_t i = 0; i < n_in; ++i)
    views.push_back(read_view(b, bases[group_param[facts[i].group]], facts[i].view, offsets[i]));
  std::vector<hlo::Value> results;
  ops::take_runtime_checks();  // drop leftovers of a rule that threw earlier
  try {
    results = inv.lower(b, views, scalars);
  } catch (const ops::NotLowered& e) {
    throw FallbackRequired(inv.op + ": " + e.what());
  } catch (const ops::NotImplemented& e) {  // not implemented on the CPU either
    TORCH_CHECK_NOT_IMPLEMENTED(false, inv.op, ": ", e.what());
  } catch (const std::invalid_argument& e) {  // from hlo/ops: bad input shapes, unsupported cases
    TORCH_CHECK(false, inv.op, ": ", e.what());
  } catch (const std::out_of_range& e) {  // a dimension or index out of range: IndexError, like the CPU
    TORCH_CHECK_INDEX(false, inv.op, ": ", e.what());
  }
  TORCH_CHECK(results.size() == n_tg + plan->fresh.size(), inv.op, ": the lowering produced ", results.size(),
              " results, expected ", n_tg + plan->fresh.size());

  std::vector<hlo::Value> outputs;
  for (size_t t = 0; t < n_tg; ++t) {
    const TensorFacts& f = facts[n_in + t];
    hlo::TensorType want(f.view.dtype, f.view.sizes);
    TORCH_CHECK(results[t].type == want, inv.op, ": lowering result ", t, " is ", results[t].type.str(),
                ", expected ", want.str());
    if (f.rebase) {
      outputs.push_back(results[t]);
      plan->target_layouts.push_back(want);
    } else {
      try {
        outputs.push_back(write_view(b, bases[group_param[f.group]], f.view, offsets[n_in + t], results[t]));
      } catch (const std::invalid_argument& e) {
        TORCH_CHECK(false, e.what());
      }
      plan->target_layouts.push_back(groups[f.group]->layout);
    }
  }
  for (size_t k = 0; k < plan->fresh.size(); ++k) {
    const FreshOutput& fo = plan->fresh[k];
    hlo::Value r = results[n_tg + k];
    if (!fo.defined) {  // masked off by the caller: computed by the rule, not returned
      plan->fresh_layouts.push_back(r.type);
      plan->fresh_output.push_back(-1);
      continue;
    }
    plan->fresh_output.push_back(static_cast<int>(outputs.size()));
    hlo::TensorType want(to_hlo(fo.dtype, inv.op.c_str()), fo.sizes);
    TORCH_CHECK(r.type == want, inv.op, ": lowering result ", n_tg + k, " is ", r.type.str(), ", expected ",
                want.str());
    std::vector<int64_t> order = dense_order(fo.sizes, fo.strides);
    if (order.empty() && r.type.numel() == 0)
      for (size_t d = 0; d < fo.sizes.size(); ++d) order.push_back(static_cast<int64_t>(d));
    TORCH_CHECK(order.size() == fo.sizes.size(), inv.op, ": outputs with overlapping strides are not supported");
    hlo::Value stored = b.transpose(r, order);
    plan->fresh_layouts.push_back(stored.type);
    outputs.push_back(stored);
  }
  plan->checks = ops::take_runtime_checks();
  for (const ops::RuntimeCheck& c : plan->checks) {
    bool info = c.kind == ops::CheckKind::LinalgInfo;
    TORCH_CHECK(info ? c.failed.type.dtype == hlo::DType::I32 : c.failed.type == hlo::TensorType(hlo::DType::Pred, {}),
                inv.op, ": a runtime check must be a 0-d bool (a LAPACK info check an i32 tensor)");
    outputs.push_back(c.failed);
  }
  for (const hlo::Value& o : outputs) plan->rng_increment = std::max<uint64_t>(plan->rng_increment, o.type.numel());
  plan->rng_increment = (plan->rng_increment + 3) / 4 * 4 + 4;
  draft.facts.fresh = plan->fresh;
  for (const ops::RuntimeCheck& c : plan->checks) draft.facts.checks.push_back(c.message);
  draft.facts.text = b.finish(outputs);
  return draft;
}

void keep_text(Plan& plan, std::string text) {
  plan.calls_functions = hlo::has_other_functions(text);
  plan.text = std::move(text);
}

// `compile` false: the program is kept as text, for fused windows.
std::shared_ptr<Plan> build_plan(const Invocation& inv, const std::vector<TensorFacts>& facts,
                                 const std::vector<StorageSlot*>& groups, bool compile) {
  Draft draft = draft_plan(inv, facts, groups);
  const std::string& text = draft.facts.text;
  if (platform_lacks_float64()) {  // the float64 rule, for tensors made without a factory (dtype views)
    for (const TensorFacts& f : facts) check_float64_rule(to_scalar_type(f.view.dtype), inv.op.c_str(), true);
    for (const FreshOutput& f : draft.plan->fresh) check_float64_rule(f.dtype, inv.op.c_str(), true);
  }
  if (tpu_type_check_enabled()) {
    std::vector<hlo::DType> work;
    for (const TensorFacts& f : facts) work.push_back(f.view.dtype);
    for (const StorageSlot* g : groups) work.push_back(g->layout.dtype);
    for (const FreshOutput& f : draft.plan->fresh) work.push_back(to_hlo(f.dtype, inv.op.c_str()));
    work.insert(work.end(), inv.internal_dtypes.begin(), inv.internal_dtypes.end());
    for (const RuntimeScalar& s : inv.scalars)
      if (s.user_tensor) work.push_back(s.dtype);
    // torch.set_default_dtype(torch.float64) asks for f64 promotion too.
    work.push_back(to_hlo(c10::typeMetaToScalarType(c10::get_default_dtype()), inv.op.c_str()));
    check_tpu_types(inv.op, work, text);
  }
  if (compile) draft.plan->exe = compile_program(text, inv.op, inv.op);
  else keep_text(*draft.plan, text);
  if (cache_validation_enabled()) draft.plan->built_for = std::make_shared<ProgramFacts>(std::move(draft.facts));
  return draft.plan;
}

}  // namespace

RuntimeScalar runtime_scalar_as(const c10::Scalar& s, hlo::DType dtype) {
  RuntimeScalar r;
  r.dtype = dtype;
  auto put = [&](auto v) { std::memcpy(r.bytes.data(), &v, sizeof(v)); };
  switch (dtype) {
    case hlo::DType::Pred: put(static_cast<uint8_t>(s.toBool())); break;
    case hlo::DType::I64: put(s.toLong()); break;
    case hlo::DType::F64: put(s.toDouble()); break;
    // unchecked: a number narrowed for the device is the CPU's float opmath
    // value (bfloat16 + 1e39 is inf there); the CPU's checked conversions
    // are scalar_for_target's and scalar_range_checks'
    case hlo::DType::F32: put(s.isFloatingPoint() ? static_cast<float>(s.toDouble()) : s.toFloat()); break;
    case hlo::DType::I32: put(s.toInt()); break;
    case hlo::DType::C128: put(s.toComplexDouble()); break;
    case hlo::DType::C64: put(s.toComplexFloat()); break;
    default: TORCH_CHECK(false, "torch_tpu: runtime scalars of ", hlo::dtype_name(dtype), " are not supported");
  }
  return r;
}

RuntimeScalar runtime_scalar(const c10::Scalar& s, const char* op) {
  (void)op;
  if (s.isComplex()) return runtime_scalar_as(s, hlo::DType::C128);
  if (s.isBoolean()) return runtime_scalar_as(s, hlo::DType::Pred);
  if (s.isIntegral(false)) return runtime_scalar_as(s, hlo::DType::I64);
  return runtime_scalar_as(s, hlo::DType::F64);
}

RuntimeScalar runtime_scalar_of(const at::Tensor& t, const char* op, int64_t input) {
  // A fake or meta tensor (a compile-time example input) says "cpu" but has no data to read.
  TORCH_CHECK(t.has_storage() && t.storage().device_type() == c10::DeviceType::CPU && t.const_data_ptr(), op,
              input >= 0 ? ": input " + std::to_string(input) + " is" : std::string(": an argument is"),
              " a 0-d CPU tensor without data (a fake or meta tensor?)");
  RuntimeScalar s;
  s.dtype = to_hlo(t.scalar_type(), op);
  std::memcpy(s.bytes.data(), t.const_data_ptr(), t.element_size());
  s.user_tensor = !t.unsafeGetTensorImpl()->is_wrapped_number();
  return s;
}

std::shared_ptr<pjrt::Executable> compile_program(const std::string& text, const std::string& counted_as,
                                                  const std::string& described_as) {
  auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<pjrt::Executable> exe;
  relieve_map_pressure();
  try {
    // Memory miss: load from the persistent cache, or compile and store.
    exe = compile_cache::compile(device::runtime().client, text, pjrt::CompileSettings{});
  } catch (const pjrt::Error& e) {
    TORCH_CHECK(false, "torch_tpu: compiling ", described_as, " failed: ", e.what(), "\nprogram:\n", text);
  }
  count_compile(counted_as, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return exe;
}

std::shared_ptr<pjrt::Buffer> operand_buffer(const OperandValue& v, int device_index) {
  return v.cacheable ? cached_scalar_buffer(v.value, device_index) : scalar_buffer(v.value, device_index);
}

std::vector<OperandValue> runtime_operands(const OpPlan& plan, const Invocation& inv,
                                           const std::vector<TensorFacts>& facts) {
  std::vector<OperandValue> values;
  values.reserve(plan.offset_tensors.size() + inv.scalars.size() + 2 * inv.generators.size());
  for (int ti : plan.offset_tensors)
    values.push_back({runtime_scalar_as(c10::Scalar(facts[ti].offset), hlo::DType::I64), true});
  for (size_t i = 0; i < inv.scalars.size(); ++i) {
    const RuntimeScalar& s = inv.scalars[i];
    hlo::DType t = plan.scalar_types[i];
    values.push_back({t == s.dtype                  ? s
                      : s.dtype == hlo::DType::C128 ? runtime_scalar_as(c10::Scalar(s.as<c10::complex<double>>()), t)
                                                    : runtime_scalar_as(c10::Scalar(s.as<double>()), t),
                      true});
  }
  for (at::Generator gen : inv.generators) {
    uint64_t seed, offset;
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      auto* impl = gen.get<device::TpuGeneratorImpl>();
      seed = impl->current_seed();
      offset = impl->advance(plan.rng_increment);
    }
    for (uint64_t v : {seed, offset}) {
      RuntimeScalar r;
      r.dtype = hlo::DType::U64;
      std::memcpy(r.bytes.data(), &v, 8);
      values.push_back({r, false});
    }
  }
  return values;
}

at::Tensor new_tpu_tensor(c10::ScalarType dtype, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                          int device_index) {
  int saved = device::current_device();
  device::set_current_device(device_index);
  size_t nbytes = at::detail::computeStorageNbytes(sizes, strides, c10::elementSize(dtype));
  auto* alloc = device::tpu_allocator();
  auto storage = c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), nbytes,
                                                       alloc->allocate(nbytes), alloc, /*resizable=*/true);
  device::set_current_device(saved);
  auto t = at::detail::make_tensor<c10::TensorImpl>(c10::Storage(std::move(storage)),
                                                    c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                                    c10::scalarTypeToTypeMeta(dtype));
  t.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides);
  // The storage's base shape: the tensor's own when it is dense and row-major.
  // (Assigned in place: the allocator's 1-D layout has room for a 1-D shape.)
  StorageSlot& slot = device::slot_of(*t.unsafeGetTensorImpl());
  hlo::DType hd = to_hlo(dtype);
  int64_t isz = hlo::dtype_bytes(hd);
  if (t.is_contiguous() && static_cast<size_t>(t.numel() * isz) == nbytes) {
    slot.layout.dtype = hd;
    slot.layout.dims.assign(sizes.begin(), sizes.end());
  } else if (nbytes % isz == 0) {
    slot.layout.dtype = hd;
    slot.layout.dims.assign(1, static_cast<int64_t>(nbytes / isz));
  }
  return t;
}

std::vector<at::Tensor> execute(const Invocation& inv, bool* compiled) {
  const char* op = inv.op.c_str();
  PerThreadLease<CallScratch> pooled;
  std::vector<StorageSlot*>& groups = pooled->groups;
  std::vector<TensorFacts>& facts = pooled->facts;
  size_t n_in = inv.inputs.size(), n_tg = inv.targets.size();
  groups.clear();
  facts.resize(n_in + n_tg);  // kept elements keep their vectors' capacity
  for (size_t i = 0; i < n_in; ++i) facts_of(facts[i], inv.inputs[i], groups, op);
  for (size_t t = 0; t < n_tg; ++t) {
    TensorFacts& f = facts[n_in + t];
    facts_of(f, inv.targets[t], groups, op);
    int64_t isz = hlo::dtype_bytes(f.view.dtype);
    f.rebase = inv.targets[t].is_contiguous() && static_cast<size_t>(inv.targets[t].numel() * isz) == f.slot->nbytes;
  }
  for (const TensorFacts& f : facts)
    TORCH_CHECK(f.slot->device_index == inv.device_index, op, ": expected all tensors on tpu:", inv.device_index,
                ", got one on tpu:", f.slot->device_index);

  // The key: op, static key, then per tensor 7 words plus its dims (sizes,
  // strides, layout), one word per scalar's dtype, the generator count. The
  // string is sized once and the words copied in (appending them one by one
  // was a tenth of a tiny op's dispatch).
  std::string& key = pooled->key;
  size_t words = inv.scalars.size() + 1;
  for (const TensorFacts& f : facts) words += 7 + 2 * f.view.sizes.size() + f.slot->layout.dims.size();
  size_t head = inv.op.size() + 1 + inv.static_key.size() + 1;
  key.resize(head + 8 * words);
  char* w = key.data();
  auto put_bytes = [&w](const void* p, size_t n) {
    std::memcpy(w, p, n);
    w += n;
  };
  auto put = [&](int64_t v) { put_bytes(&v, 8); };
  auto put_dims = [&](const std::vector<int64_t>& v) {
    put(static_cast<int64_t>(v.size()));
    put_bytes(v.data(), 8 * v.size());
  };
  put_bytes(inv.op.data(), inv.op.size());
  *w++ = '\0';
  put_bytes(inv.static_key.data(), inv.static_key.size());
  *w++ = '\0';
  for (const TensorFacts& f : facts) {
    put(static_cast<int64_t>(f.view.dtype));
    put_dims(f.view.sizes);
    put_dims(f.view.strides);
    put(static_cast<int64_t>(f.slot->layout.dtype));
    put_dims(f.slot->layout.dims);
    put(static_cast<int64_t>(f.slot->nbytes));
    put(f.group * 2 + (f.rebase ? 1 : 0));
  }
  for (const RuntimeScalar& sc : inv.scalars) put(static_cast<int64_t>(sc.dtype));
  put(static_cast<int64_t>(inv.generators.size()));
  TORCH_INTERNAL_ASSERT(w == key.data() + key.size(), inv.op, ": cache key size miscounted");

  // Fused mode defers the call into the window; anything else runs the
  // window first, as its inputs may be deferred results.
  bool fused = inv.fusable && device::eager_mode() == device::EagerMode::Fused;
  if (!fused) device::flush_fused_window();
  std::shared_ptr<Plan> plan = cache().find(key);
  if (compiled) *compiled = !plan;
  if (plan) {
    count_cache_hit();
    if (plan->built_for) check_program_fits(inv.op, *plan->built_for, draft_plan(inv, facts, groups).facts);
  } else {
    plan = build_plan(inv, facts, groups, /*compile=*/!fused);
    count_evictions(cache().insert(key, plan));
  }
  // A plan is filled in copy-on-write, as other threads may hold it.
  if (fused && plan->text.empty()) {  // first built by a strict call, which dropped its text
    auto filled = std::make_shared<Plan>(*plan);
    keep_text(*filled, draft_plan(inv, facts, groups).facts.text);
    count_evictions(cache().insert(key, filled));
    plan = filled;
  }
  if (fused && plan->calls_functions) {  // a JAX kernel's module: runs alone
    fused = false;
    device::flush_fused_window();
  }
  if (fused) return fused::record(inv, plan, facts, groups);
  if (!plan->exe) {  // first built for fused windows only
    auto filled = std::make_shared<Plan>(*plan);
    filled->exe = compile_program(filled->text, inv.op, inv.op);
    count_evictions(cache().insert(key, filled));
    plan = filled;
  }

  // Arguments: bases, offsets, scalars. Keep the temporaries alive until Execute returns.
  std::vector<std::shared_ptr<pjrt::Buffer>> keep;
  std::vector<pjrt::Buffer*> args;
  std::vector<int64_t> non_donatable;
  keep.reserve(plan->base_groups.size() + inv.scalars.size() + facts.size());
  args.reserve(keep.capacity());
  for (size_t p = 0; p < plan->base_groups.size(); ++p) {
    groups[plan->base_groups[p]]->check_not_failed();
    std::shared_ptr<pjrt::Buffer>& buffer = groups[plan->base_groups[p]]->raw_buffer();
    if (!buffer) buffer = device::zeros_buffer(groups[plan->base_groups[p]]->layout, inv.device_index);
    // Donate only a buffer no other storage shares; otherwise PJRT copies it.
    if (plan->base_aliased[p] && buffer.use_count() > 1) non_donatable.push_back(static_cast<int64_t>(p));
    keep.push_back(buffer);
    args.push_back(buffer.get());
  }
  for (const OperandValue& v : runtime_operands(*plan, inv, facts)) {
    keep.push_back(operand_buffer(v, inv.device_index));
    args.push_back(keep.back().get());
  }
  pjrt::ExecuteResult result;
  int64_t queued_ns = device::profiler::recording() ? device::profiler::now_ns() : 0;
  std::vector<const void*> traced = traced_addresses(args);
  try {
    result = plan->exe->execute(args, device::pjrt_device(inv.device_index), non_donatable);
  } catch (const pjrt::Error& e) {
    device::raise_device_failure(e, "running " + inv.op, inv.device_index,
                                 device::bytes_of(plan->fresh_layouts) + device::bytes_of(plan->target_layouts));
  }
  trace_run(inv.op, traced, result.outputs);
  count_execution();
  auto write_targets = [&] {
    for (size_t t = 0; t < n_tg; ++t)
      facts[n_in + t].slot->set(result.outputs[t], plan->target_layouts[t], inv.op);
  };
  // Completion first: the buffers let go below (targets' old contents, this
  // call's temporary operands) must outlive this very program, not only the
  // ones queued before it (device::retire_after_queued_work).
  try {
    device::track_completion(std::move(result.done), inv.op, inv.device_index, queued_ns);
  } catch (...) {
    write_targets();  // debug mode: a failed write leaves results that raise when read, never stale data
    throw;
  }
  for (auto& b : keep) device::retire_after_queued_work(std::move(b));
  keep.clear();
  write_targets();
  std::vector<at::Tensor> fresh;
  fresh.reserve(plan->fresh.size());
  for (size_t k = 0; k < plan->fresh.size(); ++k) {
    const FreshOutput& fo = plan->fresh[k];
    if (!fo.defined) {
      fresh.emplace_back();
      continue;
    }
    at::Tensor out = new_tpu_tensor(fo.dtype, fo.sizes, fo.strides, inv.device_index);
    device::slot_of(*out.unsafeGetTensorImpl()).set(result.outputs.at(plan->fresh_output[k]), plan->fresh_layouts[k], inv.op);
    fresh.push_back(out);
  }
  size_t first_check = result.outputs.size() - plan->checks.size();
  for (size_t k = 0; k < plan->checks.size(); ++k)
    device::track_check(result.outputs[first_check + k], static_cast<int>(plan->checks[k].kind),
                        plan->checks[k].message, inv.op, inv.device_index);
  return fresh;
}

}  // namespace torch_tpu::eager
