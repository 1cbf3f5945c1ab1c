"""Fuzz targets: the ops the backend lowers natively, and how a call is drawn.

Targets come from the backend's own registry (`torch_tpu._C._lowered_ops()`,
ATen overload names such as "add.Tensor"). Each draw calls the op itself
(`torch.ops.aten.add.Tensor`), its out= overload or its in-place overload,
with arguments drawn from the schema (`args.py`, `hints.py`). Ops whose
results are random are left out (nothing to compare), each named with why.
"""
from dataclasses import dataclass, field

import torch
from hypothesis import strategies as st

from . import hints
from .args import OMIT, Alias, Ctx, arg_value
from .tensors import DTYPES, TensorSpec, geometry, shapes

# Random results: the values cannot match the CPU's (its generator differs).
EXCLUDED = {
    "bernoulli_.Tensor": "random", "bernoulli_.float": "random", "cauchy_": "random",
    "exponential_": "random", "geometric_": "random", "log_normal_": "random", "multinomial": "random",
    "normal.Tensor_Tensor": "random", "normal.Tensor_float": "random", "normal.float_Tensor": "random",
    "normal_": "random", "random_": "random", "random_.from": "random", "random_.to": "random",
    "randperm.generator_out": "random", "uniform_": "random",
}
# Arguments fixed (by op or overload name): ops with a random mode run their
# deterministic one; `_native_batch_norm_legit.no_stats` only in training mode,
# as PyTorch calls it (in eval mode, with no statistics, the CPU kernel reads
# a null pointer and the process dies: no reference to compare with).
FIXED = {"native_dropout": {"train": False}, "rrelu_with_noise_backward": {"training": False},
         "_native_batch_norm_legit.no_stats": {"training": True},
         # float bounds: with bool ones the CPU's rrelu uses a slope of 0.5, not (lower + upper) / 2
         "rrelu_with_noise_": {"training": False, "lower": 0.125, "upper": 1 / 3}}
FIXED["rrelu_with_noise"] = FIXED["rrelu_with_noise_"]


def _overload(name):
    base, _, ov = name.partition(".")
    return getattr(getattr(torch.ops.aten, base), ov or "default")


def _key(schema):
    return [(a.name, str(a.real_type)) for a in schema.arguments if not a.is_out]


def _out_overload(name):
    """The out= overload taking the same arguments as `name`, or None."""
    fn = _overload(name)
    if any(a.is_out for a in fn._schema.arguments):
        return None   # `name` itself is an out= op (arange.start_out): drawn as such
    packet = getattr(torch.ops.aten, name.partition(".")[0])
    want = _key(fn._schema)
    for ov in packet.overloads():
        s = getattr(packet, ov)._schema
        if any(a.is_out for a in s.arguments) and _key(s) == want:
            return getattr(packet, ov)
    return None


def _inplace_overload(name):
    base, _, ov = name.partition(".")
    if base.endswith("_"):
        return None
    packet = getattr(torch.ops.aten, base + "_", None)
    if packet is None or (ov or "default") not in packet.overloads():
        return None
    fn = getattr(packet, ov or "default")
    return fn if _key(fn._schema) == _key(_overload(name)._schema) else None


@dataclass
class Target:
    name: str
    functional: object
    out: object = None
    inplace: object = None


def lowered_targets():
    """Every lowered op but the random ones, sorted by name."""
    import torch_tpu
    out = []
    for name in sorted(set(torch_tpu._C._lowered_ops())):
        if name in EXCLUDED or "::" in name:  # our own ops (tpu::ragged_dot) have no CPU kernel to compare with
            continue
        out.append(Target(name, _overload(name), _out_overload(name), _inplace_overload(name)))
    return out


# --------------------------------------------------------------------------

@dataclass
class Call:
    """One draw: an overload and its arguments as plain data."""
    target: str
    variant: str                  # "functional", "out" or "inplace"
    overload: object
    args: list = field(default_factory=list)     # [(name, value, by keyword)]
    mixed_device: bool = False
    out_names: tuple = ()                         # the out= arguments among args
    functional: object = None                     # the op's functional overload (the out= variant's reference)

    @property
    def qualname(self):
        return f"torch.ops.aten.{self.overload._schema.name.split('::')[1]}.{self.overload._overloadname}"

    def describe(self):
        parts = []
        for name, v, kw in self.args:
            s = _describe(v)
            parts.append(f"{name}={s}" if kw else s)
        return f"{self.qualname}({', '.join(parts)})"


def _describe(v):
    if isinstance(v, TensorSpec):
        return v.describe()
    if isinstance(v, Alias):
        return f"<{v.name}>"
    if isinstance(v, list) and any(isinstance(e, TensorSpec) for e in v):
        return "[" + ", ".join(_describe(e) for e in v) + "]"
    return repr(v)


def _meta(v):
    if isinstance(v, TensorSpec):
        n, stride, off = geometry(v)
        return torch.empty(n, dtype=v.dtype, device="meta").as_strided(v.shape, stride, off)
    if isinstance(v, list):
        return [_meta(e) for e in v]
    return v


