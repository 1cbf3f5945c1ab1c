"""Binary arithmetic (add/sub/mul/div and rounding modes, remainder, fmod, pow,
atan2, maximum/minimum, fmax/fmin, copysign, heaviside, logaddexp(2), nextafter), their Scalar/rsub forms, neg/abs/sign/reciprocal and
the fused lerp/addcmul/addcdiv, against the CPU."""
import pytest
import torch
from harness import check, check_inplace, check_raises_like_cpu, make, to_tpu
from tiers import pairwise

F32, F64, BF16, F16 = torch.float32, torch.float64, torch.bfloat16, torch.float16
I8, I32, I64, U8, BOOL = torch.int8, torch.int32, torch.int64, torch.uint8, torch.bool
NUM_DTYPES = [F32, F64, BF16, I32, I64, U8]
NAN, INF = float("nan"), float("inf")

BINARY = {
    "add": lambda a, b: torch.add(a, b, alpha=2),
    "sub": lambda a, b: torch.sub(a, b),
    "mul": torch.mul,
    "div": torch.div,
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "floor_divide": torch.floor_divide,
    "remainder": torch.remainder,
    "fmod": torch.fmod,
    "pow": torch.pow,
    "atan2": torch.atan2,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "fmax": torch.fmax,
    "fmin": torch.fmin,
    "copysign": torch.copysign,
    "heaviside": torch.heaviside,
    "logaddexp": torch.logaddexp,
    "logaddexp2": torch.logaddexp2,
    "nextafter": torch.nextafter,
}
DIVIDES = {"div_trunc", "div_floor", "floor_divide", "remainder", "fmod"}


def operands(name, dtype, shape_a, shape_b, noncontiguous=False):
    a = make(shape_a, dtype, seed=1, noncontiguous=noncontiguous)
    b = make(shape_b, dtype, seed=2, noncontiguous=noncontiguous)
    if not dtype.is_floating_point and name in DIVIDES:  # integer x / 0 raises; tested separately
        b = torch.where(b == 0, torch.ones_like(b), b)
    if name == "pow":
        b = make(shape_b, dtype, seed=2, low=0, high=3, noncontiguous=noncontiguous)
        if dtype.is_floating_point:
            a = a.abs()  # negative ** fractional is NaN on both; keep the values informative
    return a, b


def with_specials(t):
    """Float tensor with NaN, +-inf, +-0 and small values written over its first elements."""
    t = t.clone()
    vals = torch.tensor([NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5], dtype=t.dtype)
    flat = t.view(-1)
    n = min(flat.numel(), vals.numel())
    flat[:n] = vals[:n]
    return t


def check_or_raises(fn, *args):
    """CPU result if the CPU computes it; else the tpu must raise too (a CPU
    NotImplementedError for an unsupported dtype is a RuntimeError on tpu)."""
    try:
        fn(*args)
    except NotImplementedError:
        with pytest.raises(RuntimeError):
            fn(*to_tpu(list(args)))
            torch.tpu.synchronize()
        return
    except RuntimeError:
        check_raises_like_cpu(fn, *args)
        return
    check(fn, *args)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", NUM_DTYPES + [BOOL])
def test_binary_dtypes(name, dtype):
    a, b = operands(name, dtype, (3, 5), (3, 5))
    check_or_raises(BINARY[name], a, b)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((), ()), ((2, 0, 3), (3,)), ((3, 1), (1, 4)), ((), (2, 3))])
def test_binary_shapes(name, shapes):
    a, b = operands(name, F32, *shapes)
    check(BINARY[name], a, b)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_noncontiguous(name):
    a, b = operands(name, F32, (4, 6), (4, 6), noncontiguous=True)
    check(BINARY[name], a, b)
    check(BINARY[name], a.t(), b.t())


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", [F32, BF16])
def test_binary_special_values(name, dtype):
    vals = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0]
    a = torch.tensor(vals, dtype=dtype).repeat_interleave(len(vals))
    b = torch.tensor(vals, dtype=dtype).repeat(len(vals))
    check(BINARY[name], a, b)


@pytest.mark.parametrize("name", ["div_trunc", "div_floor", "remainder", "fmod"])
@pytest.mark.parametrize("dtype", [F32, I32, I64, I8])
def test_rounding_division_signs(name, dtype):
    # Every sign combination, exact multiples and not.
    a = torch.tensor([7, -7, 7, -7, 6, -6, 6, -6, 0, 1], dtype=dtype)
    b = torch.tensor([2, 2, -2, -2, 3, 3, -3, -3, 5, -5], dtype=dtype)
    check(BINARY[name], a, b)
    check(BINARY[name], a.to(F32) * 1.25, b.to(F32) * 0.5)


