"""Unary float math (exp/log/trig/erf/sigmoid/...), rounding, frac, square,
logit, and the sigmoid/tanh/logit backward ops against the CPU."""
import pytest
import torch
from harness import check, check_inplace, make, to_tpu

F32, F64, BF16, F16 = torch.float32, torch.float64, torch.bfloat16, torch.float16
I32, I64, U8, BOOL = torch.int32, torch.int64, torch.uint8, torch.bool
NAN, INF = float("nan"), float("inf")
SPECIALS = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-30, 80.0, -80.0]

# name -> (fn, input range): ranges keep the values where the function is
# well conditioned; special values (NaN, inf, 0, domain edges) come separately.
MATH = {
    "exp": (torch.exp, (-10, 10)),
    "exp2": (torch.exp2, (-10, 10)),
    "expm1": (torch.expm1, (-3, 3)),
    "log": (torch.log, (0.01, 100)),
    "log2": (torch.log2, (0.01, 100)),
    "log10": (torch.log10, (0.01, 100)),
    "log1p": (torch.log1p, (-0.9, 10)),
    "sqrt": (torch.sqrt, (0, 100)),
    "rsqrt": (torch.rsqrt, (0.01, 100)),
    "sin": (torch.sin, (-6, 6)),
    "cos": (torch.cos, (-6, 6)),
    "tan": (torch.tan, (-1.4, 1.4)),
    "tanh": (torch.tanh, (-5, 5)),
    "sigmoid": (torch.sigmoid, (-10, 10)),
    "asin": (torch.asin, (-0.99, 0.99)),
    "acos": (torch.acos, (-0.99, 0.99)),
    "atan": (torch.atan, (-10, 10)),
    "sinh": (torch.sinh, (-5, 5)),
    "cosh": (torch.cosh, (-5, 5)),
    "erf": (torch.erf, (-3, 3)),
    "erfc": (torch.erfc, (-3, 3)),
    "erfinv": (torch.erfinv, (-0.99, 0.99)),
    "asinh": (torch.asinh, (-10, 10)),
    "acosh": (torch.acosh, (1.01, 100)),
    "atanh": (torch.atanh, (-0.99, 0.99)),
    "lgamma": (torch.lgamma, (0.1, 20)),
    "digamma": (torch.digamma, (0.1, 20)),
    "sinc": (torch.sinc, (-5, 5)),
    "square": (torch.square, (-10, 10)),
    "logit": (torch.logit, (0.01, 0.99)),
    "logit_eps": (lambda x: torch.logit(x, eps=0.1), (-0.5, 1.5)),
}


@pytest.mark.parametrize("name", sorted(MATH))
@pytest.mark.parametrize("dtype", [F32, F64, BF16, F16])
def test_math_floats(name, dtype):
    fn, (lo, hi) = MATH[name]
    check(fn, make((4, 8), dtype, seed=1, low=lo, high=hi))
    check(fn, torch.tensor(SPECIALS, dtype=dtype))


@pytest.mark.parametrize("name", sorted(MATH))
def test_math_shapes_and_layouts(name):
    fn, (lo, hi) = MATH[name]
    check(fn, make((), F32, seed=2, low=lo, high=hi))
    check(fn, make((0,), F32))
    check(fn, make((2, 0, 3), F32))
    x = make((4, 6), F32, seed=3, low=lo, high=hi, noncontiguous=True)
    check(fn, x)
    check(fn, x.t())


@pytest.mark.parametrize("name", sorted(MATH))
@pytest.mark.parametrize("dtype", [I64, BOOL])
def test_math_int_inputs_promote(name, dtype):
    fn, _ = MATH[name]
    low, high = (0, 1) if name.startswith("logit") or name in ("asin", "acos") else (0, 5)
    check(fn, make((3, 4), dtype, seed=4, low=low, high=high))


@pytest.mark.parametrize("name", sorted(n for n in MATH if n != "logit_eps"))
def test_math_inplace_and_out(name):
    fn, (lo, hi) = MATH[name]
    x = make((3, 4), F32, seed=5, low=lo, high=hi)
    method = getattr(torch.Tensor, name + "_")
    check_inplace(lambda t: method(t), x)
    check_inplace(lambda t: method(t[:, 1:3]), x)
    torch_fn = getattr(torch, name)
    check(lambda t: torch_fn(t, out=torch.empty(3, 4, dtype=F32, device=t.device)), x)


ROUNDING = {
    "floor": torch.floor,
    "ceil": torch.ceil,
    "round": torch.round,
    "trunc": torch.trunc,
    "fix": torch.fix,
    "frac": torch.frac,
    "round_2": lambda x: torch.round(x, decimals=2),
    "round_-1": lambda x: torch.round(x, decimals=-1),
}


@pytest.mark.parametrize("name", sorted(ROUNDING))
@pytest.mark.parametrize("dtype", [F32, F64, BF16, F16])
def test_rounding_floats(name, dtype):
    fn = ROUNDING[name]
    # Halves (ties go to even), negative values, and values with many decimals.
    halves = torch.arange(-4, 4.5, 0.5, dtype=dtype)
    check(fn, halves)
    check(fn, make((4, 8), dtype, seed=1, low=-200, high=200))
    check(fn, torch.tensor(SPECIALS, dtype=dtype))
    check(fn, make((4, 6), dtype, seed=2, noncontiguous=True).t())
    check(fn, make((), dtype, seed=3))
    check(fn, make((0, 2), dtype))