def _meta_result(fn, args):
    """The functional op's output (shape, dtype) list from meta tensors, or None."""
    try:
        pos = [_meta(v) for n, v, kw in args if not kw]
        kws = {n: _meta(v) for n, v, kw in args if kw}
        out = fn(*pos, **kws)
    except Exception:  # noqa: BLE001 - the out= tensors are then drawn blind
        return None
    outs = out if isinstance(out, (tuple, list)) else [out]
    return [(tuple(o.shape), o.dtype) for o in outs if isinstance(o, torch.Tensor)]


# out= layouts: no overlapping ones. Several CPU out= kernels (avg_pool3d)
# write an overlapping out as if it were contiguous, past its storage, and
# corrupt the heap; an overlapping tensor is drawn as an in-place `self` only.
OUT_LAYOUTS = ["contig", "contig", "offset", "transposed", "strided"]
# ... and these CPU out= kernels corrupt the heap even on a transposed out (tril.out: free(): invalid size)
CONTIG_OUT_OPS = ("tril", "triu")


def _out_tensor(draw, meta, inputs, ctx):
    """An out= tensor: fresh (0 elements), exact, wrong shape, wrong dtype, an
    input itself (aliasing) or a CPU tensor (mismatched device). `inputs`:
    {name: spec} of the tensor arguments; only one of the result's shape is
    aliased (an input the op would have to resize while reading it has no
    defined result)."""
    shape, dtype = meta if meta else (ctx.shape, ctx.dtype)
    if dtype == torch.complex32:
        dtype = torch.complex64   # complex32 outs crash the CPU's FFT kernels; tpu rejects complex32 anyway
    mode = draw(st.sampled_from(["fresh", "fresh", "exact", "exact", "exact", "shape", "dtype", "alias", "cpu"]))
    # (not an overlapping input: the CPU's out= kernels write it as if dense, past its storage)
    same = [n for n, spec in inputs.items() if meta and tuple(spec.shape) == tuple(shape)
            and spec.layout not in ("expanded", "overlap")]
    if mode == "alias" and same:
        return Alias(draw(st.sampled_from(same)))
    if mode == "fresh":
        return TensorSpec((0,), dtype)
    if mode == "shape":
        shape = draw(shapes())
    elif mode == "dtype":
        dtype = draw(st.sampled_from(DTYPES))
    layout = draw(st.sampled_from(OUT_LAYOUTS if not ctx.op.startswith(CONTIG_OUT_OPS) else ["contig"]))
    if mode == "cpu":
        ctx.mixed_device = True
    return TensorSpec(tuple(shape), dtype, layout, "normal", draw(st.integers(0, 2 ** 16)),
                      "cpu" if mode == "cpu" else "dev")


@st.composite
def calls(draw, target):
    """A Call of `target`: a hypothesis strategy."""
    variants = ["functional"] * 6 + ["out"] * 3 * (target.out is not None) + ["inplace"] * 2 * (
        target.inplace is not None)
    variant = draw(st.sampled_from(variants))
    fn = {"functional": target.functional, "out": target.out, "inplace": target.inplace}[variant]
    ctx = Ctx(target.name, draw(shapes()), draw(st.sampled_from(DTYPES)))
    hints.apply(draw, ctx)
    ctx.preset.update(FIXED.get(target.name.split(".")[0], {}))
    ctx.preset.update(FIXED.get(target.name, {}))
    args, inputs, seen_tensor, keyword = [], {}, False, False
    kw_only = {a.name: a.kwarg_only for a in fn._schema.arguments}
    for a in target.functional._schema.arguments:
        if a.is_out:
            continue
        is_tensor = str(a.real_type) in ("Tensor", "Optional[Tensor]")
        v = arg_value(draw, ctx, a, first_tensor=is_tensor and not seen_tensor)
        seen_tensor = seen_tensor or is_tensor
        ctx.drawn[a.name] = v
        if v is OMIT:
            keyword = True   # later positional arguments go by name
            continue
        args.append((a.name, v, keyword or kw_only.get(a.name, a.kwarg_only)))
        if isinstance(v, TensorSpec):
            inputs[a.name] = v
    outs = [a for a in fn._schema.arguments if a.is_out]
    if outs:
        metas = _meta_result(target.functional, args) if variant == "out" else None
        for i, a in enumerate(outs):
            meta = metas[i] if metas and i < len(metas) else None
            args.append((a.name, _out_tensor(draw, meta, inputs, ctx), True))
    # a CPU tensor the op writes (a 0-d one too) must be refused like any other CPU operand it cannot take
    written = {a.name for a in fn._schema.arguments if a.alias_info is not None and a.alias_info.is_write}
    if any(n in written and isinstance(v, TensorSpec) and v.device == "cpu" for n, v, _ in args):
        ctx.mixed_device = True
    return Call(target.name, variant, fn, args, ctx.mixed_device, tuple(a.name for a in outs), target.functional)
