#include "eager/call_parser.h"


#include "device/generator.h"
#include "eager/argument_kinds.h"
#include "eager/cache_key_fields.h"
#include "eager/dtype_map.h"
#include "eager/host_index_checks.h"
#include "eager/op_variants.h"
#include "eager/portable_scalars.h"

namespace torch_tpu::eager {

namespace {

using ops::Arg;

void append_int(std::string& key, int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof(v)); }

bool is_write(const c10::Argument& a) { return a.alias_info() && a.alias_info()->isWrite(); }

void note_device(ParsedCall& p, const at::Tensor& t) {
  int d = t.device().index();
  if (p.device_index < 0) p.device_index = d;
  TORCH_CHECK(p.device_index == d,
              "Expected all tensors to be on the same device, but found at least two devices, tpu:", p.device_index,
              " and tpu:", d, "! (when checking arguments for ", p.inv.op, ")");
}

// Every operand's source is part of the key: which operands are device
// tensors and which are runtime scalars decides what each program parameter
// means (`c - t` and `t - c` have the same tensors and scalars, in other
// roles), and a Python number promotes differently from a 0-d tensor.
void key_operand_source(ParsedCall& p, char source) {
  if (key_field_enabled(KeyField::OperandSources)) p.inv.static_key.push_back(source);
}

int add_scalar_operand(ParsedCall& p, const RuntimeScalar& s, bool is_number) {
  key_operand_source(p, is_number ? 'n' : 's');
  p.inv.scalars.push_back(s);
  p.input_of_operand.push_back(-1);
  p.scalar_of_operand.push_back(static_cast<int>(p.inv.scalars.size()) - 1);
  p.operand_is_number.push_back(is_number);
  return static_cast<int>(p.input_of_operand.size()) - 1;
}

int add_tensor_operand(ParsedCall& p, const at::Tensor& t) {
  if (t.device().type() == c10::DeviceType::PrivateUse1) {
    note_device(p, t);
    key_operand_source(p, 't');
    // A conjugate or negative view reaching a kernel (ops the Conjugate and
    // Negative fallbacks let through, like mm) is read as its values.
    p.inv.inputs.push_back(t.is_conj() || t.is_neg() ? t.resolve_conj().resolve_neg() : t);
    p.input_of_operand.push_back(static_cast<int>(p.inv.inputs.size()) - 1);
    p.scalar_of_operand.push_back(-1);
    p.operand_is_number.push_back(false);
    return static_cast<int>(p.input_of_operand.size()) - 1;
  }
  // PyTorch lets a 0-d CPU tensor join a device op as a scalar.
  TORCH_CHECK(t.device().is_cpu() && t.dim() == 0,
              "Expected all tensors to be on the same device, but found at least two devices, tpu:",
              std::max(p.device_index, 0), " and ", t.device(), "! (when checking arguments for ", p.inv.op, ")");
  RuntimeScalar s = runtime_scalar_of(t, p.inv.op.c_str());
  return add_scalar_operand(p, s, !s.user_tensor);
}

// An Arg as new, keeping the capacity of one a pooled call used before.
Arg fresh_arg(ParsedCall& p) {
  if (p.spare_args.empty()) return Arg();
  Arg a = std::move(p.spare_args.back());
  p.spare_args.pop_back();
  a.kind = Arg::Kind::None;
  a.operands.clear();
  a.i = 0;
  a.d = 0;
  a.b = false;
  a.ints.clear();
  a.doubles.clear();
  a.dtype = hlo::DType::F32;
  a.s.clear();
  return a;
}

// Empties `p` for its next call, keeping every vector's capacity.
void clear_call(ParsedCall& p) {
  Invocation& inv = p.inv;
  inv.op.clear();
  inv.static_key.clear();
  inv.inputs.clear();
  inv.scalars.clear();
  inv.targets.clear();
  inv.generators.clear();
  inv.device_index = 0;
  inv.internal_dtypes.clear();
  inv.fusable = true;
  inv.infer_fresh = nullptr;
  inv.lower = nullptr;
  if (p.spare_args.empty()) {
    std::swap(p.args, p.spare_args);  // the usual case (the last call took every spare): no moves
  } else {
    for (Arg& a : p.args) p.spare_args.push_back(std::move(a));
    p.args.clear();
  }
  p.input_of_operand.clear();
  p.scalar_of_operand.clear();
  p.operand_is_number.clear();
  p.write_args.clear();
  p.device_index = -1;
}

}  // namespace

PooledCall::~PooledCall() { clear_call(**this); }

