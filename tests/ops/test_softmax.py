"""softmax / log_softmax forward and backward against the CPU."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_inplace, check_raises_like_cpu, make, to_tpu
from tiers import pairwise

FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
FNS = {"softmax": F.softmax, "log_softmax": F.log_softmax}


def grads(fn, x):
    """(output, input gradient) of fn(x) under a fixed upstream gradient."""
    x = x.detach().clone().requires_grad_()
    y = fn(x)
    y.backward(make(y.shape, y.dtype, seed=7).to(y.device))
    return y.detach(), x.grad


def half_tol(dtype, ulps):
    """Tolerance of `ulps` units of the half type's epsilon; default tolerances otherwise."""
    if dtype not in (torch.float16, torch.bfloat16):
        return {}
    eps = torch.finfo(dtype).eps
    return {"atol": ulps * eps, "rtol": ulps * eps}


def check_grad(fn, x):
    expect = grads(fn, x)
    got = grads(fn, to_tpu(x))
    # Half types: the CPU's vectorized exp rounds y to a neighbouring half value
    # now and then (1 ulp), and the backward of that y moves by about 2 ulps.
    tol = half_tol(x.dtype, 2)
    for e, g in zip(expect, got):
        assert g.device.type == "tpu"
        torch.testing.assert_close(g.cpu(), e, equal_nan=True, **tol)


@pytest.mark.parametrize(*pairwise("name", FNS, "dtype", FLOATS,
                                  "shape,dim", [((), 0), ((), -1), ((0,), 0), ((7,), 0), ((3, 5), 1), ((3, 5), 0),
                                                ((2, 3, 4), -2), ((2, 0, 3), 1), ((2, 0, 3), 2)]))
def test_forward(name, dtype, shape, dim):
    # The CPU's last-dim log_softmax rounds the row sum of exp to the half type
    # before the log (up to eps/2 absolute in the result); we keep it in f32.
    tol = half_tol(dtype, 1) if name == "log_softmax" else {}
    check(lambda t: FNS[name](t, dim), make(shape, dtype), **tol)
    # Against the CPU computing in f32: tpu rounds the f32 result once.
    if dtype in (torch.float16, torch.bfloat16):
        expect = FNS[name](make(shape, dtype).float(), dim).to(dtype)
        torch.testing.assert_close(FNS[name](make(shape, dtype).to("tpu"), dim).cpu(), expect, **half_tol(dtype, 1))


@pytest.mark.parametrize(*pairwise("name", FNS, "dtype", FLOATS,
                                  "shape,dim", [((), 0), ((6,), 0), ((3, 5), 1), ((2, 3, 4), 0)]))
def test_backward(name, dtype, shape, dim):
    check_grad(lambda t: FNS[name](t, dim), make(shape, dtype, seed=2))


@pytest.mark.parametrize("name", FNS)
def test_half_to_float(name):
    x = make((4, 6), torch.bfloat16)
    # dtype= casts first (CPU semantics); _softmax's half_to_float computes in f32 directly.
    check(lambda t: FNS[name](t, 1, dtype=torch.float32), x)
    # half_to_float=True is CUDA-only on PyTorch: compare with the CPU in f32.
    op = torch.ops.aten._softmax if name == "softmax" else torch.ops.aten._log_softmax
    x = x.half()
    got = op(x.to("tpu"), 1, True)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got.cpu(), op(x.float(), 1, False))
    back = torch.ops.aten._softmax_backward_data if name == "softmax" else torch.ops.aten._log_softmax_backward_data
    g, y = make((4, 6), torch.float32, seed=3), got.cpu()
    got = back(g.to("tpu"), got, 1, torch.float16)
    assert got.dtype == torch.float16
    torch.testing.assert_close(got.cpu(), back(g, y, 1, torch.float32).half())
    check_grad(lambda t: FNS[name](t, 1, dtype=torch.float64), make((3, 4), torch.float32))


@pytest.mark.parametrize("name", FNS)
def test_stability_and_special_values(name):
    # Large logits overflow exp without the max shift.
    check(lambda t: FNS[name](t, -1), make((3, 8), torch.float32, low=-1000, high=1000))
    inf = float("inf")
    x = torch.tensor([[0.0, -inf, 1.0], [-inf, -inf, -inf], [inf, 0.0, 1.0], [float("nan"), 0.0, 1.0]])
    check(lambda t: FNS[name](t, 1), x)


@pytest.mark.parametrize("name", FNS)
def test_noncontiguous(name):
    check(lambda t: FNS[name](t, 1), make((4, 6), torch.float32, noncontiguous=True))
    check(lambda t: FNS[name](t, 0), make((6, 4), torch.float32).t())
    check_grad(lambda t: FNS[name](t, 0), make((6, 4), torch.float32).t())


def test_out_variants():
    x = make((3, 5), torch.float32)
    check_inplace(lambda out, t: torch.ops.aten._softmax.out(t, 1, False, out=out), torch.empty(3, 5), x)
    check_inplace(lambda out, t: torch.ops.aten._log_softmax.out(t, 0, False, out=out), torch.empty(0), x)
    g, y = make((3, 5), torch.float32, seed=1), torch.softmax(x, 1)
    check(torch.ops.aten._softmax_backward_data, g, y, 1, torch.float32)
    check(torch.ops.aten._log_softmax_backward_data, g, torch.log_softmax(x, 1), 1, torch.float32)


def test_bad_input_raises_like_cpu():
    # The CPU raises IndexError for a bad dim; the meta kernel does not check it
    # and rules can only raise RuntimeError so far.
    with pytest.raises((IndexError, RuntimeError), match="out of range"):
        F.softmax(make((3, 4), torch.float32).to("tpu"), 2)
    check_raises_like_cpu(lambda t: F.log_softmax(t, 1), make((3, 4), torch.float32), dtype=torch.int64)
    # Integers: the CPU raises NotImplementedError (a RuntimeError); rules raise RuntimeError.
    with pytest.raises(RuntimeError, match="not implemented"):
        F.softmax(make((3,), torch.int64).to("tpu"), 0)
