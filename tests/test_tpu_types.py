"""TPU-portable programs (csrc/eager/portable_scalars.cpp, tpu_type_check.cpp):
outside float64 work, Python scalars and 0-d CPU tensors travel in the type
the CPU computes with, so no program holds f64 (a TPU has none); results stay
the CPU's. TORCH_TPU_CHECK_TPU_TYPES=1 fails any program that breaks this."""
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from torch.testing import assert_close

from torch_tpu import _C

TPU = "tpu"


@pytest.fixture(autouse=True)
def type_check():
    saved = _C._tpu_type_check()
    _C._set_tpu_type_check(True)
    yield
    _C._set_tpu_type_check(saved)


def both(fn, *tensors):
    """fn on the CPU tensors and on their tpu copies (results moved back)."""
    cpu = fn(*tensors)
    dev = fn(*[t.to(TPU) if isinstance(t, torch.Tensor) and t.dim() > 0 else t for t in tensors])
    return cpu, (dev.cpu() if isinstance(dev, torch.Tensor) else dev)


F = torch.tensor([[-1.5, 0.25, 3.0], [2.0, -0.1, 7.5]])
I = torch.tensor([[-3, 0, 2], [5, 1, 16777217]])
CASES = [
    # (name, fn, input)
    ("f32*float", lambda x: x * 0.1, F),
    ("f32+alpha", lambda x: torch.add(x, x, alpha=0.3), F),
    ("bf16*float", lambda x: x * 0.1, F.bfloat16()),
    ("f16/float", lambda x: x / 3.3, F.half()),
    ("f32 transposed clamp", lambda x: x.t().clamp(min=-0.7, max=2.2), F),
    ("f32 view where", lambda x: torch.where(x[:, 1:] > 0.2, x[:, 1:], 1e-3), F),
    ("f32 * complex number", lambda x: x * (0.1 + 0.7j), F),
    ("c64 * complex number", lambda x: x * (0.1 + 0.7j), F.to(torch.complex64)),
    ("f32 pow float", lambda x: x.abs().pow(0.37), F),
    ("f32 empty", lambda x: x[:0] * 0.1, F),
    ("f32 0-d", lambda x: x.sum() * 0.1, F),
    ("int*float", lambda x: x * 0.1, I),
    ("int*exact float", lambda x: x * 0.5, I),
    ("int>=float", lambda x: x >= 2.9999999999, I),
    ("int<float", lambda x: x < 0.1, I),
    ("int+int", lambda x: x + 7, I),
    ("int32*float", lambda x: x * 0.3, I.int()),
    ("uint8 * float", lambda x: x * 1.7, I.abs().clamp(max=255).to(torch.uint8)),
    ("bool*float", lambda x: x * 0.1, I > 0),
]


@pytest.mark.parametrize("name,fn,x", CASES, ids=[c[0] for c in CASES])
def test_scalar_ops_match_cpu_without_f64(name, fn, x):
    cpu, dev = both(fn, x)
    assert dev.dtype == cpu.dtype
    assert_close(dev, cpu, rtol=0, atol=0, equal_nan=True) if not cpu.is_floating_point() else \
        assert_close(dev, cpu)


def test_float64_work_keeps_full_precision():
    x = torch.tensor([1.0, 3.0], dtype=torch.float64)
    cpu, dev = both(lambda t: t * (1 / 3), x)
    assert_close(dev, cpu, rtol=0, atol=0)  # an f32 third would be off by ~1e-8
    # A 0-d float64 CPU tensor next to integer tensors makes the result float64.
    i = torch.tensor([123456789, 5])
    cpu, dev = both(lambda t: t + torch.tensor(0.1, dtype=torch.float64), i)
    assert dev.dtype == torch.float64
    assert_close(dev, cpu, rtol=0, atol=0)
    # A 0-d float64 or complex128 CPU tensor keeps its type (rules read it):
    # right values, but f64 in the program (a TPU gap the check names).
    _C._set_tpu_type_check(False)
    cpu, dev = both(lambda t: t * torch.tensor(1 / 3 + 1j, dtype=torch.complex128), F)
    assert dev.dtype == cpu.dtype == torch.complex64
    assert_close(dev, cpu)
    cpu, dev = both(lambda t: t + torch.tensor(0.1, dtype=torch.float64), F)
    assert dev.dtype == cpu.dtype == torch.float32
    assert_close(dev, cpu, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="heaviside is not yet implemented for tensors with different dtypes"):
        torch.heaviside(F.to(TPU), torch.tensor(0.5, dtype=torch.float64))