@pytest.mark.parametrize("dtypes", [(I32, F32), (BF16, F32), (U8, I8), (BOOL, I64), (F16, BF16)])
@pytest.mark.parametrize("name", ["add", "mul", "div", "maximum", "remainder"])
def test_binary_mixed_dtypes(dtypes, name):
    a = make((3, 4), dtypes[0], seed=1, low=0, high=3)
    b = make((3, 4), dtypes[1], seed=2, low=1, high=3)
    check_or_raises(BINARY[name], a, b)


SCALAR_OPS = {
    "add": lambda x, s: x + s,
    "add_alpha": lambda x, s: torch.add(x, s, alpha=3),
    "sub": lambda x, s: x - s,
    "rsub": lambda x, s: s - x,
    "rsub_alpha": lambda x, s: torch.rsub(x, s, alpha=2),
    "mul": lambda x, s: x * s,
    "div": lambda x, s: x / s,
    "rdiv": lambda x, s: s / x,
    "floordiv": lambda x, s: x // s,
    "div_trunc": lambda x, s: torch.div(x, s, rounding_mode="trunc"),
    "mod": lambda x, s: x % s,
    "rmod": lambda x, s: s % x,
    "fmod": lambda x, s: torch.fmod(x, s),
    "pow": lambda x, s: x ** s,
    "rpow": lambda x, s: s ** x,
}


@pytest.mark.parametrize(*pairwise("name", sorted(SCALAR_OPS), "dtype", [F32, BF16, I32], "scalar", [2, -2.5]))
def test_python_scalar(name, dtype, scalar):
    x = make((2, 3), dtype, seed=3, low=1, high=4)
    if name in ("rdiv", "rmod") and not dtype.is_floating_point:
        x = x.clamp(min=1)
    check_or_raises(SCALAR_OPS[name], x, scalar)


@pytest.mark.parametrize("dtype", [F32, I32, U8, BOOL])
def test_bool_scalar(dtype):
    x = make((2, 3), dtype, seed=3, low=1, high=4)
    for name in ("add", "mul", "sub", "rsub", "div", "pow"):
        if name == "pow" and dtype == BOOL:
            # The meta kernel types bool ** bool as int64 (the CPU keeps bool): values only.
            check(SCALAR_OPS[name], x, True, exact_dtype=False)
            check(SCALAR_OPS[name], x, False, exact_dtype=False)
            continue
        check_or_raises(SCALAR_OPS[name], x, True)


@pytest.mark.parametrize("dtype", [BF16, F16])
def test_half_dtype_scalars_round_like_cpu(dtype):
    # mul/div read a scalar operand straight into f32; add/sub/pow round it to
    # the tensor's dtype first; lerp/addcmul read their Scalar args in f32.
    x = make((512,), dtype, seed=30, low=-8, high=8)
    y = make((512,), dtype, seed=31)
    for fn in (lambda a: a * 0.3, lambda a: a / 0.3, lambda a: a + 0.3, lambda a: a - 0.3,
               lambda a: torch.div(a, 0.3, rounding_mode="floor"), lambda a: a.abs() ** 0.3,
               lambda a: a * torch.tensor(0.3), lambda a: torch.lerp(a, a * 2, 0.3),
               lambda a: torch.addcmul(a, a, a, value=0.3)):
        check(fn, x, atol=0, rtol=0)
    check(lambda a, b: torch.add(a, b, alpha=0.3), x, y, atol=0, rtol=0)


@pytest.mark.parametrize("name", sorted(SCALAR_OPS))
def test_scalar_as_cpu_zero_dim_tensor(name):
    x = make((3, 4), F32, seed=4, low=0.5, high=3)
    check(SCALAR_OPS[name], x, torch.tensor(1.75))
    check(SCALAR_OPS[name], x, torch.tensor(2, dtype=torch.int64))


def test_scalar_values_reuse_program():
    # Python scalars are runtime operands: new values give new, correct results.
    x = make((5,), F32, seed=5)
    for s in (0.5, -1.25, 3.0):
        check(lambda a: a * s + s, x)
        check(lambda a: torch.pow(a.abs(), s), x)


