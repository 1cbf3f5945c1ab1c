#include "eager/boxed_kernel.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty_strided.h>
#include <torch/library.h>

#include <cstring>

#include "eager/dtype_map.h"
#include "eager/executor.h"
#include "ops/registry.h"

namespace torch_tpu::eager {

namespace {

using ops::Arg;

std::string op_name(const c10::FunctionSchema& schema) {
  std::string n = schema.name();
  if (n.rfind("aten::", 0) == 0) n = n.substr(6);
  if (!schema.overload_name().empty()) n += "." + schema.overload_name();
  return n;
}

void append_int(std::string& key, int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof(v)); }

// `Scalar` / `Scalar?` arguments become runtime operands; int, float and bool
// arguments are structural.
bool is_scalar_formal(const c10::Argument& a) {
  c10::TypePtr t = a.type();
  if (t->kind() == c10::TypeKind::OptionalType) t = t->castRaw<c10::OptionalType>()->getElementType();
  return t->kind() == c10::TypeKind::NumberType;
}

bool is_write(const c10::Argument& a) { return a.alias_info() && a.alias_info()->isWrite(); }

// The IValue stack as an Invocation plus the rule's view of the arguments.
struct ParsedCall {
  Invocation inv;
  std::vector<Arg> args;
  std::vector<int> input_of_operand;  // -1 for scalar operands
  std::vector<int> scalar_of_operand;
  std::vector<size_t> write_args;     // schema indices of written tensors, in order
  int device_index = -1;
};

void note_device(ParsedCall& p, const at::Tensor& t, const std::string& op) {
  int d = t.device().index();
  if (p.device_index < 0) p.device_index = d;
  TORCH_CHECK(p.device_index == d, "Expected all tensors to be on the same device, but found at least two devices, tpu:",
              p.device_index, " and tpu:", d, "! (when checking arguments for ", op, ")");
}

int add_tensor_operand(ParsedCall& p, const at::Tensor& t, const std::string& op) {
  if (t.device().type() == c10::DeviceType::PrivateUse1) {
    note_device(p, t, op);
    p.inv.inputs.push_back(t);
    p.input_of_operand.push_back(static_cast<int>(p.inv.inputs.size()) - 1);
    p.scalar_of_operand.push_back(-1);
  } else {
    // PyTorch lets a 0-d CPU tensor join a device op as a scalar.
    TORCH_CHECK(t.device().is_cpu() && t.dim() == 0,
                "Expected all tensors to be on the same device, but found at least two devices, tpu and ",
                t.device(), "! (when checking arguments for ", op, ")");
    RuntimeScalar s;
    s.dtype = to_hlo(t.scalar_type(), op.c_str());
    std::memcpy(s.bytes.data(), t.const_data_ptr(), t.element_size());
    p.inv.scalars.push_back(s);
    p.input_of_operand.push_back(-1);
    p.scalar_of_operand.push_back(static_cast<int>(p.inv.scalars.size()) - 1);
  }
  return static_cast<int>(p.input_of_operand.size()) - 1;
}

ParsedCall parse(const c10::FunctionSchema& schema, torch::jit::Stack& stack, size_t first) {
  ParsedCall p;
  p.inv.op = op_name(schema);
  const std::string& op = p.inv.op;
  std::string& key = p.inv.static_key;
  const auto& formals = schema.arguments();
  for (size_t i = 0; i < formals.size(); ++i) {
    const c10::IValue& v = stack[first + i];
    Arg a;
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (!t.defined()) {
        a.kind = Arg::Kind::None;
      } else if (is_write(formals[i])) {
        TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, op, ": expected out tensor on tpu, got ",
                    t.device());
        note_device(p, t, op);
        p.write_args.push_back(i);
        p.inv.targets.push_back(t);
        a.kind = Arg::Kind::Tensor;
        // In-place ops read what they write; out= arguments are only written.
        if (!formals[i].kwarg_only()) a.operands.push_back(add_tensor_operand(p, t, op));
      } else {
        a.kind = Arg::Kind::Tensor;
        a.operands.push_back(add_tensor_operand(p, t, op));
      }
    } else if (v.isTensorList()) {
      a.kind = Arg::Kind::TensorList;
      for (const at::Tensor& t : v.toTensorList().vec()) a.operands.push_back(add_tensor_operand(p, t, op));
      append_int(key, static_cast<int64_t>(a.operands.size()));
    } else if (v.isScalar() && is_scalar_formal(formals[i])) {
      a.kind = Arg::Kind::Scalar;
      p.inv.scalars.push_back(runtime_scalar(v.toScalar(), op.c_str()));
      p.input_of_operand.push_back(-1);
      p.scalar_of_operand.push_back(static_cast<int>(p.inv.scalars.size()) - 1);
      a.operands.push_back(static_cast<int>(p.input_of_operand.size()) - 1);
    } else if (v.isBool()) {
      a.kind = Arg::Kind::Bool;
      a.b = v.toBool();
      append_int(key, a.b);
    } else if (v.isInt()) {
      a.kind = Arg::Kind::Int;
      a.i = v.toInt();
      append_int(key, a.i);
    } else if (v.isDouble()) {
      a.kind = Arg::Kind::Double;
      a.d = v.toDouble();
      key.append(reinterpret_cast<const char*>(&a.d), sizeof(a.d));
    } else if (v.isIntList()) {
      a.kind = Arg::Kind::IntList;
      a.ints = v.toIntVector();
      for (int64_t x : a.ints) append_int(key, x);
      append_int(key, -7);
    } else if (v.isString()) {
      a.kind = Arg::Kind::String;
      a.s = v.toStringRef();
      key += a.s;
      key.push_back('\0');
    } else if (v.isNone()) {
      a.kind = Arg::Kind::None;
    } else {
      a.kind = Arg::Kind::Other;  // devices, layouts, generators: not part of the computation
    }
    append_int(key, static_cast<int64_t>(a.kind));
    p.args.push_back(std::move(a));
  }
  return p;
}