@pytest.mark.parametrize("dtype,value", [
    (torch.int64, 123456789.0),   # not exact in f32: 123456792 if it went through f32
    (torch.int64, 2.9999999999),  # truncates to 2 (f32 rounds it to 3)
    (torch.int64, -(2 ** 62)),
    (torch.int32, -7.9),
    (torch.uint8, 300 - 256),
    (torch.bool, 1e-50),          # nonzero: True (f32 would flush it to 0)
    (torch.bool, 0.0),
    (torch.float32, 0.1),
    (torch.bfloat16, 1 / 3),
    (torch.float16, 65504.0),
    (torch.float64, 1 / 3),
    (torch.complex64, 0.1 - 2.5j),
])
def test_fill_stores_the_cpu_value(dtype, value):
    cpu = torch.zeros(2, 3, dtype=dtype).fill_(value)
    dev = torch.zeros(2, 3, dtype=dtype, device=TPU)
    dev.t().fill_(value)  # through a transposed view
    assert_close(dev.cpu(), cpu, rtol=0, atol=0)
    full = torch.full((4,), value, dtype=dtype, device=TPU)
    assert_close(full.cpu(), torch.full((4,), value, dtype=dtype), rtol=0, atol=0)


@pytest.mark.parametrize("dtype,value", [(torch.int32, 1e10), (torch.int8, 1000), (torch.float32, 1e40)])
def test_fill_overflow_is_the_cpu_error(dtype, value):
    with pytest.raises(RuntimeError) as cpu_err:
        torch.zeros(2, dtype=dtype).fill_(value)
    with pytest.raises(RuntimeError) as dev_err:
        torch.zeros(2, dtype=dtype, device=TPU).fill_(value)
    assert str(dev_err.value) == str(cpu_err.value)


def test_check_names_the_op_and_the_type():
    """An f64 operand in float32 work (narrowing turned off, as a regression
    would) is caught before the program compiles, naming op and type."""
    code = """
        import torch
        x = torch.ones(3, device="tpu")
        print((x.double() * 0.1).cpu().dtype)  # float64 work may use f64
        try:
            (x * 0.1).cpu()
        except RuntimeError as e:
            print(e)
    """
    env = dict(os.environ, TORCH_TPU_CHECK_TPU_TYPES="1", TORCH_TPU_DEBUG_WIDE_SCALARS="1")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "torch.float64"
    assert lines[1].startswith("torch_tpu TPU type check (TORCH_TPU_CHECK_TPU_TYPES=1): the program for mul.Tensor "
                               "uses float64"), r.stdout
    assert "tensor<f64>" in lines[1]


@pytest.mark.parametrize("args,dtype", [
    ((10,), torch.float32), ((0, 1, 0.25), torch.float32), ((-3.5, 7, 0.5), torch.float32),
    ((2, 20, 3), torch.bfloat16), ((-8, 8, 0.125), torch.float16), ((5, -5, -1.5), torch.float32),
    ((0,), torch.float32), ((16777000, 16777300, 7), torch.int64),
])
def test_arange_counts_exactly_without_f64(args, dtype):
    got = torch.arange(*args, dtype=dtype, device=TPU).cpu()
    assert_close(got, torch.arange(*args, dtype=dtype), rtol=0, atol=0)


def test_arange_with_steps_inexact_in_float32_counts_in_float32():
    """A step like 0.1 is not exact in f32: the CPU counts in double and
    rounds once; a TPU program counts in f32 (no f64): start + i * step with
    the step rounded to f32 and two roundings, so within two f32 ulps of the
    range's largest magnitude (here the check mode is on: no f64 in it)."""
    for args in [(0, 1, 0.1), (1e7, 1e7 + 3, 0.7), (-2.5, 7.3, 0.3)]:
        got, want = torch.arange(*args, device=TPU).cpu(), torch.arange(*args)
        assert got.dtype == want.dtype == torch.float32 and got.shape == want.shape
        bound = 2 * torch.finfo(torch.float32).eps * max(abs(args[0]), abs(args[1]))
        assert ((got - want).abs() <= bound).all(), (args, got - want)