@pytest.mark.parametrize("dtype", [F32, BF16, I32])
def test_inplace_and_out(dtype):
    a = make((3, 4), dtype, seed=6, low=1, high=5)
    b = make((3, 4), dtype, seed=7, low=1, high=5)
    check_inplace(lambda t, o: t.add_(o, alpha=2), a, b)
    check_inplace(lambda t, o: t.sub_(o), a, b)
    check_inplace(lambda t, o: t.mul_(o), a, b)
    check_inplace(lambda t, o: t.mul_(3), a, b)
    check_inplace(lambda t, o: t.div_(o, rounding_mode="floor"), a, b)
    check_inplace(lambda t, o: t.remainder_(o), a, b)
    check_inplace(lambda t, o: t.pow_(2), a, b)
    check_inplace(lambda t, o: t.neg_(), a, b)
    check_inplace(lambda t, o: t.maximum(o), a, b)
    if dtype.is_floating_point:
        check_inplace(lambda t, o: t.div_(o), a, b)
        check_inplace(lambda t, o: t.atan2_(o), a, b)
        check_inplace(lambda t, o: t.reciprocal_(), a, b)
    for fn in (torch.add, torch.mul, torch.sub, torch.maximum, torch.fmod):
        check(lambda x, y: fn(x, y, out=torch.empty(3, 4, dtype=dtype, device=x.device)), a, b)


def test_inplace_into_views():
    base = make((4, 6), F32, seed=8)
    check_inplace(lambda t: t[:, 1::2].mul_(2), base)
    check_inplace(lambda t: t.t().add_(torch.ones(6, 1, device=t.device)), base)
    check_inplace(lambda t: t[1].div_(t[2]), base)


def test_out_dtype_differs_from_result():
    a, b = make((3,), I32, seed=9), make((3,), I32, seed=10, low=1, high=4)
    check(lambda x, y: torch.add(x, y, out=torch.empty(3, dtype=F32, device=x.device)), a, b)
    check(lambda x, y: torch.div(x, y, out=torch.empty(3, dtype=F64, device=x.device)), a, b)


UNARY_ARITH = {"neg": torch.neg, "abs": torch.abs, "sign": torch.sign, "sgn": torch.sgn, "reciprocal": torch.reciprocal}


@pytest.mark.parametrize("name", sorted(UNARY_ARITH))
@pytest.mark.parametrize("dtype", NUM_DTYPES + [BOOL])
def test_unary_arith(name, dtype):
    x = make((3, 4), dtype, seed=11)
    if dtype.is_floating_point:
        x = with_specials(x)
    check_or_raises(UNARY_ARITH[name], x)


@pytest.mark.parametrize("name", sorted(UNARY_ARITH))
def test_unary_arith_shapes(name):
    for shape in [(), (0,), (2, 0, 3)]:
        check(UNARY_ARITH[name], make(shape, F32, seed=12))
    x = make((4, 5), F32, seed=12, noncontiguous=True)
    check(UNARY_ARITH[name], x)
    check(UNARY_ARITH[name], x.t())


def test_errors():
    t = torch.tensor([True, False])
    check_raises_like_cpu(torch.sub, t, t)
    check_raises_like_cpu(torch.neg, t)
    check_raises_like_cpu(torch.add, make((3,), F32), make((4,), F32))
    # (A bad rounding_mode raises ValueError from the meta kernel, RuntimeError on CPU: not tested.)
    check_raises_like_cpu(lambda a: a.add_(1.5), make((3,), I32))  # result can't be cast in place


@pytest.mark.parametrize("fn", [
    lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    lambda a, b: torch.div(a, b, rounding_mode="floor"),
    torch.remainder, torch.fmod,
    lambda a, b: a // 0,
])
def test_integer_division_by_zero(fn):
    exc = check_raises_like_cpu(fn, torch.tensor([5, -5, 3]), torch.tensor([1, 0, 2]))
    assert "ZeroDivisionError" in str(exc)


def test_integer_negative_scalar_power():
    check_raises_like_cpu(lambda a: a ** -1, torch.tensor([2, 3]))
    # Tensor exponents may be negative: 0 unless the base is +-1.
    check(torch.pow, torch.tensor([2, -1, 1, 0, 3, -1]), torch.tensor([-1, -3, -2, 2, -2, 2]))


