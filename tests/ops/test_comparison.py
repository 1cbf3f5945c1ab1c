"""Comparisons, logical and bitwise ops, where, clamp, masked_fill and the
float classification ops (isnan, isinf, ..., signbit, nan_to_num) against the CPU."""
import pytest
import torch
from harness import check, check_inplace, check_raises_like_cpu, make, to_tpu

F32, F64, BF16, F16 = torch.float32, torch.float64, torch.bfloat16, torch.float16
I8, I32, I64, U8, BOOL = torch.int8, torch.int32, torch.int64, torch.uint8, torch.bool
NAN, INF = float("nan"), float("inf")
SPECIALS = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 2.5]


def small(shape, dtype, seed):
    """Few distinct values, so equal elements occur."""
    return make(shape, dtype, seed=seed, low=-2, high=2).round() if dtype.is_floating_point else make(shape, dtype, seed=seed, low=0, high=3)


def pairs(dtype):
    """Every ordered pair of special values (floats) as two flat tensors."""
    vals = torch.tensor(SPECIALS, dtype=dtype)
    return vals.repeat_interleave(len(SPECIALS)), vals.repeat(len(SPECIALS))


COMPARE = [torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge]


@pytest.mark.parametrize("op", COMPARE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [F32, F64, BF16, F16, I32, U8, I8, BOOL])
def test_compare_dtypes(op, dtype):
    check(op, small((4, 5), dtype, 1), small((4, 5), dtype, 2))
    if dtype.is_floating_point:
        check(op, *pairs(dtype))


@pytest.mark.parametrize("op", COMPARE, ids=lambda f: f.__name__)
def test_compare_shapes_scalars_mixed(op):
    check(op, small((3, 1), F32, 3), small((1, 4), F32, 4))
    check(op, small((), F32, 3), small((2, 3), F32, 4))
    check(op, small((0,), F32, 3), small((0,), F32, 4))
    check(op, small((2, 0, 3), F32, 3), small((3,), F32, 4))
    x = make((4, 6), F32, seed=5, noncontiguous=True).round()
    check(op, x, x.t().t())
    check(op, x.t(), 1.0)
    check(op, small((3, 4), I32, 6), 1.5)  # int tensor vs float scalar compares as float
    check(op, small((3, 4), U8, 6), -1)
    check(op, small((3, 4), I64, 6), small((3, 4), F32, 7))
    check(op, small((3, 4), BF16, 6), torch.tensor(0.3))
    check(op, small((3, 4), F32, 6), torch.tensor(1, dtype=I64))
    check(lambda a, b: op(a, b, out=torch.empty(3, 4, dtype=F32, device=a.device)), small((3, 4), F32, 8), 0.0)
    check_inplace(lambda a, b: getattr(a, op.__name__ + "_")(b), small((3, 4), F32, 9), small((3, 4), F32, 10))


LOGICAL = [torch.logical_and, torch.logical_or, torch.logical_xor]


