"""Arguments of a fuzz draw from an ATen schema.

Each argument is drawn from its schema type and name: tensors share a base
shape and dtype (so most calls broadcast and run) but now and then take a
broadcast shape, another dtype, another layout, or live on the CPU; dims are
mostly in range and sometimes one past it; index tensors mostly hold valid
indices and sometimes one out of range. Op families whose arguments must fit
together (matmuls, convolutions, pooling, norms, losses, linear algebra)
preset some arguments in `hints.py`; the rest are drawn here.

A drawn argument is plain data: a TensorSpec, a list, a Python value, OMIT
(use the schema default) or Alias (the very object of another argument).
"""
import math
import re
from dataclasses import dataclass, field

import torch
from hypothesis import strategies as st

from .tensors import (DTYPES, FLOAT_DTYPES, I64, B, TensorSpec, broadcast_shapes_of, shapes, tensors)


class _Omit:
    def __repr__(self):
        return "OMIT"


OMIT = _Omit()


@dataclass(frozen=True)
class Alias:
    """The object passed as another argument (out= aliasing an input)."""
    name: str


@dataclass
class Ctx:
    """Facts of the call drawn so far."""
    op: str                   # e.g. "add.Tensor"
    shape: tuple = ()         # base shape (of the first tensor)
    dtype: torch.dtype = torch.float32
    drawn: dict = field(default_factory=dict)   # argument name -> drawn value
    preset: dict = field(default_factory=dict)  # hints: argument name -> value
    mixed_device: bool = False

    @property
    def ndim(self):
        return len(self.shape)

    def dim_value(self, default=None):
        d = self.drawn.get("dim", default)
        if isinstance(d, (list, tuple)):
            d = d[0] if d else None
        return d if isinstance(d, int) else default


def _dim_size(ctx, dim):
    if ctx.ndim == 0:
        return 1
    if dim is None or not -ctx.ndim <= dim < ctx.ndim:
        return max(1, math.prod(ctx.shape))
    return ctx.shape[dim]


def spatial_dims(op):
    m = re.search(r"([123])d", op)
    return int(m.group(1)) if m else None


# --------------------------------------------------------------------------
# Tensors.

INDEX_NAMES = {"index", "indices"}
FLOAT_ONLY_NAMES = {"weight", "bias", "running_mean", "running_var", "save_mean", "save_invstd", "save_var",
                    "mean", "rstd", "invstd"}
CHANNEL_NAMES = FLOAT_ONLY_NAMES


def sibling(draw, ctx, name):
    """Another operand: mostly the base shape and dtype; sometimes a broadcast
    shape, another dtype, another shape, or a CPU tensor (0-d ones are legal)."""
    mode = draw(st.sampled_from(["same"] * 5 + ["bcast"] * 2 + ["dtype", "shape", "cpu"]))
    shape, dtype, device = ctx.shape, ctx.dtype, "dev"
    if mode == "bcast":
        shape = draw(st.sampled_from(broadcast_shapes_of(ctx.shape)))
    elif mode == "dtype":
        dtype = draw(st.sampled_from(DTYPES))
    elif mode == "shape":
        shape = draw(shapes())
    elif mode == "cpu":
        shape = draw(st.sampled_from([(), ctx.shape]))
        device = "cpu"
        ctx.mixed_device = ctx.mixed_device or shape != ()
    return draw(tensors(shape, dtype, device=device))


def index_tensor(draw, ctx, name, shape=None, bound=None, unique=False):
    """An integer index tensor: values in [-bound, bound), now and then one out
    of range; int64 mostly (int32 and a float now and then: both must be rejected alike)."""
    if bound is None:
        bound = _dim_size(ctx, ctx.dim_value())
    if shape is None:
        shape = draw(st.sampled_from([(), (1,), (2,), (3,), (2, 2)]))
    n = math.prod(shape)
    dtype = draw(st.sampled_from([I64] * 8 + [torch.int32, torch.float32]))
    kind = draw(st.sampled_from(["valid"] * 6 + ["negative", "oob"]))
    seed = draw(st.integers(0, 2 ** 16))
    g = torch.Generator().manual_seed(seed)
    if unique and bound >= 1:
        vals = torch.randperm(max(bound, 1), generator=g)[:n].tolist()
        vals += [0] * (n - len(vals))
    else:
        vals = torch.randint(0, max(bound, 1), (n,), generator=g).tolist()
    if kind == "negative":
        vals = [v - bound for v in vals]
    elif kind == "oob" and n:
        vals[seed % n] = bound + seed % 3
    if dtype.is_floating_point:
        vals = [float(v) for v in vals]
    return TensorSpec(tuple(shape), dtype, values=tuple(vals))


def channels(ctx):
    return ctx.shape[1] if ctx.ndim >= 2 else (ctx.shape[0] if ctx.ndim == 1 else 1)


