"""Cases for the cache-order property test (tests/test_cache_order.py).

The eager executor caches one compiled program per key; a key that misses a
fact the result depends on lets a later call run a program built for another
call. This module builds many calls of lowered ops with several operands that
differ only in such facts (which operand is a device tensor, a 0-d device
tensor, a 0-d CPU tensor or a Python scalar, and of which dtype; operands
swapped; the default dtype), runs them in a given order and records results.

A case is a callable plus operand *specs*; it is rebuilt from its specs on each
call, so the same case can run on the CPU (the reference), on tpu in several
orders in one process, and in a fresh process (`python cache_order_cases.py
--order shuffle:SEED --out FILE`, which saves {case id: result} with torch.save).

Operand specs:
  ("T", dtype)      a device tensor of shape (3,)
  ("D0", dtype)     a 0-d device tensor
  ("C0", dtype)     a 0-d CPU tensor
  ("P", type)       a Python scalar (int, float, bool, complex)
  ("t", tensor)     a given CPU tensor (OpInfo samples) placed on the device
  ("c", tensor)     a given tensor kept on the CPU (0-d, from OpInfo samples)
  ("v", value)      a plain argument passed as is (dims, flags, Python numbers of samples)
  ("L", [specs])    a list of specs (cat, stack)
  ("O", dtype)      an empty device tensor for out= (resized by the op)
"""
import argparse
import functools
import hashlib
import operator
import os
import re
import random
import sys
import traceback

import torch
from torch.utils import _pytree as pytree

DEV = "tpu"
F32, F64, I64, B, C64 = torch.float32, torch.float64, torch.int64, torch.bool, torch.complex64

# Deterministic small values per dtype; positive integers keep integer
# division, pow and shifts free of value-dependent errors.
_FLOATS = [1.5, -2.25, 0.75, 3.0, -0.5, 2.5, -1.25]
_INTS = [3, 1, 4, 2, 5, 1, 2]
_BOOLS = [True, False, True, True, False, False, True]
_COMPLEX = [1.5 - 0.5j, -0.75 + 2j, 2.25 + 0.25j, -1 - 1j, 0.5 + 1.5j, 3 - 2j, 1 + 0j]
# Scalars by operand position, so swapped operands have different values.
_SCALARS = {
    int: [2, 3, 4],
    float: [1.75, -0.5, 2.5],
    bool: [True, True, True],
    complex: [1.5 - 0.5j, 0.5 + 1j, -1 + 0.5j],
}


def _tensor_values(dtype, n, salt):
    if dtype == torch.bool:
        base = _BOOLS
    elif dtype.is_complex:
        base = _COMPLEX
    elif dtype.is_floating_point:
        base = _FLOATS
    else:
        base = _INTS
    vals = [base[(i + salt) % len(base)] for i in range(n)]
    return torch.tensor(vals, dtype=dtype)


def _scalar_value(pytype, pos):
    return _SCALARS[pytype][pos % 3]


def _scalar_tensor(dtype, pos):
    py = {torch.bool: bool}.get(dtype) or (complex if dtype.is_complex else float if dtype.is_floating_point else int)
    return torch.tensor(_scalar_value(py, pos), dtype=dtype)


def _same_as_device(t, device):
    """A copy of CPU tensor t on `device` with the same sizes and strides."""
    if device == "cpu":
        return t.clone() if t.is_contiguous() else t.clone(memory_format=torch.preserve_format)
    if t.is_contiguous() or t.dim() == 0:
        return t.to(device)
    return t.contiguous().to(device).as_strided(t.shape, t.contiguous().stride())


def materialize(spec, device, pos):
    kind, x = spec
    if kind == "T":
        return _tensor_values(x, 3, pos).to(device)
    if kind == "D0":
        return _scalar_tensor(x, pos).to(device)
    if kind == "C0":
        return _scalar_tensor(x, pos)
    if kind == "P":
        return _scalar_value(x, pos)
    if kind == "t":
        return _same_as_device(x, device)
    if kind == "c":
        return x.clone()
    if kind == "v":
        return x
    if kind == "L":
        return [materialize(s, device, pos + i) for i, s in enumerate(x)]
    if kind == "O":
        return torch.empty(0, dtype=x, device=device)
    if kind == "d":
        return device
    raise ValueError(spec)