@pytest.mark.parametrize("name", sorted(ROUNDING))
@pytest.mark.parametrize("dtype", [I32, I64, U8, BOOL])
def test_rounding_ints(name, dtype):
    fn = ROUNDING[name]
    x = make((3, 4), dtype, seed=4)
    try:
        fn(x)
    except RuntimeError:  # NotImplementedError for this dtype on the CPU
        with pytest.raises(RuntimeError):
            fn(x.to("tpu"))
        return
    check(fn, x)


def test_rounding_inplace():
    x = make((3, 4), F32, seed=5, low=-10, high=10)
    for name in ("floor_", "ceil_", "round_", "trunc_", "frac_"):
        check_inplace(lambda t: getattr(t, name)(), x)
    check_inplace(lambda t: t.round_(decimals=1), x)
    check(lambda t: torch.floor(t, out=torch.empty(3, 4, device=t.device)), x)


def test_bf16_math_rounds_once():
    # bf16 math runs in f32 and rounds once, like the CPU.
    x = make((64,), BF16, seed=6, low=-3, high=3)
    for fn in (torch.exp, torch.sigmoid, torch.tanh, torch.sqrt, torch.sin):
        check(fn, x.abs(), atol=0, rtol=0)


# --- backward ops ----------------------------------------------------------------

GRAD_FNS = {
    "sigmoid": lambda x: x.sigmoid(),
    "tanh": lambda x: x.tanh(),
    "logit": lambda x: x.sigmoid().logit(),
    "logit_eps": lambda x: (x / 4).logit(eps=0.2),
    "exp_log": lambda x: x.exp() + (x.abs() + 0.1).log() + x.expm1() + (x.abs() + 1).log1p(),
    "sqrt_rsqrt": lambda x: (x.abs() + 0.1).sqrt() + (x.abs() + 0.1).rsqrt(),
    "trig": lambda x: x.sin() + x.cos() + (x / 4).tan() + x.atan() + (x / 4).asin() + (x / 4).acos(),
    "hyperbolic": lambda x: (x / 2).sinh() + (x / 2).cosh() + x.erf(),
    "log2_10_exp2": lambda x: (x.abs() + 0.1).log2() + (x.abs() + 0.1).log10() + x.exp2(),
    "square_round": lambda x: x.square() + x.round() + x.frac() + x.floor(),
}


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
@pytest.mark.parametrize("dtype", [F32, BF16])
def test_gradients(name, dtype):
    a = make((3, 4), dtype, seed=7, low=-3, high=3)
    grads = []
    for dev in ("cpu", "tpu"):
        x = a.detach().to(dev).requires_grad_()
        GRAD_FNS[name](x).sum().backward()
        grads.append(x.grad.cpu())
    tol = {}
    if dtype == BF16 and name == "sqrt_rsqrt":
        # rsqrt's backward takes result ** 3, which the CPU evaluates for bf16 as
        # two bf16-rounded multiplies; here pow rounds once, so a few ulps apart.
        tol = {"atol": 0.05, "rtol": 0.05}
    torch.testing.assert_close(grads[1], grads[0], equal_nan=True, **tol)


@pytest.mark.parametrize("dtype", [F32, F64, BF16])
def test_backward_ops_direct(dtype):
    g, y = make((3, 4), dtype, seed=8), make((3, 4), dtype, seed=9, low=-1.5, high=1.5)
    check(torch.ops.aten.sigmoid_backward, g, y)
    check(torch.ops.aten.tanh_backward, g, y)
    check(torch.ops.aten.logit_backward, g, y)
    check(torch.ops.aten.logit_backward, g, y, 0.25)
    check(torch.ops.aten.sigmoid_backward, make((), dtype), make((), dtype, seed=1))
    check(torch.ops.aten.tanh_backward, make((4, 6), dtype, noncontiguous=True), make((6, 4), dtype).t())


@pytest.mark.parametrize("dtype", [torch.float16, BF16, F32], ids=str)
def test_logit_backward_bounds_and_rounding_like_the_cpu(dtype):
    # The CPU's bounds are scalar_t values: hi = 1 - 1e-5 is 1 in float16 and
    # bfloat16, so x = 1 is inside (grad * inf; tpu gave 0), and each
    # operation of grad / (x (1 - x)) rounds to the half type. Bit for bit.
    x = torch.cat([torch.rand(500), torch.tensor([0.0, 1.0, 1e-5, 1 - 1e-5, 0.5, -0.0, 2.0, -1.0, 1e-3])]).to(dtype)
    g = make(x.shape, dtype, seed=3)
    for eps in (None, 1e-5, 1e-3, 0.25):
        expected = torch.ops.aten.logit_backward(g, x, eps)
        got = torch.ops.aten.logit_backward(to_tpu(g), to_tpu(x), eps).cpu()
        torch.testing.assert_close(got, expected, rtol=0, atol=0, equal_nan=True)
        got = torch.ops.aten.logit_backward(to_tpu(g[::2]), to_tpu(x[::2]), eps).cpu()  # strided
        torch.testing.assert_close(got, torch.ops.aten.logit_backward(g[::2], x[::2], eps), rtol=0, atol=0,
                                   equal_nan=True)


@pytest.mark.parametrize("dtype", [F32, BF16, I64])
def test_xlogy_xlog1py(dtype):
    x = make((3, 5), dtype, seed=1, low=0, high=4)
    y = make((3, 5), dtype, seed=2, low=0.1, high=4)
    x.view(-1)[:3] = 0
    if dtype.is_floating_point:
        y.view(-1)[1:5] = torch.tensor([NAN, 0.0, INF, NAN], dtype=dtype)
    check(torch.xlogy, x, y)
    check(torch.special.xlog1py, x, y)
    check(lambda t: torch.xlogy(2.0, t), y)
    check(lambda t: torch.xlogy(t, 3), x)
    check(torch.xlogy, x.t(), y.t())