def tensor_arg(draw, ctx, name, first):
    if name == "sorted_sequence":   # searchsorted's: sorted along its last dim
        return draw(tensors(ctx.shape, ctx.dtype, layouts=["contig"], styles=["normal", "small"], sort=True))
    if first:
        return draw(tensors(ctx.shape, ctx.dtype))
    if name in INDEX_NAMES:
        return index_tensor(draw, ctx, name)
    if name in ("mask", "condition"):
        shape = draw(st.sampled_from(broadcast_shapes_of(ctx.shape)))
        return draw(tensors(shape, draw(st.sampled_from([B] * 6 + [torch.uint8])), layouts=["contig", "strided"]))
    if name == "boundaries":
        shape = draw(st.sampled_from([(4,), (1,), (0,)] + ([ctx.shape[:-1] + (4,)] if ctx.ndim else [])))
        return draw(tensors(shape, ctx.dtype, layouts=["contig"], styles=["normal", "small"], sort=True))
    if name in CHANNEL_NAMES:
        shape = draw(st.sampled_from([(channels(ctx),)] * 4 + [(channels(ctx) + 1,), ()]))
        styles = ["positive"] if "var" in name or "std" in name else ["normal", "positive"]
        return draw(tensors(shape, draw(st.sampled_from([ctx.dtype] * 4 + FLOAT_DTYPES)), styles=styles))
    return sibling(draw, ctx, name)


def index_list(draw, ctx):
    """`Tensor?[] indices` of index/index_put: per leading dim None, an integer
    index or a boolean mask; integer indices share a shape (they broadcast)."""
    k = draw(st.integers(1, max(1, min(ctx.ndim, 3))))
    ishape = draw(st.sampled_from([(2,), (3,), (1,), (2, 2), ()]))
    out = []
    for i in range(k):
        kind = draw(st.sampled_from(["int", "int", "none", "mask"]))
        size = ctx.shape[i] if i < ctx.ndim else 1
        if kind == "none":
            out.append(None)
        elif kind == "mask" and i == 0:
            out.append(draw(tensors(ctx.shape[:1] if ctx.ndim else (), B, layouts=["contig"])))
        else:
            out.append(index_tensor(draw, ctx, "indices", shape=ishape, bound=size))
    return out


def tensor_list(draw, ctx):
    """`Tensor[] tensors` (cat): 1-3 tensors equal but along one dim."""
    n = draw(st.integers(0, 3))
    dim = draw(st.integers(-ctx.ndim - 1, ctx.ndim)) if ctx.ndim else 0
    ctx.drawn["dim"] = dim
    out = []
    for i in range(n):
        shape = list(ctx.shape)
        if ctx.ndim and -ctx.ndim <= dim < ctx.ndim:
            shape[dim] = draw(st.integers(0, 3))
        mode = draw(st.sampled_from(["same"] * 4 + ["dtype", "shape", "legacy"]))
        dtype = ctx.dtype if mode != "dtype" else draw(st.sampled_from(DTYPES))
        if mode == "shape":
            shape = list(draw(shapes()))
        elif mode == "legacy":
            shape = [0]   # 1-D empty tensors are skipped by cat
        out.append(draw(tensors(tuple(shape), dtype)))
    return out


# --------------------------------------------------------------------------
# Non-tensor arguments, by name.

def scalar_arg(draw, ctx, name):
    if name in ("n",):
        return draw(st.integers(-1, 4))
    if name in ("p", "ord"):
        return draw(st.sampled_from([0, 1, 2, 3, 0.5, float("inf"), float("-inf"), -1]))
    if name == "step":
        return draw(st.sampled_from([1, 2, 0.5, -1, 0, 3]))
    ints = st.integers(-3, 5)
    floats = st.sampled_from([0.5, -1.5, 2.0, 1e-3, 0.0, -0.0, 3.25, float("nan"), float("inf"), 1e20])
    return draw(st.one_of(ints, ints, floats, floats, st.booleans(), st.just(1.5 - 0.5j)))


def dim_arg(draw, ctx):
    n = ctx.ndim
    lo, hi = (-1, 0) if n == 0 else (-n, n - 1)
    return draw(st.one_of(st.integers(lo, hi), st.integers(lo, hi), st.integers(lo, hi),
                          st.sampled_from([hi + 1, lo - 1, 64])))


def int_arg(draw, ctx, name, arg):
    if name == "dim" or name.endswith("_dim") and name != "last_dim_size":
        return dim_arg(draw, ctx)
    if name == "k":
        return draw(st.integers(0, _dim_size(ctx, ctx.dim_value(-1)) + 1))
    if name == "reduction":
        return draw(st.sampled_from([0, 1, 2, 1, 3]))
    if name == "ignore_index":
        return draw(st.sampled_from([-100, 0, 1]))
    if name in ("diagonal", "offset"):
        return draw(st.integers(-3, 3))
    if name == "decimals":
        return draw(st.integers(-2, 3))
    if name in ("groups", "group"):
        return draw(st.sampled_from([1, 1, 2, 3]))
    if name == "normalization":
        return draw(st.integers(0, 2))   # fft_norm_mode: 0-2 are the modes; others index past an enum
    if name == "bins":
        return draw(st.sampled_from([1, 4, 10, 0]))
    return draw(st.integers(-1, 4))


