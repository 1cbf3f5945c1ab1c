"""Tensor specs: a tensor argument of a fuzz draw as plain data.

A spec is built the same way on every device: a 1-D base buffer of seeded
values, viewed with `as_strided(shape, stride, offset)`. Every layout the
fuzzer draws (contiguous, a storage offset, transposed, every other element,
expanded with stride 0, overlapping windows) is such a view, so the CPU
reference and the tpu copy have identical values, strides, offsets and
storage sizes, and a repro is a literal buffer plus one `as_strided`.
"""
import math
from dataclasses import dataclass

import torch
from hypothesis import strategies as st

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I64, I32, I16, I8, U8 = torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8
B, C64 = torch.bool, torch.complex64

# float32 dominates (what models run); every other dtype the backend stores
# appears too. Repeats weight the draw.
DTYPES = [F32, F32, F32, F32, F64, F16, BF16, I64, I64, I32, I16, I8, U8, B, B, C64]
FLOAT_DTYPES = [F32, F32, F64, F16, BF16]

# Base shapes: a small pool keeps compiled programs reusable across draws (each
# new shape is a new XLA compile); 0-d, empty, size-1 and large-rank shapes
# are all in it. `shapes()` also draws free shapes now and then.
SHAPES = [(), (1,), (5,), (0,), (2, 3), (3, 1), (4, 4), (1, 5), (3, 0), (2, 3, 4), (2, 1, 3), (3, 3, 3),
          (2, 2, 3, 3), (1, 3, 4, 4), (2, 2, 2, 3, 3), (1, 2, 1, 2, 1, 2, 1, 2),
          (2, 1, 1, 2, 1, 1, 1, 2, 1, 2)]

LAYOUTS = ["contig", "contig", "contig", "offset", "transposed", "strided", "expanded", "overlap"]
STYLES = ["normal", "normal", "small", "special", "positive"]


@dataclass(frozen=True)
class TensorSpec:
    shape: tuple
    dtype: torch.dtype
    layout: str = "contig"
    style: str = "normal"
    seed: int = 0
    device: str = "dev"      # "dev": the device under test; "cpu": a CPU tensor on both sides
    sort: bool = False       # values sorted along the last dim (searchsorted's boundaries)
    values: tuple = None     # explicit values (indices); overrides style/seed

    def describe(self):
        d = str(self.dtype).replace("torch.", "")
        lay = "" if self.layout == "contig" else f",{self.layout}"
        dev = "" if self.device == "dev" else ",cpu"
        return f"{d}{list(self.shape)}{lay}{dev}"


def _numel(shape):
    return math.prod(shape)


def contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def geometry(spec):
    """(base length, stride, offset) of the spec's view into its base buffer."""
    shape, n = spec.shape, _numel(spec.shape)
    lay = spec.layout if len(shape) >= 1 and n > 0 else "contig"
    if lay == "transposed" and len(shape) < 2:
        lay = "strided"
    if lay == "offset":
        off = 1 + spec.seed % 5
        return n + off + 2, contiguous_strides(shape), off
    if lay == "transposed":
        # the view of a contiguous tensor of the reversed shape, reversed back
        rev = contiguous_strides(tuple(reversed(shape)))
        return n, tuple(reversed(rev)), 0
    if lay == "strided":
        st_ = contiguous_strides(shape[:-1] + (2 * shape[-1],))
        return 2 * n, st_[:-1] + (2,), 0
    if lay == "expanded":
        # the first non-1 dim broadcast (stride 0)
        d = next((i for i, s in enumerate(shape) if s > 1), 0)
        small = shape[:d] + (1,) + shape[d + 1:]
        strides = list(contiguous_strides(small))
        strides[d] = 0
        return _numel(small), tuple(strides), 0
    if lay == "overlap":
        # windows of the last dim that share elements (stride 1 in the last dim
        # two dims); in-place writes into it must be rejected.
        strides = list(contiguous_strides(shape))
        if len(shape) >= 2:
            strides[-2] = 1
        else:
            strides[-1] = 0
        extent = sum((s - 1) * t for s, t in zip(shape, strides)) + 1
        return extent, tuple(strides), 0
    return max(n, 0), contiguous_strides(shape), 0


def _special_pool(dtype):
    if dtype == B:
        return [True, False]
    if dtype.is_floating_point or dtype.is_complex:
        big = 3e38 if dtype in (F32, BF16, C64) else (6e4 if dtype == F16 else 1e300)
        # No subnormals: XLA:CPU, like TPUs, flushes them to zero (a platform
        # difference, docs/reliability.md), so every op would differ on them.
        return [0.0, -0.0, 1.0, -1.0, 0.5, float("nan"), float("inf"), float("-inf"), big, -big, 1e-3, 2.5, -3.0]
    info = torch.iinfo(dtype)
    # No iinfo.min: the CPU reference itself traps (SIGFPE) on INT_MIN // -1.
    return [0, 1, -1 if info.min < 0 else 2, info.max, info.min + 1 if info.min < 0 else 0, 7, info.max - 1]