// Runs the op on meta tensors of the same geometry: PyTorch's own shape and
// dtype rules (and errors) decide the outputs.
std::vector<c10::IValue> run_meta(const c10::OperatorHandle& handle, const torch::jit::Stack& stack, size_t first,
                                  size_t nargs) {
  torch::jit::Stack meta;
  for (size_t i = 0; i < nargs; ++i) {
    const c10::IValue& v = stack[first + i];
    if (v.isTensor() && v.toTensor().defined() && v.toTensor().device().type() == c10::DeviceType::PrivateUse1) {
      const at::Tensor& t = v.toTensor();
      meta.emplace_back(at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta)));
    } else if (v.isTensorList()) {
      std::vector<at::Tensor> ts;
      for (const at::Tensor& t : v.toTensorList().vec())
        ts.push_back(t.device().type() == c10::DeviceType::PrivateUse1
                         ? at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kMeta))
                         : t);
      meta.emplace_back(ts);
    } else {
      meta.push_back(v);
    }
  }
  handle.callBoxed(meta);
  return meta;
}

void boxed_lowered_op(const c10::OperatorHandle& handle, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = handle.schema();
  size_t nargs = schema.arguments().size();
  size_t first = stack->size() - nargs;
  ParsedCall p = parse(schema, *stack, first);
  const ops::LoweringRule* rule = ops::find_lowering(p.inv.op);
  TORCH_CHECK(rule, "torch_tpu: no lowering rule for ", p.inv.op);
  TORCH_CHECK(p.device_index >= 0, p.inv.op, ": no tpu tensor among the arguments");
  p.inv.device_index = p.device_index;

  // out= arguments may need resizing before the program's key is known.
  bool has_out = false;
  for (size_t i : p.write_args) has_out |= schema.arguments()[i].kwarg_only();
  std::vector<c10::IValue> meta_results;
  bool meta_done = false;
  auto meta = [&]() -> const std::vector<c10::IValue>& {
    if (!meta_done) meta_results = run_meta(handle, *stack, first, nargs);
    meta_done = true;
    return meta_results;
  };
  const auto& returns = schema.returns();
  if (has_out) {
    // The meta kernel resized its copies of the out tensors (returned as the
    // written aliases): give the real ones the same sizes.
    const auto& m = meta();
    size_t k = 0;
    for (size_t r = 0; r < returns.size(); ++r) {
      if (!(returns[r].alias_info() && returns[r].alias_info()->isWrite())) continue;
      at::Tensor& real = p.inv.targets.at(k++);
      const at::Tensor& shaped = m.at(r).toTensor();
      if (real.sizes() != shaped.sizes()) real.resize_(shaped.sizes());
    }
  }
  p.inv.infer_fresh = [&]() {
    std::vector<FreshOutput> fresh;
    const auto& m = meta();
    for (size_t r = 0; r < returns.size(); ++r) {
      if (returns[r].alias_info() && returns[r].alias_info()->isWrite()) continue;
      const at::Tensor& t = m.at(r).toTensor();
      fresh.push_back(FreshOutput{t.scalar_type(), t.sizes().vec(), t.strides().vec()});
    }
    return fresh;
  };
  std::vector<ops::Arg> args = p.args;
  p.inv.lower = [&](hlo::Builder& b, const std::vector<hlo::Value>& tensors, const std::vector<hlo::Value>& scalars) {
    ops::OpCall call;
    call.op = p.inv.op;
    call.args = args;
    std::vector<hlo::Value> operands;
    for (size_t k = 0; k < p.input_of_operand.size(); ++k)
      operands.push_back(p.input_of_operand[k] >= 0 ? tensors[p.input_of_operand[k]]
                                                   : scalars[p.scalar_of_operand[k]]);
    for (const hlo::Value& o : operands) call.operands.push_back(o.type);
    for (const at::Tensor& t : p.inv.targets)
      call.outputs.emplace_back(to_hlo(t.scalar_type(), call.op.c_str()), t.sizes().vec());
    for (const FreshOutput& f : p.inv.infer_fresh())
      call.outputs.emplace_back(to_hlo(f.dtype, call.op.c_str()), f.sizes);
    return (*rule)(b, call, operands);
  };
  std::vector<at::Tensor> fresh = execute(p.inv);

  std::vector<c10::IValue> written;
  for (size_t i : p.write_args) written.push_back((*stack)[first + i]);
  torch::jit::drop(*stack, nargs);
  size_t next_fresh = 0, next_written = 0;
  for (const auto& r : returns) {
    if (r.alias_info() && r.alias_info()->isWrite()) stack->push_back(written.at(next_written++));
    else stack->emplace_back(fresh.at(next_fresh++));
  }
}

}  // namespace

void register_lowered_ops() {
  static bool done = false;
  if (done) return;
  done = true;
  static auto* lib = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__,
                                        __LINE__);
  for (const std::string& name : ops::lowered_ops())
    lib->impl(name.c_str(), torch::CppFunction::makeFromBoxedFunction<&boxed_lowered_op>());
}

}  // namespace torch_tpu::eager
