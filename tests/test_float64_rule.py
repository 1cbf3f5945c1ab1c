"""The float64 rule of a TPU platform (eager/float64_rule.h): float64 and
complex128 tpu tensors are refused with an error naming the op; the 64-bit
numbers of float32 and integer work travel as f32. Tested with the stand-in
(the rule on the CPU plugin) and the TPU type check together: every program
compiled here is one a TPU accepts."""
import pytest
import torch
from torch.testing import assert_close

from torch_tpu import _C

TPU = "tpu"


@pytest.fixture(autouse=True)
def tpu_platform():
    saved = (_C._tpu_platform_standin(), _C._tpu_type_check())
    _C._set_tpu_platform_standin(True)
    _C._set_tpu_type_check(True)
    yield
    _C._set_tpu_platform_standin(saved[0])
    _C._set_tpu_type_check(saved[1])


F64_ERROR = "float64 tensors are not supported on TPU, which has no 64-bit floating point; use float32"


def test_float64_tensors_are_refused_naming_the_op():
    with pytest.raises(TypeError, match="empty: " + F64_ERROR):
        torch.empty(3, dtype=torch.float64, device=TPU)
    with pytest.raises(TypeError, match="empty_strided: " + F64_ERROR):
        torch.randn(2, 3, dtype=torch.float64).to(TPU)
    with pytest.raises(TypeError, match="complex128 tensors are not supported on TPU.*complex64"):
        torch.zeros(2, dtype=torch.complex128, device=TPU)
    with pytest.raises(TypeError, match="empty_strided: " + F64_ERROR):
        torch.arange(4, device=TPU).double()


def test_a_float64_view_is_refused_by_the_first_op():
    bits = torch.arange(4, device=TPU)
    with pytest.raises(RuntimeError, match="add.Tensor: " + F64_ERROR):
        (bits.view(torch.float64) + 1).cpu()


def test_integer_work_promoted_to_float64_is_refused():
    a = torch.arange(3, device=TPU)
    # First the float32 twin: the f64 one must not reuse its cached program.
    assert_close((a + torch.tensor(0.5)).cpu(), torch.arange(3) + torch.tensor(0.5))
    with pytest.raises(RuntimeError, match="add.Tensor: " + F64_ERROR):
        (a + torch.tensor(0.5, dtype=torch.float64)).cpu()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int32])
def test_float32_and_integer_work_runs_in_f32(dtype):
    """Python floats, 0-d CPU float64 tensors and the range factories: the
    CPU's values (within float32 rounding where the CPU computes in double)."""
    x = torch.arange(-6, 6).to(dtype)
    s = torch.tensor(0.3, dtype=torch.float64)
    cases = [lambda t: t * 1.5, lambda t: t > 1.1, lambda t: t / 3, lambda t: torch.where(t > 0, t, 0.25)]
    if dtype.is_floating_point:
        cases.append(lambda t: t * s + t.clamp(min=-1.7))
    for fn in cases:
        want, got = fn(x), fn(x.to(TPU)).cpu()
        assert got.dtype == want.dtype
        assert_close(got, want)
    assert_close(torch.linspace(-3, 7, 11, dtype=dtype, device=TPU).cpu(), torch.linspace(-3, 7, 11, dtype=dtype))
    assert_close(torch.arange(0, 3, 0.5, device=TPU).cpu(), torch.arange(0, 3, 0.5))


def test_compiled_graph_with_float64_is_refused_naming_the_node():
    def f(x):
        return x * (torch.arange(0, 4, 2, dtype=torch.float64, device=x.device) / 4).float().sum()

    with pytest.raises(RuntimeError, match="arange.start_step: " + F64_ERROR):
        torch.compile(f, backend="tpu", dynamic=False)(torch.randn(3, device=TPU)).cpu()


def test_compiled_float32_graph_with_python_floats_runs():
    def f(x, i):
        return torch.tanh(x * 0.1 + 2.5), i * 0.3 + (i >= 0.7)

    x, i = torch.randn(4), torch.arange(4)
    got = torch.compile(f, backend="tpu", dynamic=False)(x.to(TPU), i.to(TPU))
    for g, w in zip(got, f(x, i)):
        assert_close(g.cpu(), w)


def test_other_platforms_keep_float64():
    _C._set_tpu_platform_standin(False)
    x = torch.randn(3, dtype=torch.float64)
    assert_close((x.to(TPU) * 0.1).cpu(), x * 0.1, rtol=0, atol=0)


def test_switching_the_rule_does_not_reuse_a_float64_program():
    """The rule is a key field: int64 + a 0-d float64 CPU tensor compiled
    without it (a float64 program) is not reused under it."""
    _C._set_tpu_platform_standin(False)
    a = torch.arange(3, device=TPU)
    s = torch.tensor(0.5, dtype=torch.float64)
    assert (a + s).cpu().dtype == torch.float64
    _C._set_tpu_platform_standin(True)
    with pytest.raises(RuntimeError, match="add.Tensor: " + F64_ERROR):
        (a + s).cpu()


def test_validation_catches_the_rule_missing_from_the_key():
    import os
    import subprocess
    import sys
    import textwrap
    code = """
        import torch
        from torch_tpu import _C
        a = torch.arange(3, device="tpu")
        (a + torch.tensor(0.5, dtype=torch.float64)).cpu()
        _C._set_tpu_platform_standin(True)
        (a + torch.tensor(0.5, dtype=torch.float64)).cpu()
    """
    env = dict(os.environ, TORCH_TPU_DEBUG_NARROW_CACHE_KEY="float64_rule", TORCH_TPU_VALIDATE_CACHE="1")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode != 0
    assert "add.Tensor: the cached program was built for a different call" in r.stderr, r.stderr[-2000:]