def int_list_arg(draw, ctx, name, arg):
    n, nsp = ctx.ndim, spatial_dims(ctx.op) or max(1, min(ctx.ndim - 2, 3))
    if name in ("dim", "dims"):
        if n == 0:
            return draw(st.sampled_from([[], [0], [-1], [1]]))
        k = draw(st.integers(0, n))
        dims = draw(st.permutations(list(range(n))))[:k]
        if ctx.op.startswith("_fft"):
            return dims   # the internal FFT ops take wrapped dims (the CPU's corrupts its heap on negative ones)
        dims = [d - n if draw(st.booleans()) else d for d in dims]
        bad = draw(st.sampled_from([None] * 8 + ["dup", "oob"]))
        if bad == "dup" and dims:
            dims = dims + dims[:1]
        elif bad == "oob":
            dims = dims + [n]
        return dims
    if name == "kernel_size":
        return draw(st.lists(st.integers(1, 3), min_size=nsp, max_size=nsp))
    if name == "stride":
        return draw(st.one_of(st.just([]), st.lists(st.integers(1, 2), min_size=nsp, max_size=nsp)))
    if name == "padding":
        return draw(st.lists(st.integers(0, 1), min_size=nsp, max_size=nsp))
    if name == "dilation":
        return draw(st.lists(st.integers(1, 2), min_size=nsp, max_size=nsp))
    if name in ("output_size", "output_padding"):
        hi = 5 if name == "output_size" else 1
        return draw(st.lists(st.integers(0 if name == "output_padding" else 1, hi), min_size=nsp, max_size=nsp))
    if name == "pad":
        return draw(st.lists(st.integers(-1, 2), min_size=0, max_size=2 * max(n, 1)))
    if name == "normalized_shape":
        k = draw(st.integers(0, n))
        return list(ctx.shape[n - k:]) if draw(st.integers(0, 5)) else [3]
    if name in ("repeats", "shifts", "size", "sizes", "input_size", "input_sizes"):
        base = [draw(st.integers(0, 2)) for _ in range(n)] if name == "repeats" else list(ctx.shape)
        if name == "shifts":
            base = [draw(st.integers(-4, 4)) for _ in range(draw(st.integers(1, max(n, 1))))]
        return base + ([1] if draw(st.integers(0, 7)) == 0 else [])
    return draw(st.lists(st.integers(0, 3), max_size=3))


def float_arg(draw, ctx, name):
    if name == "eps":
        return draw(st.sampled_from([1e-5, 1e-6, 0.1]))
    if name == "momentum":
        return draw(st.sampled_from([0.1, 0.0, 1.0]))
    if name.startswith("scale"):
        return draw(st.sampled_from([None, 2.0, 0.5, 1.5]))
    if name in ("nan", "posinf", "neginf"):
        return draw(st.sampled_from([None, 0.0, 1e3, -1e3]))
    return draw(st.sampled_from([0.5, 1.0, 2.0, 0.0, -1.5, 1e-3, 3.0]))


STRINGS = {
    "approximate": ["none", "tanh", "exact"],
    "reduce": ["sum", "prod", "mean", "amax", "amin", "add", "multiply", "max"],
    "mode": ["reduced", "complete", "r", "bad"],
    "UPLO": ["L", "U", "X"],
    "rounding_mode": [None, "trunc", "floor", "round"],
    "side": [None, "left", "right"],
    "driver": [None],
}


def arg_value(draw, ctx, arg, first_tensor):
    """One drawn argument (see the module docstring for what it can be)."""
    name, t = arg.name, str(arg.real_type)
    if name in ctx.preset:
        return ctx.preset[name]
    if arg.has_default_value() and t != "Tensor" and draw(st.integers(0, 2)) == 0:
        return OMIT
    optional = t.startswith("Optional[")
    inner = t[len("Optional["):-1] if optional else t
    if optional and inner not in ("Generator",) and draw(st.integers(0, 3)) == 0:
        return None
    if inner == "Tensor":
        return tensor_arg(draw, ctx, name, first_tensor)
    if inner == "List[Tensor]":
        return tensor_list(draw, ctx)
    if inner == "List[Optional[Tensor]]":
        return index_list(draw, ctx)
    if inner == "number":
        return scalar_arg(draw, ctx, name)
    if inner in ("int", "SymInt"):
        return int_arg(draw, ctx, name, arg)
    if inner in ("List[int]", "List[SymInt]"):
        return int_list_arg(draw, ctx, name, arg)
    if inner == "bool":
        return draw(st.booleans())
    if inner == "float":
        return float_arg(draw, ctx, name)
    if inner == "str":
        return draw(st.sampled_from(STRINGS.get(name, ["bad"])))
    if inner == "ScalarType":
        return draw(st.sampled_from(DTYPES))
    if inner == "List[bool]":
        n = len(arg.default_value) if arg.has_default_value() and arg.default_value else 3
        return draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return None   # Generator, Layout, Device, MemoryFormat: the defaults