@pytest.mark.parametrize("op", LOGICAL, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtypes", [(BOOL, BOOL), (F32, F32), (I32, BOOL), (BF16, U8)])
def test_logical(op, dtypes):
    a, b = small((3, 4), dtypes[0], 1), small((4,), dtypes[1], 2)
    check(op, a, b)
    check(op, *pairs(F32))
    check(op, small((), dtypes[0], 3), small((0,), dtypes[1], 4))
    check(lambda x, y: op(x, y, out=torch.empty(3, 4, dtype=F32, device=x.device)), a, b)
    check_inplace(lambda x, y: getattr(x, op.__name__ + "_")(y), small((3, 4), F32, 5), b)


@pytest.mark.parametrize("dtype", [BOOL, F32, I32, BF16])
def test_logical_not(dtype):
    check(torch.logical_not, small((3, 4), dtype, 1))
    check(torch.logical_not, small((), dtype, 2))
    check(torch.logical_not, make((4, 6), dtype, noncontiguous=True).t())
    check_inplace(lambda x: x.logical_not_(), small((3, 4), dtype, 3))
    if dtype.is_floating_point:
        check(torch.logical_not, torch.tensor(SPECIALS, dtype=dtype))


BITWISE = [torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor]


@pytest.mark.parametrize("op", BITWISE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [BOOL, U8, I8, I32, I64])
def test_bitwise(op, dtype):
    a, b = make((3, 4), dtype, seed=1, low=-100, high=100), make((4,), dtype, seed=2, low=-100, high=100)
    check(op, a, b)
    check(op, a, 5 if dtype != BOOL else True)
    check(op, make((), dtype, seed=3), make((2, 0), dtype, seed=4))
    check(op, make((4, 6), dtype, seed=5, noncontiguous=True), b[:1])
    check_inplace(lambda x, y: getattr(x, op.__name__.replace("bitwise_", "__i") + "__")(y), a, b)


def test_bitwise_not_and_errors():
    for dtype in (BOOL, U8, I8, I32, I64):
        check(torch.bitwise_not, make((3, 4), dtype, seed=1))
        check(torch.bitwise_not, make((), dtype, seed=2))
    check(lambda x: ~x, make((4, 6), I32, noncontiguous=True).t())
    check(lambda a, b: a | b, make((3,), I32), make((3,), I64))
    for fn in (lambda a: torch.bitwise_and(a, a), lambda a: torch.bitwise_not(a), lambda a: a ^ 1):
        with pytest.raises(RuntimeError):  # NotImplementedError (a RuntimeError) on CPU
            fn(make((3,), F32))
        with pytest.raises(RuntimeError):
            fn(make((3,), F32).to("tpu"))
            torch.tpu.synchronize()


# --- where, masked_fill, clamp ---------------------------------------------------

@pytest.mark.parametrize("dtype", [F32, BF16, I32, BOOL, F64])
def test_where(dtype):
    cond = make((3, 4), BOOL, seed=1)
    a, b = make((3, 4), dtype, seed=2), make((4,), dtype, seed=3)
    check(torch.where, cond, a, b)
    check(torch.where, cond[:, :1], a, 2)  # where.ScalarOther -> where.self
    check(torch.where, cond, 1.5, b)
    check(torch.where, cond, 1, 0)
    check(torch.where, make((), BOOL, seed=4), make((2, 0), dtype), make((), dtype))
    check(torch.where, make((4, 6), BOOL, noncontiguous=True).t(), make((6, 4), dtype), make((4, 6), dtype).t())
    check(lambda c, x, y: torch.where(c, x, y, out=torch.empty(3, 4, dtype=dtype, device=x.device)), cond, a, b)


def test_where_mixed_and_errors():
    check(torch.where, make((3,), BOOL), make((3,), I32), make((3,), F32))
    check(torch.where, make((3,), BOOL), make((3,), BF16), torch.tensor(2.5))
    check_raises_like_cpu(torch.where, make((3,), I32), make((3,), F32), make((3,), F32))
    check_raises_like_cpu(torch.where, make((3,), BOOL), make((4,), F32), make((3,), F32))


@pytest.mark.parametrize("dtype", [F32, BF16, I64, U8, BOOL])
def test_masked_fill(dtype):
    x, mask = make((3, 4), dtype, seed=1), make((3, 4), BOOL, seed=2)
    value = True if dtype == BOOL else 7
    check(lambda t, m: t.masked_fill(m, value), x, mask)
    # (A 0-d *CPU* value tensor fails in the meta kernel: see the report.)
    check(lambda t, m: t.masked_fill(m, torch.tensor(value).to(t.device)), x, mask[:, :1])
    check_inplace(lambda t, m: t.masked_fill_(m, value), x, mask)
    check_inplace(lambda t, m: t.t().masked_fill_(m, value), make((4, 3), dtype), mask)
    check(lambda t, m: t.masked_fill(m, value), make((), dtype), make((), BOOL))
    check(lambda t, m: t.masked_fill(m, value), make((0, 2), dtype), make((2,), BOOL))
    if dtype.is_floating_point:
        check(lambda t, m: t.masked_fill(m, NAN), x, mask)
        check(lambda t, m: t.masked_fill(m, -INF), x, mask)


def test_masked_fill_errors():
    check_raises_like_cpu(lambda t, m: t.masked_fill(m, 1.0), make((3,), F32), make((3,), I64))
    check_raises_like_cpu(lambda t, m, v: t.masked_fill(m, v), make((3,), F32), make((3,), BOOL), make((3,), F32))


CLAMPS = {
    "both": lambda x: torch.clamp(x, -1, 2),
    "min": lambda x: torch.clamp(x, min=0.5),
    "max": lambda x: torch.clamp(x, max=-0.5),
    "inverted": lambda x: torch.clamp(x, 2, 1),
    "nan_bound": lambda x: torch.clamp(x, min=NAN),
    "clamp_min": lambda x: torch.clamp_min(x, 1),
    "clamp_max": lambda x: torch.clamp_max(x, 1.5),
}


@pytest.mark.parametrize("name", sorted(CLAMPS))
@pytest.mark.parametrize("dtype", [F32, BF16, I32, U8])
def test_clamp_scalar(name, dtype):
    x = make((4, 6), dtype, seed=1)
    if dtype.is_floating_point:
        x.view(-1)[: len(SPECIALS)] = torch.tensor(SPECIALS, dtype=dtype)
    check(CLAMPS[name], x)
    check(CLAMPS[name], x[:, ::2].t())


def test_clamp_shapes_inplace_out():
    check(lambda x: x.clamp(-1, 1), make((), F32))
    check(lambda x: x.clamp(-1, 1), make((2, 0), F32))
    check_inplace(lambda x: x.clamp_(-1, 1), make((3, 4), F32))
    check_inplace(lambda x: x.clamp_min_(0), make((3, 4), I32))
    check_inplace(lambda x: x[:, 1].clamp_max_(0.5), make((3, 4), BF16))
    check(lambda x: torch.clamp(x, 0, 1, out=torch.empty(3, 4, device=x.device)), make((3, 4), F32))
    check(lambda x: torch.clamp(x, 0.5, 2.5), make((3, 4), I32))  # int tensor, float bounds -> float
    # (clamp with neither bound raises ValueError in the meta kernel, RuntimeError on CPU.)


@pytest.mark.parametrize("dtype", [F32, BF16, I32])
def test_clamp_tensor(dtype):
    x, lo, hi = make((3, 4), dtype, seed=1), make((4,), dtype, seed=2, low=-5, high=0), make((3, 1), dtype, seed=3, low=0, high=5)
    check(torch.clamp, x, lo, hi)
    check(lambda a, b: torch.clamp(a, min=b), x, lo)
    check(lambda a, b: torch.clamp(a, max=b), x, hi)
    check(torch.clamp_min, x, lo)
    check(torch.clamp_max, x, hi)
    check(torch.clamp, x, hi, lo)  # min > max: max wins
    check_inplace(lambda a, b, c: a.clamp_(b, c), x, lo, hi)
    check(torch.clamp, make((), dtype), make((2, 0), dtype), None)
    if dtype.is_floating_point:
        check(torch.clamp, *pairs(dtype), torch.tensor(1.0, dtype=dtype))


# --- float classification --------------------------------------------------------

CLASSIFY = [torch.isnan, torch.isinf, torch.isfinite, torch.isposinf, torch.isneginf, torch.signbit]


@pytest.mark.parametrize("op", CLASSIFY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [F32, BF16, F16, I32, BOOL])
def test_classify(op, dtype):
    x = make((3, 5), dtype, seed=1)
    if dtype.is_floating_point:
        x.view(-1)[: len(SPECIALS)] = torch.tensor(SPECIALS, dtype=dtype)
    check(op, x)
    check(op, x.t())
    check(op, make((), dtype))
    check(op, make((0, 3), dtype))


@pytest.mark.parametrize("dtype", [F32, F64, BF16, I32])
@pytest.mark.parametrize("kw", [{}, {"nan": 1.5}, {"posinf": 100.0, "neginf": -7.0}, {"nan": -1.0, "posinf": 1e300}])
def test_nan_to_num(dtype, kw):
    x = make((3, 5), dtype, seed=1)
    if dtype.is_floating_point:
        x.view(-1)[: len(SPECIALS)] = torch.tensor(SPECIALS, dtype=dtype)
    check(lambda t: torch.nan_to_num(t, **kw), x)
    check(lambda t: torch.nan_to_num(t, **kw), x.t())
    check_inplace(lambda t: t.nan_to_num_(**kw), x)
    check(lambda t: torch.nan_to_num(t, **kw), make((), dtype))


def test_comparison_backward():
    # where / clamp / masked_fill gradients against the CPU.
    a, b = make((3, 4), F32, seed=1), make((3, 4), F32, seed=2)
    fns = [
        lambda x, y: torch.where(x > y, x, y * 2).sum(),
        lambda x, y: (x.clamp(-1, 1) + x.clamp(min=y) + x.clamp_max(0.5)).sum(),
        lambda x, y: x.masked_fill(y > 0, 0.0).sum(),
        lambda x, y: torch.nan_to_num(x / y).sum(),
    ]
    for fn in fns:
        grads = []
        for dev in ("cpu", "tpu"):
            x = a.detach().to(dev).requires_grad_()
            y = b.detach().to(dev).requires_grad_()
            fn(x, y).backward()
            grads.append((x.grad.cpu(), None if y.grad is None else y.grad.cpu()))
        torch.testing.assert_close(grads[1], grads[0])


# --- bitwise ops on floats: the CPU's NotImplementedError, PyTorch's dtype name -----

_BITWISE_F = torch.tensor([1.5, -2.0, 3.0])
_BITWISE_I = torch.tensor([1, -2, 3])
_BITWISE_B = torch.tensor([True, False, True])

BITWISE_FLOAT_CALLS = {
    "and(f32, f32)": lambda d: torch.bitwise_and(d(_BITWISE_F), d(_BITWISE_F)),
    "and(cpu0d bool, f32)": lambda d: torch.bitwise_and(torch.tensor(True), d(_BITWISE_F)),
    "and(1.5, bool)": lambda d: torch.bitwise_and(1.5, d(_BITWISE_B)),
    "and(int, 1.5)": lambda d: torch.bitwise_and(d(_BITWISE_I), 1.5),
    "and(int, cpu0d f64)": lambda d: torch.bitwise_and(d(_BITWISE_I), torch.tensor(2.0, dtype=torch.float64)),
    "and_(f32, 1)": lambda d: d(_BITWISE_F.clone()).bitwise_and_(1),
    "and_(f32, int)": lambda d: d(_BITWISE_F.clone()).bitwise_and_(d(_BITWISE_I)),
    "or(f32, True)": lambda d: torch.bitwise_or(d(_BITWISE_F), True),
    "or(int, f32)": lambda d: torch.bitwise_or(d(_BITWISE_I), d(_BITWISE_F)),
    "xor(f32, 2)": lambda d: torch.bitwise_xor(d(_BITWISE_F), 2),
    "xor(int, f32)": lambda d: torch.bitwise_xor(d(_BITWISE_I), d(_BITWISE_F)),
    "not(f32)": lambda d: torch.bitwise_not(d(_BITWISE_F)),
}


@pytest.mark.parametrize("name", sorted(BITWISE_FLOAT_CALLS))
def test_bitwise_float_raises_like_cpu(name):
    fn = BITWISE_FLOAT_CALLS[name]
    with pytest.raises(NotImplementedError) as cpu:
        fn(lambda t: t)
    with pytest.raises(NotImplementedError) as tpu:
        fn(lambda t: t.to("tpu"))
    assert str(cpu.value) in str(tpu.value)  # "bitwise_and_cpu" not implemented for 'Float'