def test_compiled_graph_constants_are_float32_in_float32_work():
    def f(x, i):
        return torch.tanh(x * 0.1 + 2.5) - x.clamp(min=-0.3) * 1e-3, (i * 0.3) + (i >= 0.7), i + 7

    cf = torch.compile(f, backend="tpu", dynamic=False)
    x, i = F.clone(), I.clone()
    got = cf(x.to(TPU), i.to(TPU))
    for g, w in zip(got, f(x, i)):
        assert g.dtype == w.dtype
        assert_close(g.cpu(), w)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_bernoulli_without_f64(dtype):
    n = 40_000
    for p in (0.0, 0.3, 1.0):
        x = torch.empty(n, dtype=dtype, device=TPU).bernoulli_(p).cpu().double()
        assert set(x.unique().tolist()) <= {0.0, 1.0}
        assert abs(x.mean().item() - p) <= 6 * (p * (1 - p) / n) ** 0.5
    probs = torch.tensor([0.0, 0.25, 1.0]).repeat(n // 4).to(dtype=torch.bfloat16 if dtype == torch.bfloat16
                                                                else torch.float32)
    y = torch.bernoulli(probs.to(TPU)).cpu().double().view(-1, 3).mean(0)
    assert_close(y, torch.tensor([0.0, 0.25, 1.0], dtype=torch.float64), rtol=0, atol=6 * (0.1875 / (n // 4)) ** 0.5)


def _exact_linspace(start, end, steps):
    """start + (end - start) k / (steps - 1), truncated, in exact rationals
    (the first half up from start, the second down from end)."""
    from fractions import Fraction
    import math
    d = Fraction(end - start, steps - 1)
    return [math.trunc(start + d * k if k < steps // 2 else end - d * (steps - 1 - k)) for k in range(steps)]


@pytest.mark.parametrize("start,end,steps,dtype", [
    (0, 1, 5, torch.int64), (-299, 205, 87, torch.int64), (260, -6, 115, torch.int64), (-97, 9, 73, torch.int16),
    (3, 250, 40, torch.uint8), (-2**40, 2**40 + 7, 33, torch.int64), (5, 5, 3, torch.int32)])
def test_linspace_into_integers_is_exact_in_int64(start, end, steps, dtype):
    """No f64: exact integer arithmetic (the CPU's double kernel rounds its
    step, and its contiguous path adds it to a truncated vector base)."""
    got = torch.linspace(start, end, steps, dtype=dtype, device=TPU).cpu()
    assert got.dtype == dtype
    assert got.tolist() == _exact_linspace(start, end, steps)
    # The CPU's scalar kernel (a strided out=) agrees wherever its double rounding does.
    out = torch.empty(2 * steps, dtype=dtype)[::2]
    torch.linspace(start, end, steps, out=out)
    assert (got != out).sum() <= max(1, steps // 20)


def test_linspace_with_no_steps_converts_nothing():
    for dtype in (torch.int64, torch.float32):
        out = torch.empty(4, dtype=dtype, device=TPU)
        torch.linspace(float("inf"), 0, 0, out=out)
        assert out.shape == (0,) and torch.linspace(float("inf"), 0, 0, dtype=dtype).shape == (0,)


def test_linspace_into_integers_overflow_raises():
    with pytest.raises(RuntimeError, match="linspace: end - start times steps - 1 overflows int64"):
        torch.linspace(-2**62, 2**62, 5, dtype=torch.int64, device=TPU).cpu()


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float32, torch.bfloat16])
def test_logspace_integer_powers_are_exact(dtype):
    for args in [(0, 9, 10), (0, 18, 7), (-2, 3, 6)]:
        base = 10.0 if dtype != torch.int32 or args[1] <= 9 else 2.0
        got = torch.logspace(*args, base=base, dtype=dtype, device=TPU).cpu()
        assert_close(got, torch.logspace(*args, base=base, dtype=dtype), rtol=0 if not dtype.is_floating_point else None,
                     atol=0 if not dtype.is_floating_point else None)


def test_zero_dim_float64_cpu_tensor_is_the_users_float64():
    """A 0-d float64 CPU tensor beside float32 tpu tensors is the user's
    float64, as a tpu float64 tensor is: the check lets it through."""
    x = torch.randn(5)
    s = torch.tensor(0.1, dtype=torch.float64)
    assert_close((x.to(TPU) * s).cpu(), x * s)


def test_compiled_graph_with_float64_intermediates_is_the_users_float64():
    """Diffusers' Flux rope computes in float64 inside a float32 graph."""
    def f(x):
        freqs = 1.0 / (10000 ** (torch.arange(0, 4, 2, dtype=torch.float64, device=x.device) / 4))
        return x * freqs.float().sum()

    x = torch.randn(3)
    assert_close(torch.compile(f, backend="tpu", dynamic=False)(x.to(TPU)).cpu(), f(x))
