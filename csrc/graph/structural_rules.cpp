#include "graph/structural_rules.h"

#include <map>
#include <stdexcept>

#include "ops/lowering_helpers.h"
#include "ops/view_lowering.h"

namespace torch_tpu::graph {
namespace {

using namespace torch_tpu::ops;

std::map<std::string, LoweringRule>& table() {
  static std::map<std::string, LoweringRule> t;
  return t;
}

struct Reg {
  Reg(std::initializer_list<const char*> names, LoweringRule rule) {
    for (const char* n : names) table().emplace(n, rule);
  }
};

int64_t norm_dim(int64_t d, int64_t rank) {
  int64_t n = rank == 0 ? 1 : rank;
  if (d < -n || d >= n) throw std::out_of_range("dimension " + std::to_string(d) + " out of range");
  return d < 0 ? d + n : d;
}

// Ops whose result is the operand's elements in a new shape (row-major order):
// the meta kernel's output type says which shape.
Reg reshapes({"view", "_unsafe_view", "reshape", "view_copy", "_reshape_alias", "unsqueeze", "squeeze",
              "squeeze.dim", "squeeze.dims", "alias", "clone", "lift_fresh_copy", "detach", "contiguous",
              "_to_copy", "flatten.using_ints", "unflatten.int"},
             [](Builder& b, const OpCall& c, const Values& v) {
               const TensorType& out = c.outputs.at(0);
               return Values{b.reshape(b.convert(operand(c, v, 0), out.dtype), out.dims)};
             });

// A jax_op's kernel inside a compiled graph (describe.py turns the
// torch.ops.tpu_jax node into this): (inputs, entry symbol, MLIR text of the
// exported functions); the functions join the graph's module, the node calls
// the entry.
Reg jax_module_call({"jax_module_call"}, [](Builder& b, const OpCall& c, const Values& v) {
  Values inputs;
  for (int k : c.arg(0).operands) inputs.push_back(v.at(k));
  b.define_function(c.arg(1).s, c.arg(2).s);
  return b.call(c.arg(1).s, inputs, c.outputs);
});

// copy(self, src): src converted and broadcast into self's type (functional copy_).
Reg copy({"copy"}, [](Builder& b, const OpCall& c, const Values& v) {
  return Values{to_type(b, operand(c, v, 1), c.outputs.at(0))};
});

Reg expand({"expand", "expand_copy", "broadcast_to"}, [](Builder& b, const OpCall& c, const Values& v) {
  return Values{b.broadcast_to(operand(c, v, 0), c.outputs.at(0).dims)};
});

Reg permute({"permute"}, [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  std::vector<int64_t> perm;
  for (int64_t d : c.arg(1).ints) perm.push_back(norm_dim(d, x.type.rank()));
  return Values{b.transpose(x, perm)};
});

Value swap(Builder& b, const Value& x, int64_t d0, int64_t d1) {
  if (x.type.rank() < 2) return x;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < x.type.rank(); ++i) perm.push_back(i);
  std::swap(perm[norm_dim(d0, x.type.rank())], perm[norm_dim(d1, x.type.rank())]);
  return b.transpose(x, perm);
}

Reg transpose({"transpose.int"}, [](Builder& b, const OpCall& c, const Values& v) {
  return Values{swap(b, operand(c, v, 0), c.arg(1).i, c.arg(2).i)};
});
Reg t({"t", "numpy_T"}, [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  if (x.type.rank() < 2) return Values{x};
  std::vector<int64_t> perm;
  for (int64_t i = x.type.rank() - 1; i >= 0; --i) perm.push_back(i);
  return Values{b.transpose(x, perm)};
});

// diagonal(self, offset, dim1, dim2): dim1 and dim2 move last and become one
// dim of the (offset) diagonal, read from the flattened pair with stride n2 + 1
// (an exact slice: no arithmetic touches the values).
Reg diagonal({"diagonal", "diagonal_copy"}, [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  const TensorType& out = c.outputs.at(0);
  int64_t r = x.type.rank(), offset = c.arg(1).i;
  int64_t d1 = norm_dim(c.arg(2).i, r), d2 = norm_dim(c.arg(3).i, r);
  int64_t len = out.dims.back();
  if (out.numel() == 0) return Values{b.splat_int(out, 0)};
  std::vector<int64_t> perm, lead;
  for (int64_t i = 0; i < r; ++i)
    if (i != d1 && i != d2) perm.push_back(i), lead.push_back(x.type.dims[i]);
  perm.push_back(d1);
  perm.push_back(d2);
  int64_t n2 = x.type.dims[d2];
  std::vector<int64_t> flat = lead;
  flat.push_back(x.type.dims[d1] * n2);
  Value f = b.reshape(b.transpose(x, perm), flat);
  int64_t start = offset >= 0 ? offset : -offset * n2;
  std::vector<int64_t> lo(flat.size(), 0), hi = flat, st(flat.size(), 1);
  lo.back() = start;
  hi.back() = start + (len - 1) * (n2 + 1) + 1;
  st.back() = n2 + 1;
  return Values{b.reshape(b.slice(f, lo, hi, st), out.dims)};
});

// Elements [start, start + len * step) of dim `d`, `len` from the meta kernel.
Value slice_dim(Builder& b, const Value& x, int64_t d, int64_t start, int64_t len, int64_t step) {
  std::vector<int64_t> lo(x.type.rank(), 0), hi = x.type.dims, st(x.type.rank(), 1);
  lo[d] = start;
  hi[d] = len == 0 ? start : start + (len - 1) * step + 1;
  st[d] = step;
  return b.slice(x, lo, hi, st);
}

Reg slice({"slice.Tensor", "slice_copy.Tensor"}, [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  const TensorType& out = c.outputs.at(0);
  int64_t d = norm_dim(c.arg(1).i, x.type.rank());
  int64_t size = x.type.dims[d];
  int64_t start = c.arg(2).is_none() ? 0 : c.arg(2).i;
  if (start < 0) start += size;
  start = std::min(std::max<int64_t>(start, 0), size);
  int64_t step = c.args.size() > 4 ? c.arg(4).i : 1;
  return Values{slice_dim(b, x, d, start, out.dims[d], step)};
});

Reg select({"select.int", "select_copy.int"}, [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  int64_t d = norm_dim(c.arg(1).i, x.type.rank());
  int64_t i = c.arg(2).i;
  if (i < -x.type.dims[d] || i >= x.type.dims[d]) throw std::out_of_range("select: index out of range");
  if (i < 0) i += x.type.dims[d];
  return Values{b.reshape(slice_dim(b, x, d, i, 1, 1), c.outputs.at(0).dims)};
});

// split / split_with_sizes / unbind: consecutive pieces along a dim, their
// sizes from the meta kernel's outputs.
Values pieces(Builder& b, const OpCall& c, const Value& x, int64_t dim_arg, bool squeeze) {
  int64_t d = norm_dim(c.arg(dim_arg).i, x.type.rank());
  Values r;
  int64_t at = 0;
  for (const TensorType& o : c.outputs) {
    int64_t len = squeeze ? 1 : o.dims[d];
    r.push_back(b.reshape(slice_dim(b, x, d, at, len, 1), o.dims));
    at += len;
  }
  return r;
}
Reg split({"split.Tensor", "split_with_sizes", "split_with_sizes_copy", "split_copy.Tensor"},
          [](Builder& b, const OpCall& c, const Values& v) { return pieces(b, c, operand(c, v, 0), 2, false); });
Reg unbind({"unbind.int", "unbind_copy.int"},
           [](Builder& b, const OpCall& c, const Values& v) { return pieces(b, c, operand(c, v, 0), 1, true); });

// Factories: the fill value is a number operand; the meta kernel gives dtype and shape.
LoweringRule fill_from(size_t arg) {
  return [arg](Builder& b, const OpCall& c, const Values& v) { return Values{to_type(b, operand(c, v, arg), c.outputs.at(0))}; };
}
LoweringRule fill_with(int64_t value) {
  return [value](Builder& b, const OpCall& c, const Values&) {
    return Values{to_type(b, b.constant_int(DType::I64, value), c.outputs.at(0))};
  };
}
Reg full({"full", "full.default"}, fill_from(1));
Reg full_like({"full_like"}, fill_from(1));
Reg new_full({"new_full"}, fill_from(2));
Reg scalar_tensor({"scalar_tensor"}, fill_from(0));
Reg fill({"fill.Scalar", "fill.Tensor"}, fill_from(1));
// Uninitialised memory reads as zeros on this device (DESIGN.md: empty touches nothing).
Reg zeros({"zeros", "zeros_like", "new_zeros", "empty.memory_format", "empty_like", "empty_strided", "new_empty",
           "new_empty_strided", "empty_permuted"},
          fill_with(0));
Reg ones({"ones", "ones_like", "new_ones"}, fill_with(1));

// arange overloads reuse the shared arange.start_out rule (start, end, step operands).
Values arange_with(Builder& b, const OpCall& c, const Values& v, int start_arg, int end_arg, int step_arg) {
  const LoweringRule* rule = find_lowering("arange.start_out");
  if (!rule) throw std::invalid_argument("arange: no arange.start_out rule");
  OpCall call;
  call.op = "arange.start_out";
  call.outputs = c.outputs;
  call.default_float = c.default_float;
  call.matmul_precision = c.matmul_precision;
  Values ops;
  auto add = [&](int arg, int64_t dflt) {
    Arg a;
    a.kind = Arg::Kind::Scalar;
    a.operands.push_back(static_cast<int>(ops.size()));
    ops.push_back(arg >= 0 ? operand(c, v, arg) : b.constant_int(DType::I64, dflt));
    call.operands.push_back(ops.back().type);
    call.operand_is_number.push_back(true);
    call.args.push_back(a);
  };
  add(start_arg, 0);
  add(end_arg, 0);
  add(step_arg, 1);
  return (*rule)(b, call, ops);
}
Reg arange({"arange"}, [](Builder& b, const OpCall& c, const Values& v) { return arange_with(b, c, v, -1, 0, -1); });
Reg arange_start({"arange.start"},
                 [](Builder& b, const OpCall& c, const Values& v) { return arange_with(b, c, v, 0, 1, -1); });
Reg arange_step({"arange.start_step"},
                [](Builder& b, const OpCall& c, const Values& v) { return arange_with(b, c, v, 0, 1, 2); });

// as_strided on a graph value: the value's row-major elements act as the storage
// (the compile path only emits it for contiguous operands).
Reg as_strided({"as_strided", "as_strided_copy"}, [](Builder& b, const OpCall& c, const Values& v) {
  const Value& x = operand(c, v, 0);
  ViewGeometry g{x.type.dtype, c.arg(1).ints, c.arg(2).ints};
  int64_t offset = c.args.size() > 3 && !c.arg(3).is_none() ? c.arg(3).i : 0;
  Value flat = b.reshape(x, {x.type.numel()});
  return Values{read_view(b, flat, g, b.constant_int(DType::I64, offset))};
});

}  // namespace

const LoweringRule* find_structural_rule(const std::string& op) {
  auto it = table().find(op);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> structural_ops() {
  std::vector<std::string> names;
  for (const auto& kv : table()) names.push_back(kv.first);
  return names;
}

}  // namespace torch_tpu::graph