def describe_spec(spec):
    kind, x = spec
    short = lambda d: str(d).replace("torch.", "")  # noqa: E731
    if kind == "T":
        return f"tpu[3]:{short(x)}"
    if kind == "D0":
        return f"tpu0d:{short(x)}"
    if kind == "C0":
        return f"cpu0d:{short(x)}"
    if kind == "P":
        return f"py:{x.__name__}"
    if kind == "t":
        return f"tpu{list(x.shape)}:{short(x.dtype)}"
    if kind == "c":
        return f"cpu{list(x.shape)}:{short(x.dtype)}"
    if kind == "v":
        return repr(x) if not isinstance(x, torch.dtype) else short(x)
    if kind == "L":
        return "[" + ",".join(describe_spec(s) for s in x) + "]"
    if kind == "O":
        return f"out=tpu:{short(x)}"
    if kind == "d":
        return "<device>"
    return repr(spec)


def _on_device(spec):
    kind, x = spec
    if kind in ("T", "D0", "t", "O"):
        return True
    if kind == "L":
        return any(_on_device(s) for s in x)
    return False


class Case:
    __slots__ = ("id", "op", "fn", "args", "kwargs", "default_dtype", "note")

    def __init__(self, op, fn, args, kwargs=None, default_dtype=F32, note=""):
        self.op, self.fn, self.args = op, fn, list(args)
        self.kwargs = dict(kwargs or {})
        self.default_dtype = default_dtype
        self.note = note
        parts = [describe_spec(s) for s in self.args]
        parts += [f"{k}={describe_spec(s)}" for k, s in self.kwargs.items()]
        dd = "" if default_dtype == F32 else " [default f64]"
        self.id = f"{op}({', '.join(parts)}){dd}{note}"

    def has_device_operand(self):
        return any(_on_device(s) for s in self.args) or any(_on_device(s) for s in self.kwargs.values())

    def call(self, device):
        """Runs the case on `device`; returns the raw result (device tensors)."""
        old = torch.get_default_dtype()
        torch.set_default_dtype(self.default_dtype)
        try:
            args = [materialize(s, device, i) for i, s in enumerate(self.args)]
            kwargs = {k: materialize(s, device, 10 + i) for i, (k, s) in enumerate(self.kwargs.items())}
            return self.fn(*args, **kwargs)
        finally:
            torch.set_default_dtype(old)


# --------------------------------------------------------------------------
# Results: a pytree of CPU tensors / plain values, or Error(type name).

class Error:
    def __init__(self, exc):
        self.type = type(exc).__name__
        self.msg = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""

    def __repr__(self):
        return f"{self.type}: {self.msg}"


def is_fallback_error(r):
    return isinstance(r, Error) and r.type == "NotImplementedError" and "TORCH_TPU_FALLBACK=error" in r.msg


def run(case, device):
    """Runs the case and brings the result to the CPU (syncing, so asynchronous
    errors of this call surface here)."""
    try:
        out = case.call(device)
        leaves, spec = pytree.tree_flatten(out)
        where = []
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, torch.Tensor):
                where.append(leaf.device.type)
                leaves[i] = leaf.detach().cpu()
            else:
                where.append(None)
        return (pytree.tree_unflatten(leaves, spec), where)
    except Exception as exc:  # noqa: BLE001
        return (Error(exc), None)