# --- lerp, addcmul, addcdiv ------------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, F64, BF16, F16])
@pytest.mark.parametrize("weight", [0.25, 0.75, 1.0, -0.5, 2.0])
def test_lerp_scalar(dtype, weight):
    a, b = make((3, 4), dtype, seed=13), make((3, 4), dtype, seed=14)
    check(torch.lerp, a, b, weight)
    check_inplace(lambda t, e: t.lerp_(e, weight), a, b)


@pytest.mark.parametrize("dtype", [F32, BF16])
def test_lerp_tensor(dtype):
    a, b = make((3, 4), dtype, seed=15), make((4,), dtype, seed=16)
    w = make((3, 1), dtype, seed=17, low=-1, high=2)
    check(torch.lerp, a, b, w)
    check(torch.lerp, make((), dtype), make((), dtype, seed=1), make((), dtype, seed=2))
    check(torch.lerp, a.t(), b.unsqueeze(1).expand(4, 3), 0.3)


@pytest.mark.parametrize("op", [torch.addcmul, torch.addcdiv])
@pytest.mark.parametrize("dtype", [F32, F64, BF16, F16])
@pytest.mark.parametrize("value", [1, 0.5, -2.0])
def test_addcmul_addcdiv(op, dtype, value):
    s, t1, t2 = make((3, 4), dtype, seed=18), make((3, 4), dtype, seed=19), make((4,), dtype, seed=20)
    check(op, s, t1, t2, value=value)
    check_inplace(lambda x, a, b: getattr(x, op.__name__ + "_")(a, b, value=value), s, t1, t2)


def test_addcmul_addcdiv_ints_and_shapes():
    a, b, c = (make((2, 3), I64, seed=k) for k in (21, 22, 23))
    check(torch.addcmul, a, b, c, value=3)
    check_raises_like_cpu(torch.addcdiv, a, b, c)
    check(torch.addcmul, make((0,), F32), make((0,), F32), make((0,), F32))
    check(torch.addcdiv, make((), F32), make((2, 2), F32, noncontiguous=True), make((2, 1), F32))


# --- autograd --------------------------------------------------------------------

GRAD_FNS = {
    "add_sub": lambda a, b: (a + 2 * b - b / 3).sum(),
    "mul_div": lambda a, b: (a * b / (b.abs() + 1)).sum(),
    "pow": lambda a, b: (a.abs() ** b + a ** 3 + 2 ** a).sum(),
    "abs": lambda a, b: a.abs().sum(),
    "atan2": lambda a, b: torch.atan2(a, b).sum(),
    "max_min": lambda a, b: (torch.maximum(a, b) + torch.minimum(a, 2 * b)).sum(),
    "remainder": lambda a, b: (a % 1.5 + torch.fmod(a, 2.0)).sum(),
    "reciprocal": lambda a, b: (a.abs() + 0.5).reciprocal().sum(),
    "sgn": lambda a, b: (torch.sgn(a) * b).sum() + torch.sign(b).sum(),  # zero gradients (_efficientzerotensor)
    "lerp": lambda a, b: torch.lerp(a, b, 0.3).sum() + torch.lerp(a, b, b.sigmoid()).sum(),
    "addc": lambda a, b: (torch.addcmul(a, a, b, value=0.5) + torch.addcdiv(a, a, b.abs() + 1, value=0.5)).sum(),
}


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
def test_gradients(name):
    a, b = make((3, 4), F32, seed=24), make((3, 4), F32, seed=25)
    grads = []
    for dev in ("cpu", "tpu"):
        x = a.detach().to(dev).requires_grad_()
        y = b.detach().to(dev).requires_grad_()
        GRAD_FNS[name](x, y).backward()
        grads.append((x.grad.cpu(), y.grad.cpu() if y.grad is not None else None))
    torch.testing.assert_close(grads[1], grads[0], equal_nan=True)


# --- dtypes the CPU kernels don't implement: the same NotImplementedError ----------

_B = torch.tensor([True, False, True])
_I = torch.tensor([1, -2, 3])
_F = torch.tensor([1.5, -2.0, 3.0])

