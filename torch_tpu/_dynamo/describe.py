"""An AOTAutograd FX graph -> the plain description _C._GraphProgram takes.

Values are numbered: the graph's placeholders first (then its tensor
attributes, passed as extra inputs), then each node's outputs in order. Every
ATen node becomes (op name, schema-ordered arguments, output types); the C++
side turns it into the same ``OpCall`` the eager executor builds, for the same
lowering rule.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

import torch
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.fx import GraphModule, Node

# c10::ScalarType codes (stable numbering of the C++ enum).
SCALAR_TYPE_CODE = {
    torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4,
    torch.float16: 5, torch.float32: 6, torch.float64: 7, torch.complex64: 9,
    torch.complex128: 10, torch.bool: 11, torch.bfloat16: 15,
    torch.uint16: 27, torch.uint32: 28, torch.uint64: 29,
}
_BOOL, _I64, _F64 = 11, 4, 7

# Nodes that produce nothing and check nothing the meta kernels did not check.
_SKIPPED = {"_assert_tensor_metadata", "_assert_async", "_assert_async.msg", "_assert_scalar"}


class Unsupported(Exception):
    """The graph has a node the tpu lowering cannot take (named in the message)."""


def op_name(target) -> str | None:
    """Registry name of an ATen OpOverload ("add.Tensor") or of one of our own
    ops, namespace included ("tpu::ragged_dot"); None for anything else."""
    if not isinstance(target, torch._ops.OpOverload) or target.namespace not in ("aten", "tpu"):
        return None
    schema = target._schema
    name = schema.name[len("aten::"):] if target.namespace == "aten" else schema.name
    return f"{name}.{schema.overload_name}" if schema.overload_name else name


def dtype_code(dtype: torch.dtype) -> int:
    if dtype not in SCALAR_TYPE_CODE:
        raise Unsupported(f"dtype {dtype} is not supported on the tpu device")
    return SCALAR_TYPE_CODE[dtype]


def _tensor_type(t: torch.Tensor):
    return (dtype_code(t.dtype), list(t.shape))


def _dense_strides(t: torch.Tensor) -> list:
    """t's strides when they are a dense permutation of its sizes (the layout
    the executor can store), else row-major ones."""
    sizes, strides = list(t.shape), list(t.stride())
    expect = 1
    for d in sorted(range(len(sizes)), key=lambda d: strides[d]):
        if sizes[d] != 1 and strides[d] != expect:
            return list(torch.empty(sizes, device="meta").stride())
        expect *= sizes[d]
    return strides


@dataclass
class Description:
    num_inputs: int = 0
    nodes: list = field(default_factory=list)
    results: list = field(default_factory=list)   # (value id, dtype code, sizes, strides)
    writes: list = field(default_factory=list)    # (input index, value id)
    outputs: list = field(default_factory=list)   # ("result", k) / ("input", i) / ("none", 0)
    num_generators: int = 0
    constants: list = field(default_factory=list)  # tensors passed after the placeholders
    tensor_inputs: list = field(default_factory=list)  # placeholder positions that are tensors
    ops: set = field(default_factory=set)
    # 0-d CPU values (an optimizer's step counters) are computed on the device
    # with the rest; these say which graph outputs go back to the CPU, and
    # which CPU inputs receive which extra trailing output (input index, output index).
    cpu_outputs: list = field(default_factory=list)
    cpu_writes: list = field(default_factory=list)


def _number(v, is_tensor_arg=False):
    if isinstance(v, bool):
        return ("num", is_tensor_arg, _BOOL, v, True)
    if isinstance(v, int):
        return ("num", is_tensor_arg, _I64, v, True)
    if isinstance(v, float):
        return ("num", is_tensor_arg, _F64, v, True)
    raise Unsupported(f"argument {v!r} of type {type(v).__name__}")


def _base_kind(ty):
    if ty.kind() == "OptionalType":
        ty = ty.getElementType()
    return ty


def _outputs_of(node: Node, name: str):
    val = node.meta.get("val")
    vals = list(val) if isinstance(val, (tuple, list)) else [val]
    if any(v is None for v in vals):
        # Masked-off outputs (output_mask): the rule still emits them; their
        # types come from the meta kernel with every output requested.
        vals = _all_outputs_on_meta(node)
    for v in vals:
        if not isinstance(v, torch.Tensor):
            raise Unsupported(f"aten.{name} returns {type(v).__name__}")
        if v.device.type != "tpu" and not (v.device.type == "cpu" and v.dim() == 0):
            raise Unsupported(f"aten.{name} makes a tensor on {v.device} inside a tpu graph")
    return vals


def _all_outputs_on_meta(node: Node):
    def to_meta(a):
        if isinstance(a, Node):
            v = a.meta["val"]
            return torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta")
        if isinstance(a, (list, tuple)):
            if a and all(isinstance(x, bool) for x in a):
                return [True] * len(a)
            return type(a)(to_meta(x) for x in a)
        return a
    out = node.target(*to_meta(node.args), **{k: to_meta(v) for k, v in node.kwargs.items()})
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    return [torch.empty_strided(o.shape, o.stride(), dtype=o.dtype, device="tpu") if o is not None else None
            for o in out]


def describe(gm: GraphModule) -> Description:
    d = Description()
    value_of: dict[Node, object] = {}   # node -> value id, or list of ids (multi-output)
    input_of: dict[Node, int] = {}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    attrs = [n for n in gm.graph.nodes if n.op == "get_attr"]
    next_id = 0
    for pos, n in enumerate(placeholders):
        if isinstance(n.meta.get("val"), torch.Tensor):
            d.tensor_inputs.append(pos)
            value_of[n] = input_of[n] = next_id
            next_id += 1
    for n in attrs:
        t = getattr(gm, n.target)
        if not isinstance(t, torch.Tensor):
            raise Unsupported(f"graph attribute {n.target} of type {type(t).__name__}")
        if t.device.type == "cpu" and t.dim() > 0:
            # A constant the graph made (torch.tensor([...]) in the traced
            # code): moved once, outside the fake mode AOTAutograd compiles in.
            with unset_fake_temporarily():
                t = t.to("tpu")
        d.constants.append(t)
        value_of[n] = input_of[n] = next_id
        next_id += 1
    d.num_inputs = next_id

    def ref(a, name):
        if isinstance(a, Node):
            v = value_of.get(a)
            if not isinstance(v, int):
                raise Unsupported(f"aten.{name} reads {a.format_node()}, which is not a tensor value")
            return v
        raise Unsupported(f"aten.{name} takes {a!r} where a tensor is expected")

    def encode(arg_schema, v, name):
        ty = _base_kind(arg_schema.type)
        kind = ty.kind()
        if v is None:
            if kind == "GeneratorType":
                d.num_generators += 1
                return ("gen", d.num_generators - 1)
            return ("none",)
        if isinstance(v, torch.dtype):  # ScalarType arguments are typed int in schemas
            return ("dtype", dtype_code(v))
        if isinstance(v, (torch.layout, torch.memory_format, torch.device)):
            return ("other",)
        if kind == "TensorType":
            if isinstance(v, (int, float, bool)):
                return _number(v, is_tensor_arg=True)
            # The traced tensor's contiguity: some CPU kernels branch on it
            # (det's LU), and the backward graph was traced with it.
            fake = v.meta.get("val") if isinstance(v, Node) else None
            contiguous = int(fake.is_contiguous()) if isinstance(fake, torch.Tensor) else -1
            return ("t", ref(v, name), contiguous)
        if kind == "ListType":
            elem = _base_kind(ty.getElementType()).kind()
            if elem == "TensorType":
                return ("tl", [-1 if x is None else ref(x, name) for x in v])
            if elem in ("IntType", "SymIntType"):
                return ("ints", [_static_int(x, name) for x in v])
            if elem == "BoolType":
                return ("ints", [int(x) for x in v])
            raise Unsupported(f"aten.{name}: list argument of {elem}")
        if kind == "NumberType":
            if isinstance(v, Node):
                raise Unsupported(f"aten.{name}: a symbolic number argument")
            return _number(v)
        if kind in ("IntType", "SymIntType"):
            return ("int", _static_int(v, name))
        if kind == "FloatType":
            return ("float", float(v))
        if kind == "BoolType":
            return ("bool", bool(v))
        if kind == "ScalarTypeType":
            return ("dtype", dtype_code(v))
        if kind in ("LayoutType", "MemoryFormatType", "DeviceObjType"):
            return ("other",)
        if kind == "StringType":
            return ("str", str(v))
        if kind == "GeneratorType":
            raise Unsupported(f"aten.{name}: an explicit generator inside a compiled graph")
        raise Unsupported(f"aten.{name}: argument {arg_schema.name} of type {ty}")

    pending_cpu_writes = []
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "get_attr"):
            continue
        if n.op == "output":
            outs = n.args[0]
            outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
            n_user = len(outs)
            cpu_targets = [dst for dst, _ in pending_cpu_writes]
            outs += [src for _, src in pending_cpu_writes]
            result_index: dict[int, int] = {}
            for i, o in enumerate(outs):
                if i >= n_user:
                    d.cpu_writes.append((input_of[cpu_targets[i - n_user]], i))
                elif isinstance(o, Node) and _on_cpu(o):
                    d.cpu_outputs.append(i)
                if o is None:
                    d.outputs.append(("none", 0))
                elif isinstance(o, Node) and o in input_of:
                    d.outputs.append(("input", input_of[o]))
                elif isinstance(o, Node) and isinstance(value_of.get(o), int):
                    vid = value_of[o]
                    if vid not in result_index:
                        t = o.meta["val"]
                        strides = _dense_strides(t)
                        result_index[vid] = len(d.results)
                        d.results.append((vid, dtype_code(t.dtype), list(t.shape), strides))
                    d.outputs.append(("result", result_index[vid]))
                else:
                    raise Unsupported(f"graph output {o!r}")
            continue
        if n.op != "call_function":
            raise Unsupported(f"{n.op} node {n.format_node()}")
        if (n.target is torch.ops.aten.lift_fresh_copy.default and isinstance(n.args[0], Node)
                and n.args[0].op == "get_attr" and all(u.op == "call_function" for u in n.users)):
            # torch.tensor([...]) in the traced code: its copy of the graph's
            # constant (already on tpu, above) only feeds ops of the graph.
            value_of[n] = value_of[n.args[0]]
            continue
        if n.target is operator.getitem:
            parent = value_of.get(n.args[0])
            if not isinstance(parent, list):
                raise Unsupported(f"getitem of {n.args[0]}")
            value_of[n] = parent[n.args[1]]
            continue
        if isinstance(n.target, torch._ops.OpOverload) and n.target.namespace == "tpu_jax":
            from ..pallas.jax_op import graph_call

            fakes = [a.meta["val"] for a in n.args[0]]
            inline = graph_call(n.target, fakes)
            if inline is None:
                raise Unsupported(f"{n.target} (a jax_op that donates its inputs)")
            d.ops.add("jax_module_call")
            ids_in = [ref(a, "jax_module_call") for a in n.args[0]]
            outs = list(n.meta["val"])
            ids = list(range(next_id, next_id + len(outs)))
            next_id += len(outs)
            d.nodes.append(("jax_module_call", [("tl", ids_in), ("str", inline[0]), ("str", inline[1])],
                            [_tensor_type(o) for o in outs]))
            value_of[n] = ids
            continue
        name = op_name(n.target)
        if name is None:
            raise Unsupported(f"{n.target} (not an ATen op)")
        if name in _SKIPPED:
            continue
        if name == "copy_":
            dst, src = n.args[0], n.args[1]
            if dst not in input_of or dst.op != "placeholder":
                raise Unsupported("aten.copy_ into a value that is not a graph input")
            if _on_cpu(dst):
                pending_cpu_writes.append((dst, src))
            else:
                d.writes.append((input_of[dst], ref(src, name)))
            value_of[n] = ref(src, name)
            continue
        d.ops.add(name)
        schema = n.target._schema
        args = []
        for i, a in enumerate(schema.arguments):
            if i < len(n.args):
                v = n.args[i]
            elif a.name in n.kwargs:
                v = n.kwargs[a.name]
            elif a.has_default_value():
                v = a.default_value
            else:
                raise Unsupported(f"aten.{name}: argument {a.name} missing")
            args.append(encode(a, v, name))
        if name == "native_dropout":  # eager appends the default generator too (call_parser)
            d.num_generators += 1
            args.append(("gen", d.num_generators - 1))
        outs = _outputs_of(n, name)
        ids = list(range(next_id, next_id + len(outs)))
        next_id += len(outs)
        d.nodes.append((name, args, [_tensor_type(o) for o in outs]))
        value_of[n] = ids if isinstance(n.meta.get("val"), (tuple, list)) else ids[0]
    return d


def _on_cpu(node: Node) -> bool:
    v = node.meta.get("val")
    return isinstance(v, torch.Tensor) and v.device.type == "cpu"


def _static_int(v, name):
    if isinstance(v, Node) or isinstance(v, torch.SymInt):
        raise Unsupported(f"aten.{name}: a symbolic size (dynamic shapes are not supported)")
    return int(v)
