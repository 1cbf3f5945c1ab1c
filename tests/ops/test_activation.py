"""Activation functions (forward and backward) against the CPU."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_inplace, check_raises_like_cpu, make, to_tpu
from tiers import pairwise

FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
SHAPES = [(), (0,), (7,), (3, 5), (2, 0, 3)]


def grads(fn, x, *, grad_seed=1):
    """(output, input gradient) of fn(x) under a fixed upstream gradient."""
    x = x.detach().clone().requires_grad_()
    y = fn(x)
    g = make(y.shape, y.dtype, seed=grad_seed).to(y.device)
    y.backward(g)
    return y.detach(), x.grad


def check_grad(fn, x):
    """Forward and input gradient on tpu match the CPU."""
    expect = grads(fn, x)
    got = grads(fn, to_tpu(x))
    for e, g in zip(expect, got):
        assert g.device.type == "tpu"
        torch.testing.assert_close(g.cpu(), e, equal_nan=True)


FORWARDS = {
    "relu": torch.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
    "threshold": lambda x: F.threshold(x, 0.5, -2.0),
    "hardtanh": lambda x: F.hardtanh(x, -2.0, 1.5),
    "relu6": F.relu6,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "elu": F.elu,
    "selu": F.selu,
    "celu": lambda x: F.celu(x, 0.7),
    "softplus": lambda x: F.softplus(x, beta=2.0, threshold=5.0),
    "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish,
    "mish": F.mish,
    "logsigmoid": F.logsigmoid,
    "hardshrink": lambda x: F.hardshrink(x, 0.7),
    "softshrink": lambda x: F.softshrink(x, 0.6),
    "tanhshrink": F.tanhshrink,
    "softsign": F.softsign,
    "rrelu_eval": lambda x: F.rrelu(x, 0.1, 0.4, training=False),
    "prelu_scalar": lambda x: F.prelu(x, torch.tensor([0.25], dtype=x.dtype, device=x.device)),
}


@pytest.mark.parametrize(*pairwise("name", FORWARDS, "dtype", FLOATS, "shape", SHAPES))
def test_forward(name, dtype, shape):
    check(FORWARDS[name], make(shape, dtype))


@pytest.mark.parametrize("name", FORWARDS)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_backward(name, dtype):
    check_grad(FORWARDS[name], make((4, 6), dtype, seed=3))


@pytest.mark.parametrize("name", FORWARDS)
def test_noncontiguous_and_special_values(name):
    check(FORWARDS[name], make((4, 6), torch.float32, noncontiguous=True))
    check(FORWARDS[name], make((6, 4), torch.float32).t())
    special = [float("nan"), 0.0, -0.0, 30.0, -30.0, -1000.0, 1e-8, 1e30, -1e30]
    if name != "gelu":
        # The CPU's vectorized erf turns gelu(+-inf) into NaN; tpu gives the limits.
        special += [float("inf"), -float("inf")]
    check(FORWARDS[name], torch.tensor(special))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.int8], ids=str)
def test_relu_integers(dtype):
    check(torch.relu, make((3, 4), dtype))


def test_elu_backward_from_result():
    # elu with inplace=True saves the result, and its backward uses is_result=True.
    def run(dev):
        x = make((4, 5), torch.float32, seed=2).to(dev).requires_grad_()
        y = x * 1.0
        F.elu(y, alpha=0.5, inplace=True).backward(make((4, 5), torch.float32, seed=3).to(dev))
        return x.grad.cpu()

    torch.testing.assert_close(run("tpu"), run("cpu"))


def test_hardtanh_integers():
    check(lambda t: F.hardtanh(t, -20, 30), make((3, 4), torch.int64))


def test_inplace_and_out():
    x = make((3, 4), torch.float32)
    check_inplace(torch.relu_, x)
    check_inplace(lambda t: F.relu(t, inplace=True), x)
    check_inplace(lambda t: F.silu(t, inplace=True), x)
    check_inplace(lambda t: F.threshold(t, 0.1, 20.0, inplace=True), x)
    check_inplace(lambda t: F.hardtanh(t, -1.0, 2.0, inplace=True), x)
    check_inplace(lambda t: F.leaky_relu(t, 0.3, inplace=True), x)
    check_inplace(lambda t: F.elu(t, inplace=True), x)
    check_inplace(lambda t: F.hardswish(t, inplace=True), x)
    check_inplace(lambda t: F.mish(t, inplace=True), x)
    for fn in (torch._C._nn.gelu, torch._C._nn.silu):
        check_inplace(lambda out, t: fn(t, out=out), torch.empty(3, 4), x)
    check_inplace(lambda out, t: torch.ops.aten.relu.out(t, out=out), torch.empty(0), x)  # resized


def test_backward_ops_directly():
    g, x = make((5, 3), torch.float32, seed=1), make((5, 3), torch.float32, seed=2)
    check(torch.ops.aten.threshold_backward, g, x, 0.5)
    check(torch.ops.aten.gelu_backward, g, x)
    check(lambda a, b: torch.ops.aten.gelu_backward(a, b, approximate="tanh"), g, x)
    check(torch.ops.aten.silu_backward, g, x)
    check(torch.ops.aten.threshold_backward, g.bfloat16(), x.bfloat16(), 0.0)


def test_backward_in_a_model():
    x = make((2, 4), torch.float64)

    def run(dev):
        m = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.GELU(), torch.nn.SiLU()).to(dev)
        xi = x.to(dev).requires_grad_()
        m(xi).sum().backward()
        return xi.grad.cpu()

    torch.testing.assert_close(run("tpu"), run("cpu"))


def test_bad_input_raises_like_cpu():
    x = make((3,), torch.float32)
    check_raises_like_cpu(lambda t: F.gelu(t, approximate="bad"), x)
    check_raises_like_cpu(torch.relu, make((3,), torch.bool))
    check_raises_like_cpu(torch.ops.aten.gelu_backward, make((3,), torch.float32), make((4,), torch.float32))
    # The CPU raises NotImplementedError (a RuntimeError) for integer input;
    # rules can only raise RuntimeError, so check the common base.
    for fn in (F.gelu, F.silu):
        with pytest.raises(RuntimeError):
            fn(make((3,), torch.int64))
        with pytest.raises(RuntimeError, match="not implemented"):
            fn(make((3,), torch.int64).to("tpu"))


# --- glu, prelu with per-channel weights ---


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64], ids=str)
@pytest.mark.parametrize("shape,dim", [((4, 6), -1), ((4, 6), 0), ((2, 4, 3), 1), ((0, 4), 1)], ids=str)
def test_glu(dtype, shape, dim):
    x = make(shape, dtype)
    check(lambda t: F.glu(t, dim), x)
    if x.numel():
        check_grad(lambda t: F.glu(t, dim), x)
    check(lambda t: F.glu(t, dim), make(shape, torch.float32, noncontiguous=True))


def test_glu_bad_input():
    check_raises_like_cpu(lambda t: F.glu(t, 0), make((3, 4), torch.float32))
    for dtype in (torch.int64, torch.int32, torch.bool, torch.complex64):
        check_raises_like_cpu(lambda t: F.glu(t, 1), torch.ones(3, 4, dtype=dtype))
        # integers: RuntimeError (its sigmoid step's cast), not NotImplementedError
        check_raises_like_cpu(lambda g, t: torch.ops.aten.glu_backward(g, t, 1), torch.ones(3, 2, dtype=dtype),
                              torch.ones(3, 4, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64], ids=str)
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 5), (2, 4, 3, 3), (4,)], ids=str)
def test_prelu_channels(dtype, shape):
    c = shape[1] if len(shape) > 1 else 1
    w = make((c,), dtype, low=-0.5, high=0.5, seed=7)
    x = make(shape, dtype, seed=3)

    def run(dev):
        xi = (to_tpu(x) if dev == "tpu" else x).detach().requires_grad_()
        wi = (to_tpu(w) if dev == "tpu" else w).detach().requires_grad_()
        y = F.prelu(xi, wi)
        y.backward(make(y.shape, dtype, seed=1).to(dev))
        return [t.detach().cpu() for t in (y, xi.grad, wi.grad)]

    # The weight's grad is a sum of half products: rounded once here, per step on the CPU.
    tol = {"atol": 4e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {}
    for g, e in zip(run("tpu"), run("cpu")):
        torch.testing.assert_close(g, e, **tol)


def test_new_backward_ops_directly():
    g, x = make((5, 3), torch.float32, seed=1), make((5, 3), torch.float32, seed=2)
    check(torch.ops.aten.hardshrink_backward, g, x, 0.5)
    check(torch.ops.aten.softshrink_backward, g, x, 0.5)
    check(lambda a, b: torch.ops.aten.glu_backward(a, b, 1), make((5, 2), torch.float32), make((5, 4), torch.float32))
    noise = torch.ones(5, 3)
    check(lambda a, b, n: torch.ops.aten.rrelu_with_noise_backward(a, b, n, 0.1, 0.3, False, False), g, x, noise)
    check(lambda a, b, n: torch.ops.aten.rrelu_with_noise_backward(a, b, n, 0.1, 0.3, True, False), g, x,
          make((5, 3), torch.float32, low=0.1, high=0.3, seed=4))
    check_inplace(lambda t: F.rrelu(t, training=False, inplace=True), x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64], ids=str)
def test_rrelu_training_draws_slopes(dtype):
    # Training: each x <= 0 gets a slope r ~ U(lower, upper), kept in noise;
    # x > 0 passes with noise 1; the gradient is the noise (as on the CPU).
    torch.manual_seed(0)
    x = torch.linspace(-3, 3, 4001, dtype=dtype).to("tpu").requires_grad_()
    noise = torch.empty_like(x.detach())
    y = torch.ops.aten.rrelu_with_noise(x, noise, 0.1, 0.3, True)
    y.sum().backward()
    xc, yc, nc = x.detach().cpu(), y.detach().cpu(), noise.cpu()
    neg = xc <= 0
    assert bool(((nc[neg] >= 0.1) & (nc[neg] <= 0.3)).all()) and bool((nc[~neg] == 1).all())
    torch.testing.assert_close(yc, xc * nc)
    torch.testing.assert_close(x.grad.cpu(), nc)
    assert abs(float(nc[neg].float().mean()) - 0.2) < 0.01  # the slopes spread over the interval
    y2 = torch.nn.functional.rrelu(x.detach(), training=True)  # a second draw differs
    assert not torch.equal(y2.cpu()[neg], yc[neg])


EDGES = [float("inf"), 65504.0, 65536.0, 1.0, 0.5, 6e-8, 1e-7, 0.0, -0.0, -1.0, -65504.0, float("-inf"), float("nan")]


def _same(fn, *args):
    want = fn(*args)
    got = fn(*[a.to("tpu") for a in args])
    torch.testing.assert_close(got.cpu(), want, equal_nan=True, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("threshold", [65520.0, 65535.0, 1e20, 3e38, 3e-8, 6e-8, -1e20], ids=str)
def test_threshold_past_the_half_types_range_compares_in_float(dtype, threshold):
    # the CPU compares half types in float: a threshold past float16's range
    # (or between two bfloat16 values) must not round first (tpu rounded
    # 1e20 to inf in float16: threshold_backward(g, inf, 1e20) was 0, the CPU g)
    x = torch.tensor(EDGES, dtype=dtype)
    g = torch.linspace(1, 2, len(EDGES)).to(dtype)
    _same(lambda x: F.threshold(x, threshold, 7.0), x)
    _same(lambda g, x: torch.ops.aten.threshold_backward(g, x, threshold), g, x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("lambd", [65520.0, 65535.0, 3e-8, 6e-8, 0.5], ids=str)
def test_shrink_lambd_rounds_to_the_dtype_like_the_cpu(dtype, lambd):
    # hardshrink and shrink_backward take lambd in the tensor's dtype
    # (bfloat16 65520 is 65536, which the band then holds)
    if dtype == torch.float16 and lambd > 65504:
        return  # out of float16's range: test_bad_input's number checks
    x = torch.tensor(EDGES, dtype=dtype)
    g = torch.linspace(1, 2, len(EDGES)).to(dtype)
    _same(lambda x: F.hardshrink(x, lambd), x)
    _same(lambda g, x: torch.ops.aten.hardshrink_backward(g, x, lambd), g, x)
    _same(lambda g, x: torch.ops.aten.softshrink_backward(g, x, lambd), g, x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("alpha,scale,input_scale", [(float("inf"), 1.0, 1.0), (float("nan"), 1.0, 1.0),
                                                     (1.0, 1.0, float("inf")), (1.0, 1.0, float("nan")),
                                                     (-2.0, 0.5, 3.0)], ids=str)
def test_elu_at_zero_takes_the_positive_side(dtype, alpha, scale, input_scale):
    # ±0 is scale * x on the CPU: with an infinite or NaN alpha the negative
    # side's expm1(0) * alpha was NaN on tpu
    x = torch.tensor(EDGES, dtype=dtype)
    _same(lambda x: torch.ops.aten.elu(x, alpha, scale, input_scale), x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("lower,upper", [(3e38, 3.3e38), (0.125, 1 / 3), (-1.0, 2.0)], ids=str)
def test_rrelu_eval_slope_cannot_overflow(dtype, lower, upper):
    # the CPU takes (lower + upper) / 2 in double; in float32 3e38 + 3.3e38 was inf
    x = torch.tensor(EDGES, dtype=dtype)
    g = torch.linspace(1, 2, len(EDGES)).to(dtype)
    _same(lambda x: torch.ops.aten.rrelu_with_noise(x, torch.zeros_like(x), lower, upper, False), x)
    _same(lambda g, x: torch.ops.aten.rrelu_with_noise_backward(g, x, torch.zeros_like(x), lower, upper, False,
                                                                False), g, x)