def compare(got, expect, device_check=True):
    """None if `got` equals the CPU's `expect` (exact dtype, assert_close
    values, same exception type), else the differing fact."""
    g, g_where = got
    e, _ = expect
    if isinstance(e, Error):
        if isinstance(g, Error):
            return None if g.type == e.type else f"raised {g!r}; CPU raised {e!r}"
        return f"returned a result; CPU raised {e!r}"
    if isinstance(g, Error):
        return f"raised {g!r}; CPU returned {_brief(e)}"
    gl, gs = pytree.tree_flatten(g)
    el, es = pytree.tree_flatten(e)
    if gs != es:
        return f"result structure {gs}; CPU gave {es}"
    for i, (a, b) in enumerate(zip(gl, el)):
        at = f"out[{i}]" if len(el) > 1 else "out"
        if isinstance(b, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                return f"{at}: got {type(a).__name__}; CPU gave a tensor"
            if device_check and g_where[i] != DEV:
                return f"{at}: result on {g_where[i]}, not {DEV}"
            if a.dtype != b.dtype:
                return f"{at}: dtype {a.dtype}; CPU gives {b.dtype}"
            if a.shape != b.shape:
                return f"{at}: shape {list(a.shape)}; CPU gives {list(b.shape)}"
            try:
                torch.testing.assert_close(a, b, equal_nan=True, check_dtype=True)
            except AssertionError:
                return f"{at}: values {_brief(a)}; CPU gives {_brief(b)}"
        elif a != b and not (a != a and b != b):
            return f"{at}: {a!r}; CPU gives {b!r}"
    return None


def same_bits(a, b):
    """Bitwise equality of two results (in-process vs fresh process)."""
    x, _ = a
    y, _ = b
    if isinstance(x, Error) or isinstance(y, Error):
        return isinstance(x, Error) and isinstance(y, Error) and x.type == y.type
    xl, xs = pytree.tree_flatten(x)
    yl, ys = pytree.tree_flatten(y)
    if xs != ys:
        return False
    for p, q in zip(xl, yl):
        if isinstance(p, torch.Tensor) != isinstance(q, torch.Tensor):
            return False
        if isinstance(p, torch.Tensor):
            if p.dtype != q.dtype or p.shape != q.shape:
                return False
            if p.numel() and not torch.equal(_bits(p), _bits(q)):
                return False
        elif repr(p) != repr(q):
            return False
    return True


def _bits(t):
    t = t.contiguous()
    if t.dtype == torch.bool:
        return t
    if t.is_complex():
        t = torch.view_as_real(t)
    return t.reshape(-1).view(torch.uint8)


def _brief(x):
    if isinstance(x, torch.Tensor):
        vals = x.flatten()[:6].tolist()
        return f"{x.dtype}{list(x.shape)} {vals}{'...' if x.numel() > 6 else ''}"
    if isinstance(x, (list, tuple)):
        return "(" + ", ".join(_brief(v) for v in x) + ")"
    return repr(x)


# --------------------------------------------------------------------------
# Hand-listed elementwise ops with promotion: every operand kind in every position.

SCALAR_KINDS = [("C0", B), ("C0", I64), ("C0", F32), ("C0", F64), ("C0", C64),
                ("P", int), ("P", float), ("P", bool), ("P", complex)]


CORE_BINARY = {"add", "sub", "mul", "div", "pow", "remainder", "eq", "lt", "maximum", "bitwise_and", "atan2"}


def _binary_pairs(full):
    """Operand pairs for a binary op: device tensors of mixed dtypes, 0-d device
    tensors, and every scalar kind in both positions against a device tensor.
    `full`: against both a float and an int tensor; else against one of them,
    alternating (the scalar kinds still cover both positions)."""
    T = lambda d: ("T", d)  # noqa: E731
    pairs = [(T(d), T(d)) for d in (F32, I64, B)]
    if full:
        pairs += [(T(F32), T(I64)), (T(I64), T(F32)), (T(B), T(F32))]
        pairs += [(T(F32), ("D0", I64)), (("D0", I64), T(F32)), (("D0", F64), T(F32))]
    else:
        pairs += [(T(I64), T(F32)), (("D0", F64), T(F32))]
    kinds = SCALAR_KINDS if full else [k for k in SCALAR_KINDS if k != ("C0", F32)]
    for i, k in enumerate(kinds):
        for d in ((F32, I64) if full else ((F32, I64)[i % 2],)):
            pairs += [(T(d), k), (k, T(d))]
    bool_kinds = [("C0", I64), ("P", bool), ("P", float)] if full else [("P", bool)]
    for k in bool_kinds:
        pairs += [(T(B), k), (k, T(B))]
    return pairs


def _default_dtype_pairs(full):
    """Calls whose result dtype reads the default dtype (Python float/complex
    with integer tensors), plus controls where it must not."""
    if not full:
        return [(("T", I64), ("P", float)), (("P", complex), ("T", I64)), (("T", F32), ("P", float))]
    return [(("T", I64), ("P", float)), (("P", float), ("T", I64)), (("T", I64), ("P", complex)),
            (("P", complex), ("T", I64)), (("T", B), ("P", float)), (("P", float), ("T", B)),
            (("T", F32), ("P", float)), (("P", float), ("T", F32)), (("T", I64), ("C0", F32))]


def _rop(fn):
    """A binary op called with a Python scalar first goes through the reflected operator."""
    return fn


# name, function, reflected operator for a Python scalar first (None: the function itself), in-place?, out=?
BINARY_OPS = [
    ("add", torch.add, operator.add, True, True),
    ("add(alpha=2)", functools.partial(torch.add, alpha=2), None, False, False),
    ("sub", torch.sub, operator.sub, True, True),
    ("sub(alpha=2)", functools.partial(torch.sub, alpha=2), None, False, False),
    ("rsub", torch.rsub, None, False, False),
    ("mul", torch.mul, operator.mul, True, True),
    ("div", torch.div, operator.truediv, True, True),
    ("div(trunc)", functools.partial(torch.div, rounding_mode="trunc"), None, True, False),
    ("div(floor)", functools.partial(torch.div, rounding_mode="floor"), None, True, False),
    ("floor_divide", torch.floor_divide, operator.floordiv, True, False),
    ("pow", torch.pow, None, True, True),
    ("float_power", torch.float_power, None, False, False),
    ("remainder", torch.remainder, None, True, True),
    ("fmod", torch.fmod, None, True, False),
    ("atan2", torch.atan2, None, True, False),
    ("maximum", torch.maximum, None, False, True),
    ("minimum", torch.minimum, None, False, False),
    ("fmax", torch.fmax, None, False, False),
    ("fmin", torch.fmin, None, False, False),
    ("eq", torch.eq, operator.eq, True, True),
    ("ne", torch.ne, operator.ne, False, False),
    ("lt", torch.lt, operator.lt, True, False),
    ("le", torch.le, operator.le, False, False),
    ("gt", torch.gt, operator.gt, False, False),
    ("ge", torch.ge, operator.ge, False, True),
    ("bitwise_and", torch.bitwise_and, None, True, False),
    ("bitwise_or", torch.bitwise_or, None, False, False),
    ("bitwise_xor", torch.bitwise_xor, None, False, False),
    ("bitwise_left_shift", torch.bitwise_left_shift, None, True, False),
    ("bitwise_right_shift", torch.bitwise_right_shift, None, False, False),
    ("logical_and", torch.logical_and, None, True, False),
    ("logical_or", torch.logical_or, None, False, False),
    ("logical_xor", torch.logical_xor, None, False, False),
    ("hypot", torch.hypot, None, False, False),
    ("copysign", torch.copysign, None, True, False),
    ("nextafter", torch.nextafter, None, False, False),
    ("xlogy", torch.xlogy, None, True, False),
    ("special.xlog1py", torch.special.xlog1py, None, False, False),
    ("logaddexp", torch.logaddexp, None, False, False),
    ("logaddexp2", torch.logaddexp2, None, False, False),
    ("heaviside", torch.heaviside, None, False, False),
    ("gcd", torch.gcd, None, False, False),
    ("lcm", torch.lcm, None, False, False),
    ("ldexp", torch.ldexp, None, False, False),
    ("clamp_min", torch.clamp_min, None, False, False),
    ("clamp_max", torch.clamp_max, None, False, False),
    ("special.zeta", torch.special.zeta, None, False, False),
    ("isclose", torch.isclose, None, False, False),
    ("lerp(w=0.25)", lambda a, b: torch.lerp(a, b, 0.25), None, False, False),
]


def _inplace(name):
    base = name.split("(")[0]
    kw = {}
    if "(trunc)" in name:
        kw = {"rounding_mode": "trunc"}
    elif "(floor)" in name:
        kw = {"rounding_mode": "floor"}
    method = base + "_"

    def f(a, b):
        return getattr(a, method)(b, **kw)
    return f


def _out(fn):
    def f(a, b, out):
        r = fn(a, b, out=out)
        assert r is out
        return out
    return f


def binary_cases():
    cases = []
    for name, fn, rop, inplace, out in BINARY_OPS:
        full = name in CORE_BINARY
        for a, b in _binary_pairs(full):
            use = rop if (a[0] == "P" and rop is not None) else fn
            note = " [operator]" if use is rop and rop is not None and a[0] == "P" else ""
            cases.append(Case(name, use, [a, b], note=note))
        for a, b in _default_dtype_pairs(full):
            use = rop if (a[0] == "P" and rop is not None) else fn
            cases.append(Case(name, use, [a, b], default_dtype=F64))
        if inplace:
            for d, others in [(F32, [("T", I64), ("D0", F32), ("C0", F64), ("C0", I64), ("P", int), ("P", float),
                                     ("P", complex)]),
                              (I64, [("C0", F64), ("P", float)])]:
                for b in others:
                    cases.append(Case(name + "_", _inplace(name), [("T", d), b]))
            cases.append(Case(name + "_", _inplace(name), [("T", I64), ("P", float)], default_dtype=F64))
        if out:
            for a, b in [(("T", F32), ("T", F32)), (("T", I64), ("P", float)), (("T", F32), ("C0", F64)),
                         (("C0", I64), ("T", F32))]:
                # out= of the CPU's result dtype, and of a wider one
                try:
                    rdt = Case(name, fn, [a, b]).call("cpu").dtype
                except Exception:  # noqa: BLE001
                    rdt = F32
                wide = {F32: F64, I64: F64, B: I64}.get(rdt, rdt)
                for od in dict.fromkeys([rdt, wide]):
                    cases.append(Case(name + "(out=)", _out(fn), [a, b, ("O", od)]))
    return cases


def _ternary(fn, slots, variants, name):
    """slots: default spec per position; variants: specs tried per position (one at a time)."""
    cases = [Case(name, fn, slots)]
    for pos, kinds in variants.items():
        for k in kinds:
            args = list(slots)
            args[pos] = k
            cases.append(Case(name, fn, args))
    return cases


ALL_KINDS = [("T", F32), ("T", I64), ("T", B), ("D0", F32), ("D0", I64)] + SCALAR_KINDS


def ternary_cases():
    cases = []
    T = lambda d: ("T", d)  # noqa: E731
    # where(cond, a, b): every kind for a and b, cond as device/0-d tensors.
    where = torch.where
    for a, b in [(T(F32), T(F32)), (T(I64), T(F32))] + [(T(F32), k) for k in SCALAR_KINDS] + \
            [(k, T(F32)) for k in SCALAR_KINDS] + [(T(I64), ("P", float)), (("P", float), T(I64)),
                                                   (T(B), ("P", bool)), (("P", int), ("P", float)),
                                                   (("D0", F32), ("P", int))]:
        cases.append(Case("where", where, [T(B), a, b]))
    for cond in [("D0", B), ("C0", B)]:
        cases.append(Case("where", where, [cond, T(F32), ("P", float)]))
        cases.append(Case("where", where, [cond, ("P", float), T(F32)]))
    cases.append(Case("where", where, [T(B), T(I64), ("P", float)], default_dtype=F64))
    cases.append(Case("where", where, [T(B), ("P", float), ("P", int)], default_dtype=F64))
    cases += _ternary(torch.lerp, [T(F32), T(F32), T(F32)],
                      {1: [("D0", F32), ("C0", F32), ("P", float), T(F64), T(I64)],
                       2: [("D0", F32), ("C0", F32), ("C0", F64), ("P", float), ("P", int)],
                       0: [("D0", F32), ("C0", F32)]}, "lerp")
    for name, fn in [("addcmul", torch.addcmul), ("addcdiv", torch.addcdiv)]:
        cases += _ternary(fn, [T(F32), T(F32), T(F32)],
                          {0: [("D0", F32), ("C0", F32), ("C0", F64), T(I64)],
                           1: [("D0", F32), ("C0", F32), ("C0", I64), T(I64)],
                           2: [("D0", F32), ("C0", F32), ("C0", F64), ("C0", C64)]}, name)
        for v in [2, 0.5, True, 1.5 - 1j]:
            cases.append(Case(name, functools.partial(fn, value=v), [T(F32), T(F32), T(F32)],
                              note=f" value={v!r}"))
        cases.append(Case(name, functools.partial(fn, value=2), [T(I64), T(I64), T(I64)], note=" value=2"))
    cases += _ternary(torch.clamp, [T(F32), T(F32), T(F32)],
                      {1: [("D0", F32), ("C0", F32), ("C0", F64), ("P", float), ("P", int), ("v", None), T(I64)],
                       2: [("D0", F32), ("C0", F32), ("P", float), ("P", int), ("v", None), T(F64)],
                       0: [T(I64), ("D0", F32)]}, "clamp")
    cases += _ternary(torch.clamp, [T(I64), ("P", int), ("P", int)],
                      {1: [("P", float), ("C0", F32), ("v", None)], 2: [("P", float), ("v", None), ("C0", I64)]},
                      "clamp")
    cases.append(Case("clamp", torch.clamp, [T(I64), ("P", float), ("P", float)], default_dtype=F64))
    mf = lambda x, m, v: x.masked_fill(m, v)  # noqa: E731
    for x in (T(F32), T(I64), T(B)):
        for v in [("P", float), ("P", int), ("P", bool), ("D0", F32), ("D0", I64), ("C0", F32), ("C0", I64),
                  ("C0", F64), ("C0", B)]:
            cases.append(Case("masked_fill", mf, [x, T(B), v]))
    cases.append(Case("masked_fill", mf, [T(F32), ("D0", B), ("P", float)]))
    cases.append(Case("masked_fill", mf, [T(I64), T(B), ("P", float)], default_dtype=F64))
    mf_ = lambda x, m, v: x.masked_fill_(m, v)  # noqa: E731
    for v in [("P", float), ("P", int), ("D0", F32), ("C0", F64)]:
        cases.append(Case("masked_fill_", mf_, [T(F32), T(B), v]))
    return cases


# --------------------------------------------------------------------------
# OpInfo-derived cases: ops with several tensor/scalar operands, each operand
# in turn replaced by a 0-d device tensor, a 0-d CPU tensor (two dtypes) and a
# Python scalar.

RANDOM_OR_UNDEFINED = {
    "bernoulli", "normal", "normal.number_mean", "normal.in_place", "multinomial", "rand_like", "randn_like",
    "randint_like", "randint", "randn", "uniform", "cauchy", "exponential", "geometric", "log_normal",
    "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.alpha_dropout",
    "nn.functional.feature_alpha_dropout.with_train", "nn.functional.feature_alpha_dropout.without_train",
    "nn.functional.rrelu", "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d",
    "nn.functional.multi_head_attention_forward", "empty", "empty_like", "new_empty", "new_empty_strided",
    "empty_strided", "empty_permuted", "torch.empty", "item", "tensor_split", "to_sparse", "sparse.sampled_addmm",
    "sparse.mm.reduce", "nn.functional.scaled_dot_product_attention", "svd_lowrank", "pca_lowrank",
    "linalg.lstsq", "linalg.lstsq.grad_oriented", "unique", "unique_consecutive", "nonzero", "nonzero_static",
    "masked_select", "argwhere", "combinations", "to", "jiterator_binary", "jiterator_binary_return_by_ref",
    "jiterator_2inputs_2outputs", "jiterator_4inputs_with_extra_args", "jiterator_unary",
}
MAX_NUMEL = 64          # per sample tensor
SAMPLES_PER_DTYPE = 1   # samples taken per (op, dtype)
OPINFO_DTYPES = (F32, I64)


def _sample_operands(sample):
    """[(where, key, value)] of operands: the input, positional args, kwargs."""
    ops = [("input", None, sample.input)]
    ops += [("args", i, a) for i, a in enumerate(sample.args)]
    ops += [("kwargs", k, v) for k, v in sample.kwargs.items()]
    return ops


def _is_operand(v):
    if isinstance(v, torch.Tensor):
        return True
    return isinstance(v, (float, complex)) and not isinstance(v, bool)


def _spec_of(v):
    if isinstance(v, torch.Tensor):
        return ("t", v.detach().clone())
    if isinstance(v, (list, tuple)) and v and all(isinstance(e, torch.Tensor) for e in v):
        return ("L", [("t", e.detach().clone()) for e in v])
    return ("v", v)


def _numel_ok(sample):
    for _, _, v in _sample_operands(sample):
        for leaf in pytree.tree_leaves(v):
            if isinstance(leaf, torch.Tensor) and (leaf.numel() > MAX_NUMEL or leaf.is_sparse or leaf.requires_grad):
                return False
    return True


def _count_operands(sample):
    n = 0
    for _, _, v in _sample_operands(sample):
        for leaf in pytree.tree_leaves(v):
            n += _is_operand(leaf)
    return n


def _opinfo_fn(op):
    f = op.op

    def call(inp, *args, **kwargs):
        return f(inp, *args, **kwargs)
    return call


def _replacements(v):
    """Specs replacing operand v: 0-d device, 0-d CPU (same and another dtype), Python scalar."""
    if isinstance(v, torch.Tensor):
        if v.numel() == 0:
            return []
        item = v.flatten()[0].clone()
        other = {True: F64}.get(v.dtype.is_floating_point, F32) if v.dtype != B else I64
        py = item.item()
        # A 0-d CPU tensor reaches only TensorIterator-style operands (as on
        # CUDA); the hand-listed elementwise cases cover it, so OpInfo operands
        # get a 0-d device tensor of the same and of another dtype, and a Python scalar.
        reps = [("dev0", ("t", item)), ("dev0", ("t", item.to(other))), ("py", ("v", py))]
        if v.dim() == 0:
            reps = reps[1:]   # it already is a 0-d device tensor
        return reps
    if isinstance(v, float):
        return [("py", ("v", int(v) if v == v and abs(v) < 1e9 and v == int(v) else 2)),
                ("dev0", ("t", torch.tensor(v, dtype=F32)))]
    if isinstance(v, complex):
        return [("py", ("v", v.real))]
    return []


# Substitutions whose CPU result is undefined, so there is nothing to match:
# the CPU's batch norm kernels index weight and bias per channel without
# checking their size, and a 0-d one of the input's dtype is read past its end
# (tpu raises a RuntimeError naming the sizes; tests/test_bad_input.py).
BATCH_NORM_OPS = {"native_batch_norm", "_native_batch_norm_legit", "_batch_norm_with_update"}


def _cpu_reads_past_end(name, where, key, spec, sample):
    if name not in BATCH_NORM_OPS or where != "args" or key not in (0, 1) or spec[0] != "t":
        return False
    return spec[1].dim() == 0 and spec[1].dtype == sample.input.dtype and sample.input.size(1) > 1


def opinfo_cases(skip_names=()):
    from torch.testing._internal.common_methods_invocations import op_db

    from torch_tpu.conformance import sample_tracking
    sample_tracking.install()   # sample generation without inspect.stack() per call (~25 s here)
    cases, names = [], []
    for op in op_db:
        name = op.full_name if hasattr(op, "full_name") else op.name
        if name in RANDOM_OR_UNDEFINED or name in skip_names or name.startswith(("_refs", "jiterator")):
            continue
        if op.op is None or "sparse" in name:
            continue
        per_op = []
        for dtype in OPINFO_DTYPES:
            if dtype not in op.supported_dtypes("cpu"):
                continue
            torch.manual_seed(0)
            try:
                samples = []
                for s in op.sample_inputs("cpu", dtype, requires_grad=False):
                    if _numel_ok(s) and _count_operands(s) >= 2:
                        samples.append(s)
                    if len(samples) >= SAMPLES_PER_DTYPE:
                        break
            except Exception:  # noqa: BLE001
                continue
            fn = _opinfo_fn(op)
            for si, s in enumerate(samples):
                opers = _sample_operands(s)
                base = {"input": _spec_of(s.input), "args": [_spec_of(a) for a in s.args],
                        # factories' device=: the device the case runs on
                        "kwargs": {k: ("d", None) if k == "device" else _spec_of(v) for k, v in s.kwargs.items()}}

                def build(sub=None, note="", default_dtype=F32, _base=base):
                    inp = _base["input"]
                    args = list(_base["args"])
                    kwargs = dict(_base["kwargs"])
                    if sub is not None:
                        (where, key), spec = sub
                        if where == "input":
                            inp = spec
                        elif where == "args":
                            args[key] = spec
                        else:
                            kwargs[key] = spec
                    return Case(name, fn, [inp] + args, kwargs, default_dtype=default_dtype,
                                note=f" #{si}{note}")
                per_op.append(build())
                if si > 0 or dtype != OPINFO_DTYPES[0]:
                    continue   # operand substitutions on the first float32 sample
                for where, key, v in opers:
                    for label, spec in _replacements(v):
                        if _cpu_reads_past_end(name, where, key, spec, s):
                            continue
                        per_op.append(build(((where, key), spec), note=f" {where}{'' if key is None else key}->{label}"))
                        if label == "py" and isinstance(spec[1], float):
                            per_op.append(build(((where, key), spec), note=f" {where}{'' if key is None else key}->py",
                                                default_dtype=F64))
        per_op = [c for c in per_op if c.has_device_operand()]
        if per_op:
            names.append(name)
            cases += per_op
    return cases


# --------------------------------------------------------------------------

def all_cases():
    cases = binary_cases() + ternary_cases()
    hand = {"add", "sub", "rsub", "mul", "div", "true_divide", "floor_divide", "pow", "float_power", "remainder",
            "fmod", "atan2", "maximum", "minimum", "fmax", "fmin", "eq", "ne", "lt", "le", "gt", "ge",
            "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
            "logical_and", "logical_or", "logical_xor", "hypot", "copysign", "nextafter", "xlogy",
            "special.xlog1py", "logaddexp", "logaddexp2", "heaviside", "gcd", "lcm", "ldexp", "clamp_min",
            "clamp_max", "special.zeta", "isclose", "lerp", "where", "addcmul", "addcdiv", "clamp",
            "masked_fill", "div.no_rounding_mode", "div.trunc_rounding", "div.floor_rounding"}
    cases += opinfo_cases(skip_names=hand)
    cases = [c for c in cases if c.has_device_operand()]
    seen, unique = set(), []
    for c in cases:
        if c.id in seen:
            # same description, different sample values: keep both, named apart
            k = 2
            while f"{c.id} ~{k}" in seen:
                k += 1
            c.id = f"{c.id} ~{k}"
        seen.add(c.id)
        unique.append(c)
    # CACHE_ORDER_ONLY=REGEX: only the cases whose id matches (a quick check of a few ops while developing)
    only = os.environ.get("CACHE_ORDER_ONLY")
    return [c for c in unique if re.search(only, c.id)] if only else unique


def fingerprint(cases):
    h = hashlib.sha256()
    for c in cases:
        h.update(c.id.encode())
        for s in list(c.args) + list(c.kwargs.values()):
            for leaf in pytree.tree_leaves(s):
                if isinstance(leaf, torch.Tensor):
                    h.update(_bits(leaf.detach()).numpy().tobytes() if leaf.numel() else b"")
    return h.hexdigest()


def case_fingerprints(cases):
    """{case id: hash of its id and input values}, taken before any case runs."""
    return {c.id: fingerprint([c]) for c in cases}


def ordered(cases, order):
    """'forward', 'reverse' or 'shuffle:SEED'."""
    if order == "forward":
        return list(cases)
    if order == "reverse":
        return list(reversed(cases))
    if order.startswith("shuffle:"):
        out = list(cases)
        random.Random(int(order.split(":")[1])).shuffle(out)
        return out
    raise ValueError(order)


def run_in_order(cases, order, progress=None):
    """{case id: result} running `cases` on tpu in `order`, and {case id: the
    ATen ops each call compiled}. `progress`: a file naming each call before it
    runs (to name the call when a process dies)."""
    import torch_tpu
    results, compiled = {}, {}
    for c in ordered(cases, order):
        if progress is not None:
            progress.write(c.id + "\n")
            progress.flush()
        before = torch_tpu.metrics()["compiles_by_op"]
        r = run(c, DEV)
        after = torch_tpu.metrics()["compiles_by_op"]
        results[c.id] = r
        compiled[c.id] = sorted(k for k in after if after[k] != before.get(k, 0))
    return results, compiled


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--order", default="shuffle:0")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    import torch_tpu  # noqa: F401
    import warnings
    warnings.simplefilter("ignore")
    cases = all_cases()
    prints = case_fingerprints(cases)
    path = os.environ.get("CACHE_ORDER_PROGRESS")
    progress = open(path, "w") if path else None
    results, compiled = run_in_order(cases, a.order, progress)
    torch.save({"fingerprints": prints, "order": a.order,
                "results": {k: (v[0] if not isinstance(v[0], Error) else ("__error__", v[0].type, v[0].msg), v[1])
                            for k, v in results.items()},
                "compiled": compiled,
                "metrics": {k: v for k, v in torch_tpu.metrics().items()}}, a.out)


if __name__ == "__main__":
    try:
        main()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        sys.exit(1)