UNIMPLEMENTED_DTYPE_CALLS = {
    "div_trunc(bool, bool)": lambda: torch.div(_B, _B, rounding_mode="trunc"),
    "div_trunc(bool, True)": lambda: torch.div(_B, True, rounding_mode="trunc"),
    "remainder(True, bool)": lambda: torch.remainder(True, _B),
    "remainder(bool, bool)": lambda: torch.remainder(_B, _B),
    "fmod(bool, True)": lambda: torch.fmod(_B, True),
    "fmod(bool, bool)": lambda: torch.fmod(_B, _B),
    "pow(True, bool)": lambda: torch.pow(True, _B),
    "pow(bool, bool)": lambda: torch.pow(_B, _B),
    "pow(bool, cpu0d bool)": lambda: torch.pow(_B, torch.tensor(True)),
    "logaddexp(int, int)": lambda: torch.logaddexp(_I, _I),
    "logaddexp(int, cpu0d int)": lambda: torch.logaddexp(_I, torch.tensor(2)),
    "logaddexp2(int, int)": lambda: torch.logaddexp2(_I, _I),
    "nextafter(int, int)": lambda: torch.nextafter(_I, _I),
    "nextafter(bool, bool)": lambda: torch.nextafter(_B, _B),
    "lerp(int, int, 0.25)": lambda: torch.lerp(_I, _I, 0.25),
    "lerp(int, cpu0d int, 0.25)": lambda: torch.lerp(_I, torch.tensor(2), 0.25),
    "lerp(bool, bool, 0.25)": lambda: torch.lerp(_B, _B, 0.25),
    "lerp(int, int, int)": lambda: torch.lerp(_I, _I, _I),
    "ldexp(float, cpu0d bool)": lambda: torch.ldexp(_F, torch.tensor(True)),
    "ldexp(float, bool)": lambda: torch.ldexp(_F, _B),
    "clamp_min(bool, True)": lambda: torch.clamp_min(_B, True),
    "clamp_max(bool, True)": lambda: torch.clamp_max(_B, True),
    "clamp(bool, True, True)": lambda: torch.clamp(_B, True, True),
    "clamp(bool, bool, bool)": lambda: torch.clamp(_B, _B, _B),
    "abs(bool)": lambda: torch.abs(_B),
    "frac(int)": lambda: torch.frac(_I),
    "floor(bool)": lambda: torch.floor(_B),
    "hypot(int, int)": lambda: torch.hypot(_I, _I),
}


def _on_tpu(fn):
    """Runs fn with the module's tensors (not 0-d CPU ones) moved to tpu."""
    global _B, _I, _F
    saved = _B, _I, _F
    _B, _I, _F = (t.to("tpu") for t in saved)
    try:
        return fn()
    finally:
        _B, _I, _F = saved


@pytest.mark.parametrize("name", sorted(UNIMPLEMENTED_DTYPE_CALLS))
def test_unimplemented_dtype_raises_like_cpu(name):
    fn = UNIMPLEMENTED_DTYPE_CALLS[name]
    with pytest.raises(NotImplementedError) as cpu:
        fn()
    with pytest.raises(NotImplementedError) as tpu:
        _on_tpu(fn)
        torch.tpu.synchronize()
    assert str(cpu.value) in str(tpu.value)  # same kernel and PyTorch dtype name ('Bool', not 'i1')


SUPPORTED_NEIGHBOURS = {  # next to the calls above, the ones the CPU does run
    "clamp_min(bool, bool)": lambda: torch.clamp_min(_B, _B),
    "clamp(bool, bool)": lambda: torch.clamp(_B, _B),
    "clamp_min(bool, 1)": lambda: torch.clamp_min(_B, 1),
    "ldexp(bool, bool)": lambda: torch.ldexp(_B, _B),
    "ldexp(float, int)": lambda: torch.ldexp(_F, _I),
    "ldexp(half, int)": lambda: torch.ldexp(_F.half(), _I),
    "ldexp(int, int)": lambda: torch.ldexp(_I, _I),
    "ldexp(float, float)": lambda: torch.ldexp(_F, _F),
    "ldexp(float, cpu0d int)": lambda: torch.ldexp(_F, torch.tensor(3)),
    "ldexp(float, large int)": lambda: torch.ldexp(_F * 1e-30, _I.new_tensor([200, -140, 100])),
    "pow(bool, 1)": lambda: torch.pow(_B, 1),
    "pow(2, bool)": lambda: torch.pow(2, _B),
    "lerp(float, float, 0.25)": lambda: torch.lerp(_F, _F * 2, 0.25),
}


@pytest.mark.parametrize("name", sorted(SUPPORTED_NEIGHBOURS))
def test_supported_neighbours_match_cpu(name):
    fn = SUPPORTED_NEIGHBOURS[name]
    expect = fn()
    got = _on_tpu(fn).cpu()
    assert got.dtype == expect.dtype
    torch.testing.assert_close(got, expect)