def base_values(spec, n):
    """The spec's base buffer: n values on the CPU."""
    dtype = spec.dtype
    if spec.values is not None:
        vals = list(spec.values)[:n] + [0] * max(0, n - len(spec.values))
        return torch.tensor(vals, dtype=dtype) if n else torch.empty(0, dtype=dtype)
    g = torch.Generator().manual_seed(spec.seed)
    if n == 0:
        return torch.empty(0, dtype=dtype)
    if spec.style == "special":
        pool = _special_pool(dtype)
        idx = torch.randint(0, len(pool), (n,), generator=g)
        if dtype.is_complex:
            re = torch.tensor([pool[i] for i in idx.tolist()], dtype=torch.float64)
            im = torch.tensor([pool[i] for i in torch.randint(0, len(pool), (n,), generator=g).tolist()],
                              dtype=torch.float64)
            return torch.complex(re, im).to(dtype)
        vals = [pool[i] for i in idx.tolist()]
        if dtype.is_floating_point:
            return torch.tensor(vals, dtype=torch.float64).to(dtype)
        return torch.tensor(vals, dtype=dtype)   # exact: no trip through float64
    if dtype == B:
        return torch.rand(n, generator=g) > 0.5
    if dtype.is_floating_point or dtype.is_complex:
        wide = torch.complex128 if dtype.is_complex else torch.float64
        if spec.style == "small":
            v = torch.randint(-3, 4, (n,), generator=g).to(wide)
        else:
            v = torch.randn(n, generator=g, dtype=wide) * 2
            if spec.style == "positive":
                v = v.abs() + 0.25
        return v.to(dtype)
    info = torch.iinfo(dtype)
    lo, hi = (-3, 4) if spec.style == "small" else (-9, 10)
    if spec.style == "positive" or info.min == 0:
        lo, hi = 1 if spec.style == "positive" else 0, hi + 9
    return torch.randint(lo, hi, (n,), generator=g).to(dtype)


def _sorted(base, shape):
    """Sorted along the last dim of `shape` (a contiguous layout); complex
    values (which have no order) are left as they are."""
    if base.is_complex() or not shape or base.numel() != _numel(shape):
        return base
    if base.dtype == B:
        return base.view(shape).to(U8).sort(-1).values.flatten().to(B)
    return base.view(shape).sort(-1).values.flatten()


def make(spec, device):
    """The spec's tensor on `device` ("cpu" or "tpu"); "cpu"-placed specs stay on the CPU."""
    n_base, stride, offset = geometry(spec)
    base = base_values(spec, n_base)
    if spec.sort and base.numel():
        base = _sorted(base, spec.shape)
    if spec.device == "dev" and device != "cpu":
        base = base.to(device)
    return base.as_strided(spec.shape, stride, offset)


# --------------------------------------------------------------------------
# Strategies.

def shapes():
    """A base shape: mostly from the pool, sometimes free (rank 0-6, sizes 0-4)."""
    free = st.lists(st.integers(0, 4), min_size=0, max_size=6).map(tuple)
    return st.one_of(st.sampled_from(SHAPES), st.sampled_from(SHAPES), st.sampled_from(SHAPES), free)


def tensors(shape, dtype, layouts=LAYOUTS, styles=STYLES, device="dev", sort=False):
    """A TensorSpec of the given shape and dtype (strategies or values)."""
    as_st = lambda v: v if isinstance(v, st.SearchStrategy) else st.just(v)  # noqa: E731
    return st.builds(TensorSpec, as_st(shape), as_st(dtype), st.sampled_from(layouts), st.sampled_from(styles),
                     st.integers(0, 2 ** 16), st.just(device), st.just(sort))


def broadcast_shapes_of(shape):
    """Shapes that broadcast with `shape`: suffixes, with some dims set to 1."""
    out = [shape, ()]
    for k in range(1, len(shape) + 1):
        suf = shape[len(shape) - k:]
        out.append(suf)
        out.append(tuple(1 if i % 2 == 0 else s for i, s in enumerate(suf)))
    if shape:
        out.append((1,) + shape)
    return out


def literal(spec):
    """Python source building the spec's CPU tensor (the view and its base)."""
    n_base, stride, offset = geometry(spec)
    base = base_values(spec, n_base)
    if spec.sort and base.numel():
        base = _sorted(base, spec.shape)
    vals = base.tolist()
    if spec.dtype.is_complex:
        body = ", ".join(f"complex({_num(v.real)}, {_num(v.imag)})" for v in vals)
    else:
        body = ", ".join(_num(v) for v in vals)
    src = f"torch.tensor([{body}], dtype={spec.dtype})"
    if tuple(spec.shape) == (n_base,) and stride == (1,) and offset == 0:
        return src, None
    return src, (tuple(spec.shape), tuple(stride), offset)


def _num(v):
    if isinstance(v, bool):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return repr(v)
