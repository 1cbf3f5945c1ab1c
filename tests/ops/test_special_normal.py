"""Normal-distribution special functions (ndtri, erfcx, log_ndtr) and the
float-decomposition ops hypot and frexp against the CPU: float32 (bfloat16
where the CPU has it), ints and bool, empty/0-d shapes, non-contiguous inputs,
special values, backward."""
import math

import pytest
import torch

from harness import check, check_inplace, check_raises_like_cpu, make, to_tpu

SHAPES = [(7,), (3, 5), (0, 4), ()]
NAN, INF = math.nan, math.inf
NORMAL = ["ndtri", "erfcx", "log_ndtr"]


def grad_check(fn, x):
    leaf_c = x.clone().requires_grad_()
    leaf_t = to_tpu(x).requires_grad_()
    fn(leaf_c).sum().backward()
    fn(leaf_t).sum().backward()
    torch.testing.assert_close(leaf_t.grad.cpu(), leaf_c.grad)


@pytest.mark.parametrize("name", NORMAL)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_normal_dtypes(name, dtype, shape):
    low, high = (0, 1) if name == "ndtri" and dtype == torch.float32 else (-12, 12)
    check(getattr(torch.special, name), make(shape, dtype, low=low, high=high))


@pytest.mark.parametrize("name", NORMAL)
def test_normal_half_not_implemented_like_cpu(name):
    check_raises_like_cpu(getattr(torch.special, name), make((3,), torch.bfloat16))


def test_ndtri_values():
    # Both ends, outside [0, 1], the branch points exp(-2) / 1 - exp(-2) and exp(-32), tiny tails.
    # (Subnormal y is not tested: XLA flushes subnormal arithmetic to zero, giving -inf.)
    y = torch.tensor([0.0, 1.0, -0.1, 1.1, NAN, 1.2e-38, 1e-35, 1e-30, 1e-14, 1.2664165e-14, 1.3e-14, 1e-7,
                      0.1353352, 0.1353353, 0.8646647, 0.8646648, 0.5, 0.9999999, 1 - 2 ** -24])
    check(torch.special.ndtri, torch.cat([y, torch.rand(500)]))
    check(torch.special.ndtri, make((4, 6), torch.float32, low=0, high=1, noncontiguous=True).t())


@pytest.mark.parametrize("name", ["erfcx", "log_ndtr"])
def test_erfcx_log_ndtr_values(name):
    # Negative x (erfcx grows like 2 exp(x^2), overflows past ~ -9.4), the -1 split of log_ndtr,
    # 25 (continued fraction), 5e7 (one-term), and inf/NaN.
    x = torch.tensor([-INF, -30.0, -26.8, -9.5, -9.3, -6.2, -6.0, -1.0001, -1.0, -0.9999, -0.0, 0.0, 1e-8, 24.99,
                      25.0, 25.01, 50.0, 1e7, 6e7, 1e30, INF, NAN])
    check(getattr(torch.special, name), torch.cat([x, torch.linspace(-20, 60, 801)]))
    check(getattr(torch.special, name), make((4, 6), torch.float32, low=-5, high=5, noncontiguous=True).t())


@pytest.mark.parametrize("name", NORMAL)
def test_normal_backward(name):
    low, high = (0.01, 0.99) if name == "ndtri" else (-15, 15)
    grad_check(getattr(torch.special, name), make((40,), torch.float32, low=low, high=high))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_hypot(dtype, shape):
    check(torch.hypot, make(shape, dtype, low=-50, high=50), make(shape, dtype, seed=1, low=-5, high=5))


def test_hypot_values_and_views():
    big, tiny = 3e38, 1e-30
    x = torch.tensor([0.0, -0.0, 3.0, big, big, tiny, INF, -INF, NAN, NAN, 1.0, 0.0])
    y = torch.tensor([0.0, 0.0, -4.0, big, 1.0, tiny, NAN, 1.0, INF, 1.0, NAN, -INF])
    check(torch.hypot, x, y)
    a = make((4, 6), torch.float32, low=-9, high=9, noncontiguous=True)
    check(torch.hypot, a.t(), make((6, 4), torch.float32, seed=2))
    check(torch.hypot, a, make((6,), torch.float32, seed=3))  # broadcast
    check_inplace(lambda t, o: t.hypot_(o), make((3, 4), torch.float32), make((3, 4), torch.float32, seed=4))


def test_hypot_int_not_implemented_like_cpu():
    check_raises_like_cpu(torch.hypot, make((3,), torch.int64), make((3,), torch.int64, seed=1))


def test_hypot_backward():
    x, y = make((20,), torch.float32, low=-9, high=9), make((20,), torch.float32, seed=1, low=-9, high=9)
    for k in range(2):
        leaves_c = [x.clone().requires_grad_(), y.clone().requires_grad_()]
        leaves_t = [to_tpu(x).requires_grad_(), to_tpu(y).requires_grad_()]
        torch.hypot(*leaves_c).sum().backward()
        torch.hypot(*leaves_t).sum().backward()
        torch.testing.assert_close(leaves_t[k].grad.cpu(), leaves_c[k].grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_frexp(dtype, shape):
    check(torch.frexp, make(shape, dtype, low=-1e4, high=1e4))


def test_frexp_values_and_views():
    # Signed zeros, subnormals (including the smallest), the largest finite, powers of two, inf, NaN.
    x = torch.tensor([0.0, -0.0, 1e-40, -1e-45, 1e-38, 1.1754942e-38, 1.1754944e-38, 3.4028235e38, 0.5, 1.0,
                      -0.75, 3.0, INF, -INF, NAN])
    m, e = check(torch.frexp, x)
    assert e.dtype == torch.int32
    check(torch.frexp, make((4, 6), torch.float32, low=-3, high=3, noncontiguous=True).t())
    check(torch.frexp, torch.tensor([1e-40, 3.0, -0.0, INF]).bfloat16())


def test_frexp_out_and_int_error_like_cpu():
    x = make((3, 4), torch.float32, low=-9, high=9)
    mc, ec = torch.empty(3, 4), torch.empty(3, 4, dtype=torch.int32)
    mt, et = to_tpu(mc), to_tpu(ec)
    torch.frexp(x, out=(mc, ec))
    torch.frexp(to_tpu(x), out=(mt, et))
    torch.testing.assert_close(mt.cpu(), mc)
    torch.testing.assert_close(et.cpu(), ec)
    check_raises_like_cpu(torch.frexp, make((3,), torch.int64))