# gcd / lcm: integers only (Euclid on absolute values; zeros, negatives, mixed widths).
@pytest.mark.parametrize("fn", [torch.gcd, torch.lcm], ids=["gcd", "lcm"])
@pytest.mark.parametrize("dtype", [I8, torch.int16, I32, I64, U8])
def test_gcd_lcm_dtypes(fn, dtype):
    a = make((4, 6), dtype, seed=1, low=-30, high=30)
    b = make((4, 6), dtype, seed=2, low=-30, high=30)
    a.view(-1)[:3] = 0  # gcd(0, x) = |x|, lcm(0, x) = 0
    b.view(-1)[1:4] = 0
    check(fn, a, b)


@pytest.mark.parametrize("fn", [torch.gcd, torch.lcm], ids=["gcd", "lcm"])
@pytest.mark.parametrize("shapes", [((), ()), ((2, 0, 3), (3,)), ((3, 1), (1, 4)), ((), (2, 3))])
def test_gcd_lcm_shapes_views_and_variants(fn, shapes):
    a = make(shapes[0], I64, seed=3, low=-1000, high=1000)
    b = make(shapes[1], I64, seed=4, low=-1000, high=1000)
    check(fn, a, b)
    check(fn, make((4, 6), I32, seed=5, noncontiguous=True), make((4, 6), I32, seed=6, noncontiguous=True))
    check(fn, make((4, 6), I64, seed=7).t(), make((6, 4), I64, seed=8))
    inplace = getattr(torch.Tensor, fn.__name__ + "_")
    check_inplace(inplace, make((3, 4), I64, seed=9), make((3, 4), I64, seed=10))
    check(lambda x, y: fn(x, y, out=torch.empty_like(x)), make((3, 4), I64, seed=11), make((3, 4), I64, seed=12))


@pytest.mark.parametrize("fn", [torch.gcd, torch.lcm], ids=["gcd", "lcm"])
@pytest.mark.parametrize("dtype", [F32, BOOL])
def test_gcd_lcm_refuse_what_the_cpu_refuses(fn, dtype):
    check_or_raises(fn, make((3,), dtype, seed=1), make((3,), dtype, seed=2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("exponent", [3, -2, 0.5, -0.5, -1, 2, 1.7, 3.0])
def test_pow_scalar_exponent_shortcuts(dtype, exponent):
    """The CPU's scalar-exponent shortcuts: bfloat16 x**3 is (x*x)*x rounded
    twice, x**-2 is 1/(x*x); 0.5/-0.5/-1 run sqrt, 1/sqrt and reciprocal (so
    -0 and -inf behave as those do)."""
    g = torch.Generator().manual_seed(7)
    x = (torch.rand(4000, generator=g, dtype=torch.float64) * 8 + 0.01).to(dtype)
    x[:6] = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), -2.5], dtype=dtype)
    # x**2 is x*x on the CPU (not pow, which is off by an ulp on XLA's CPU backend); half takes the plain pow.
    exact = (dtype == torch.bfloat16 and exponent in (3, -2)) or (exponent == 2 and dtype != torch.float16)
    rtol = 0 if exact else None
    check(lambda t: torch.pow(t, exponent), x, **({} if rtol is None else dict(atol=0, rtol=0)))
    check(lambda t: torch.pow(t, exponent), x[::3].view(-1, 2))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16, torch.float16], ids=str)
def test_frexp_every_float_dtype(dtype):
    info = torch.finfo(dtype)
    x = torch.tensor([0.0, -0.0, 1.0, -3.5, info.max, info.tiny, info.tiny / 4, -info.tiny / 8, info.eps,
                      float("inf"), float("-inf"), float("nan"), 1e-3, 123.456], dtype=dtype)
    check(torch.frexp, x)
    check(torch.frexp, x.view(2, 7).t())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=str)
def test_cross_rounds_each_product_like_the_cpu(dtype):
    g = torch.Generator().manual_seed(3)
    a = (torch.randn(400, 3, generator=g, dtype=torch.float64) * 5).to(dtype)
    b = (torch.randn(400, 3, generator=g, dtype=torch.float64) * 5).to(dtype)
    exact = dict(atol=0, rtol=0) if dtype != torch.float32 else {}
    check(lambda x, y: torch.linalg.cross(x, y), a, b, **exact)
    check(lambda x, y: torch.cross(x, y, dim=0), a.t(), b.t(), **exact)
