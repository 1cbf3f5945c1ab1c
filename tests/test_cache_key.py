"""The eager program cache key holds every fact a call's program depends on
(csrc/eager/call_parser.cpp, cache_key_fields.cpp), and validation mode
(TORCH_TPU_VALIDATE_CACHE=1, csrc/eager/cache_validation.cpp) catches a key
that misses one: each narrowed key field below reproduces a wrong answer
without validation and raises with it."""
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from torch.testing import assert_close

import torch_tpu

TPU = "tpu"


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.pop("TORCH_TPU_VALIDATE_CACHE", None)
    e.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=e, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def default_dtype():
    saved = torch.get_default_dtype()
    yield
    torch.set_default_dtype(saved)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16])
def test_cpu_scalar_tensor_on_either_side(dtype):
    t = torch.tensor([1, 2], dtype=dtype)
    c = torch.tensor(10, dtype=dtype)
    for a, b in [(t, c), (c, t), (t, c), (c, t)]:
        da = a.to(TPU) if a.dim() else a
        db = b.to(TPU) if b.dim() else b
        for fn in (torch.sub, torch.div, torch.pow, torch.remainder, torch.atan2, torch.maximum):
            want = fn(a, b)
            got = fn(da, db)
            assert got.dtype == want.dtype, (fn, a.dim(), b.dim())
            assert_close(got.cpu(), want, equal_nan=True)


def test_issue_repro_sub_order():
    t0 = torch.tensor([1.0, 2.0], device=TPU)
    c0 = torch.tensor(10.0)
    assert_close((t0 - c0).cpu(), torch.tensor([-9.0, -8.0]))
    assert_close((c0 - t0).cpu(), torch.tensor([9.0, 8.0]))
    assert_close((t0 - c0).cpu(), torch.tensor([-9.0, -8.0]))


def test_number_vs_0d_tensor_vs_device_tensor():
    """A Python number, a 0-d CPU tensor and a 0-d tpu tensor of the same value
    promote differently (numbers rank lowest); each gets its own program."""
    x = torch.tensor([1, 2, 3], dtype=torch.int32)
    calls = [lambda a: a * 2, lambda a: a * torch.tensor(2), lambda a: a * torch.tensor(2, device=a.device),
             lambda a: a * 2.5, lambda a: a * torch.tensor(2.5, dtype=torch.float64), lambda a: a * True,
             lambda a: a * torch.tensor(True), lambda a: a * (1 + 2j)]
    for _ in range(2):
        for k, f in enumerate(calls):
            want, got = f(x), f(x.to(TPU))
            assert got.dtype == want.dtype, k
            assert_close(got.cpu(), want)


def test_issue_repro_default_dtype(default_dtype):
    y = torch.tensor([1, 2], device=TPU)
    assert (y * 1.5).dtype == torch.float32
    torch.set_default_dtype(torch.float64)
    r = y * 1.5
    assert r.dtype == torch.float64
    assert_close(r.cpu(), torch.tensor([1, 2]) * 1.5)
    torch.set_default_dtype(torch.float32)
    assert (y * 1.5).dtype == torch.float32


def test_memory_format_is_in_the_key():
    x = torch.randn(2, 3, 4, 5)
    d = x.to(TPU)
    for fmt in (torch.channels_last, torch.contiguous_format, torch.preserve_format, torch.channels_last):
        want, got = x.clone(memory_format=fmt), d.clone(memory_format=fmt)
        assert got.stride() == want.stride(), fmt
        assert_close(got.cpu(), want)


def test_conjugate_view_operands_read_as_values():
    a = torch.randn(3, 3, dtype=torch.complex64)
    b = torch.randn(3, 3, dtype=torch.complex64)
    for f in (lambda p, q: p + q.conj(), lambda p, q: p.conj() - q, lambda p, q: torch.mul(p.conj(), q)):
        assert_close(f(a.to(TPU), b.to(TPU)).cpu(), f(a, b))


def test_validation_mode_checks_hits():
    """Under TORCH_TPU_VALIDATE_CACHE=1 every hit is checked (counted)."""
    r = run_python("""
        import torch, torch_tpu
        x = torch.ones(3, device="tpu")
        for _ in range(3):
            y = x + 1
        print(torch_tpu.metrics()["cache_validations"], y.cpu().tolist())
    """, TORCH_TPU_VALIDATE_CACHE="1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "2", r.stdout


REPRO_OPERANDS = """
    import torch
    t0 = torch.tensor([1.0, 2.0], device="tpu"); c0 = torch.tensor(10.0)
    print((t0 - c0).cpu().tolist())
    print((c0 - t0).cpu().tolist())
"""

REPRO_DEFAULT_DTYPE = """
    import torch
    y = torch.tensor([1, 2], device="tpu")
    print((y * 1.1).dtype)  # (1.5 would travel as f32, then f64: a key difference of its own)
    torch.set_default_dtype(torch.float64)
    print((y * 1.1).dtype)
"""


@pytest.mark.parametrize("field,code,wrong,fact", [
    ("operand_sources", REPRO_OPERANDS, "[-9.0, -8.0]\n[-9.0, -8.0]", "sub.Tensor: the cached program was built"),
    ("default_dtype", REPRO_DEFAULT_DTYPE, "torch.float32\ntorch.float32",
     "mul.Tensor: the cached program was built for a different call (the cache key misses a fact it depends on):"
     " output 0 is Float[2] strides [1] there, Double[2] strides [1] in this call"),
])
def test_validation_catches_a_narrowed_key(field, code, wrong, fact):
    # Without the field the cache returns the first call's program: the bug is real...
    r = run_python(code, TORCH_TPU_DEBUG_NARROW_CACHE_KEY=field)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == wrong
    # ...and validation mode turns it into an error naming the op and the fact.
    r = run_python(code, TORCH_TPU_DEBUG_NARROW_CACHE_KEY=field, TORCH_TPU_VALIDATE_CACHE="1")
    assert r.returncode != 0
    assert "torch_tpu cache validation: " + fact in r.stderr, r.stderr[-2000:]
    # With the whole key both calls are right, validated.
    r = run_python(code, TORCH_TPU_VALIDATE_CACHE="1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() != wrong