void parse_call(const c10::FunctionSchema& schema, const std::string& op, const torch::jit::Stack& stack,
                size_t first, ParsedCall& p) {
  p.inv.op = op;
  std::string& key = p.inv.static_key;
  const auto& formals = schema.arguments();
  // Sized once: a tiny op's dispatch is mostly allocation (bench/eager_overhead.py).
  key.reserve(16 + formals.size());
  p.args.reserve(formals.size() + 1);
  p.input_of_operand.reserve(formals.size());
  p.scalar_of_operand.reserve(formals.size());
  p.inv.inputs.reserve(formals.size());
  p.inv.scalars.reserve(formals.size());
  key_global_state(key);
  std::vector<std::pair<size_t, at::Generator>> generators;
  for (size_t i = 0; i < formals.size(); ++i) {
    const c10::IValue& v = stack[first + i];
    c10::TypeKind kind = formal_kind(formals[i]);
    Arg a = fresh_arg(p);
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (!t.defined()) {
        a.kind = Arg::Kind::None;
      } else if (is_write(formals[i])) {
        TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, p.inv.op,
                    ": expected the written tensor on tpu, got one on ", t.device());
        note_device(p, t);
        p.write_args.push_back(i);
        p.inv.targets.push_back(t);
        a.kind = Arg::Kind::Tensor;
        // In-place ops read what they write; out= arguments are only written.
        if (!formals[i].kwarg_only()) a.operands.push_back(add_tensor_operand(p, t));
      } else {
        a.kind = Arg::Kind::Tensor;
        a.operands.push_back(add_tensor_operand(p, t));
      }
    } else if (v.isTensorList() || (is_tensors_list(v) && kind == c10::TypeKind::ListType)) {
      a.kind = Arg::Kind::TensorList;
      bool optional_list = !v.isTensorList();  // Tensor?[]: the indices of x[i, j]
      // Host-known indices raise IndexError now, as on the CPU, before CPU ones move.
      if (optional_list) check_index_call(p.inv.op, stack, first);
      for (const c10::IValue& e : v.toListRef()) {
        if (e.isNone() || (e.isTensor() && !e.toTensor().defined())) {
          a.operands.push_back(-1);
        } else if (optional_list && e.toTensor().device().is_cpu() && e.toTensor().dim() > 0) {
          // Like CUDA, accept CPU index tensors: they move to the device.
          int d = p.device_index >= 0 ? p.device_index : 0;
          a.operands.push_back(add_tensor_operand(p, e.toTensor().to(c10::Device(c10::DeviceType::PrivateUse1, d))));
        } else {
          a.operands.push_back(add_tensor_operand(p, e.toTensor()));
        }
        append_int(key, a.operands.back() < 0 ? 0 : 1);
      }
      append_int(key, static_cast<int64_t>(a.operands.size()));
    } else if (v.isScalar() && kind == c10::TypeKind::NumberType) {
      a.kind = Arg::Kind::Scalar;
      a.operands.push_back(add_scalar_operand(p, runtime_scalar(v.toScalar(), p.inv.op.c_str()), true));
    } else if (kind == c10::TypeKind::GeneratorType) {
      a.kind = Arg::Kind::Generator;
      at::Generator g = v.isNone() ? device::default_generator(-1) : v.toGenerator();
      TORCH_CHECK(g.device().type() == c10::DeviceType::PrivateUse1, p.inv.op,
                  ": expected a tpu generator, got one for ", g.device());
      generators.emplace_back(p.args.size(), g);
    } else if (v.isNone()) {
      a.kind = Arg::Kind::None;
    } else if (kind == c10::TypeKind::ScalarTypeType && v.isInt()) {
      a.kind = Arg::Kind::DType;
      a.dtype = to_hlo(static_cast<c10::ScalarType>(v.toInt()), p.inv.op.c_str());
      append_int(key, static_cast<int64_t>(a.dtype));
    } else if (kind == c10::TypeKind::LayoutType || kind == c10::TypeKind::MemoryFormatType ||
               kind == c10::TypeKind::DeviceObjType) {
      // Placement and layout: not read by rules, but the meta kernel's output
      // strides follow a memory format, so the value is in the key.
      a.kind = Arg::Kind::Other;
      if (v.isInt()) append_int(key, v.toInt());
      if (v.isDevice()) append_int(key, static_cast<int64_t>(v.toDevice().type()) * 1000 + v.toDevice().index());
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
    } else if (v.isBoolList()) {  // e.g. output_mask: read as 0/1 ints
      a.kind = Arg::Kind::IntList;
      for (bool x : v.toBoolList()) a.ints.push_back(x);
      for (int64_t x : a.ints) append_int(key, x);
      append_int(key, static_cast<int64_t>(a.ints.size()) + 1000);
    } else if (v.isIntList()) {
      a.kind = Arg::Kind::IntList;
      a.ints = v.toIntVector();
      for (int64_t x : a.ints) append_int(key, x);
      append_int(key, static_cast<int64_t>(a.ints.size()));
    } else if (v.isString()) {
      a.kind = Arg::Kind::String;
      a.s = v.toStringRef();
      key += a.s;
      key.push_back('\0');
    } else if (v.isDoubleList()) {  // e.g. upsample's scale_factors: meta kernels read them
      a.kind = Arg::Kind::Other;
      a.doubles = v.toDoubleVector();
      for (double x : v.toDoubleVector()) key.append(reinterpret_cast<const char*>(&x), sizeof(x));
      append_int(key, static_cast<int64_t>(v.toDoubleVector().size()));
    } else {
      // Nothing else reaches a lowered op's kernel; an unknown kind must not
      // silently share a program with other values.
      TORCH_CHECK(false, p.inv.op, ": argument ", formals[i].name(), " of type ", v.tagKind(),
                  " is not supported by the tpu executor");
    }
    append_int(key, static_cast<int64_t>(a.kind));
    p.args.push_back(std::move(a));
  }
  // Ops that draw from the default generator without a Generator argument get
  // one appended, so their rules read the seed and offset like any other.
  if (p.inv.op == "native_dropout") {
    generators.emplace_back(p.args.size(), device::default_generator(-1));
    Arg g = fresh_arg(p);
    g.kind = Arg::Kind::Generator;
    p.args.push_back(g);
  }
  // Generator operands come after every other runtime scalar (see Invocation).
  size_t base = p.inv.scalars.size();
  for (size_t g = 0; g < generators.size(); ++g) {
    Arg& a = p.args[generators[g].first];
    for (int k = 0; k < 2; ++k) {
      p.input_of_operand.push_back(-1);
      p.scalar_of_operand.push_back(static_cast<int>(base + 2 * g + k));
      p.operand_is_number.push_back(false);
      a.operands.push_back(static_cast<int>(p.input_of_operand.size()) - 1);
    }
    p.inv.generators.push_back(generators[g].second);
  }
  narrow_scalars_for_tpu(p);
}

}  // namespace torch_tpu::eager
