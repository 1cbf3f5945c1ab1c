"""Reductions (sum, mean, prod, amax/amin, max/min, argmax/argmin, all/any,
var/std, logsumexp, vector norms) and scans (cumsum, cumprod) against the CPU."""
import math

import pytest
import torch

import torch_tpu  # noqa: F401
from harness import ALL_DTYPES, FLOAT_DTYPES, check, check_inplace, check_raises_like_cpu, make, to_tpu

SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]
# (shape, dim) pairs, including negative dims, lists and empty reduced dims.
DIMS = [((), 0), ((5,), 0), ((3, 4), -2), ((2, 3, 4), (0, 2)), ((2, 3, 4), [-1, 0, 1]), ((2, 0, 3), 2),
        ((2, 0, 3), 1), ((3, 4), [])]
FEW_DIMS = [((), 0), ((3, 4), 1), ((2, 3, 4), (0, 2)), ((2, 0, 3), 1), ((3, 4), [])]


def with_nans(x):
    x = x.clone()
    x.view(-1)[::3] = math.nan
    return x


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (3, 4), (2, 0, 3)], ids=str)
def test_sum_full(dtype, shape):
    x = make(shape, dtype)
    check(torch.sum, x)
    if dtype.is_floating_point:
        check(torch.nansum, x)
    if shape == (3, 4):
        check(lambda t: t.sum(dtype=torch.float64), x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.bool], ids=str)
@pytest.mark.parametrize("shape,dim", DIMS, ids=str)
def test_sum_prod_dim(dtype, shape, dim):
    x = make(shape, dtype, low=-2, high=2)
    check(lambda t: t.sum(dim), x)
    check(lambda t: torch.sum(t, dim, True, dtype=torch.float32), x)
    if isinstance(dim, int):
        check(lambda t: t.prod(dim, keepdim=True), x)


def test_sum_dim_none_and_noncontiguous():
    x = make((4, 6), torch.float32, noncontiguous=True)
    check(lambda t: torch.sum(t, None), x)
    check(lambda t: t.t().sum(0), x)
    check(lambda t: t[:, 1::2].sum(1, keepdim=True), x)
    check(lambda t: torch.nansum(t, 1), with_nans(x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64, torch.int16, torch.uint8, torch.bool], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_prod_full(dtype, shape):
    check(torch.prod, make(shape, dtype, low=-2, high=2))


def test_sum_out_and_large_half():
    x = make((3, 5), torch.float32)
    out = torch.empty(0)
    check_inplace(lambda o, t: torch.sum(t, 1, out=o), out, x)
    check_inplace(lambda o, t: torch.mean(t, (0, 1), out=o), torch.empty(()), x)
    check_inplace(lambda o, t: torch.prod(t, 0, out=o), torch.empty(5), x)
    # half sums accumulate in float32 like the CPU (a bf16 accumulator would stall)
    big = torch.ones(4096, dtype=torch.bfloat16)
    check(torch.sum, big)
    check(torch.mean, make((1000,), torch.float16))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("shape,dim", FEW_DIMS, ids=str)
def test_mean(dtype, shape, dim):
    x = make(shape, dtype)
    check(lambda t: t.mean(dim, keepdim=True), x)
    check(torch.mean, x)


def test_mean_dtype_and_errors():
    check(lambda t: t.mean(dtype=torch.float64), make((3, 4), torch.int32))
    check(lambda t: t.mean(1, dtype=torch.float32), make((3, 4), torch.bfloat16))
    check_raises_like_cpu(torch.mean, make((3,), torch.int64))
    check_raises_like_cpu(lambda t: t.sum(3), make((3,), torch.float32))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int8, torch.uint8, torch.int64,
                                   torch.bool], ids=str)
@pytest.mark.parametrize("shape,dim", [((), 0), ((5,), 0), ((2, 3, 4), (0, 2)), ((2, 0, 3), 2), ((3, 4), [])], ids=str)
def test_amax_amin(dtype, shape, dim):
    x = make(shape, dtype)
    check(lambda t: torch.amax(t, dim), x)
    check(lambda t: torch.amin(t, dim, keepdim=True), x)
    if shape and 0 not in shape:
        check(torch.max, x)
        check(torch.min, x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("shape", [(), (5,), (2, 3, 4), (2, 0, 3)], ids=str)
def test_aminmax(dtype, shape):
    x = make(shape, dtype)
    for dim in [None, 0, -1]:
        for keepdim in (False, True):
            fn = lambda t: torch.aminmax(t, dim=dim, keepdim=keepdim)  # noqa: E731
            if x.numel() == 0 and (dim is None or x.shape[dim] == 0):
                check_raises_like_cpu(fn, x)
            else:
                check(fn, x)
    if dtype.is_floating_point:
        check(lambda t: torch.aminmax(t, dim=1), with_nans(make((4, 5), dtype)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
def test_count_nonzero(dtype):
    x = make((3, 4, 5), dtype, low=-1, high=1)
    for dim in [None, 0, (0, 2), -1, ()]:
        check(lambda t: torch.count_nonzero(t, dim), x)
    check(torch.count_nonzero, x.transpose(0, 2))
    check(torch.count_nonzero, make((), dtype))
    check(lambda t: torch.count_nonzero(t, 1), make((2, 0), dtype))


def test_extremes_nan_inf_and_errors():
    x = with_nans(make((4, 5), torch.float32))
    for fn in (torch.max, torch.min, lambda t: t.amax(1), lambda t: t.amin(0), lambda t: t.max(1), lambda t: t.argmin(0)):
        check(fn, x)
    y = torch.tensor([[-math.inf, -math.inf], [math.inf, 1.0]])
    check(lambda t: t.amax(1), y)
    check(lambda t: t.min(1), y)
    check(lambda t: t.max(0), y)
    check_raises_like_cpu(torch.max, torch.ones(0))
    # The CPU's IndexError (from its own C++ meta function, eager/native_meta.h).
    check_raises_like_cpu(lambda t: t.max(0), torch.ones(0, 3))
    check_raises_like_cpu(lambda t: t.argmax(), torch.ones(0))
    check_inplace(lambda o, t: torch.max(t, out=o), torch.empty(()), make((3, 4), torch.float32))
    check_inplace(lambda o, t: torch.amax(t, 1, out=o), torch.empty(3), make((3, 4), torch.float32))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.uint8, torch.bool], ids=str)
@pytest.mark.parametrize("shape,dim", [((), 0), ((7,), 0), ((3, 4), -2), ((2, 3, 4), 1), ((2, 0, 3), 2)], ids=str)
def test_max_min_dim_argmax(dtype, shape, dim):
    # Few distinct values, so ties are common: the first index must win.
    x = make(shape, dtype, low=0, high=3)
    check(lambda t: torch.max(t, dim), x)
    check(lambda t: torch.min(t, dim, keepdim=True), x)
    if dtype == torch.bool:
        check_raises_like_cpu(lambda t: torch.argmax(t, dim), x)
        return
    check(lambda t: torch.argmax(t, dim, keepdim=True), x)
    check(lambda t: torch.argmin(t, dim), x)
    if 0 not in shape:
        check(torch.argmax, x)
        check(lambda t: torch.argmin(t, keepdim=True), x)


def test_max_dim_noncontiguous_and_out():
    x = make((5, 6), torch.float32, low=0, high=2, noncontiguous=True)
    check(lambda t: t.max(0), x)
    check(lambda t: t.t().min(1), x)
    check(lambda t: t.round().max(1), x)  # many ties
    vals, idx = torch.empty(0), torch.empty(0, dtype=torch.long)
    tv, ti = to_tpu(vals), to_tpu(idx)
    torch.max(x, 1, out=(vals, idx))
    torch.max(to_tpu(x), 1, out=(tv, ti))
    assert torch.equal(tv.cpu(), vals) and torch.equal(ti.cpu(), idx)


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.float32], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_all_any(dtype, shape):
    x = make(shape, dtype, low=0, high=3)
    check(torch.all, x)
    check(torch.any, x)
    check(lambda t: torch.all(t, dim=[]), x)  # all.dims: [] reduces nothing
    check(lambda t: torch.any(t, dim=None), x)
    if len(shape) > 1:
        check(lambda t: torch.any(t, dim=(0, -1), keepdim=True), x)
    if shape:
        check(lambda t: torch.all(t, 0), x)
        check(lambda t: torch.any(t, -1, keepdim=True), x)
    check(torch.all, torch.ones(shape, dtype=dtype))


@pytest.mark.filterwarnings("ignore:.*degrees of freedom")  # the CPU's, for 0-d and empty inputs
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape,dim", FEW_DIMS + [((3, 4), None), ((2, 0, 3), 2)], ids=str)
def test_var_std(dtype, shape, dim):
    x = make(shape, dtype)
    check(lambda t: torch.var(t, dim), x)
    check(lambda t: torch.std(t, dim, correction=0, keepdim=True), x)
    check(lambda t: torch.var_mean(t, dim, correction=2.5), x)
    check(lambda t: torch.std_mean(t, dim, keepdim=True), x)


@pytest.mark.filterwarnings("ignore:.*degrees of freedom")
def test_var_std_variants():
    x = make((4, 5), torch.float32, noncontiguous=True)
    check(lambda t: t.var(unbiased=False), x)
    check(lambda t: t.std(1, unbiased=True), x)
    check(torch.var, torch.full((8,), 3.0))  # exactly zero
    check(lambda t: torch.std_mean(t, 1, correction=0), make((3, 4), torch.float64))
    check_inplace(lambda o, t: torch.var(t, 0, out=o), torch.empty(5), x)
    check_raises_like_cpu(torch.var, make((3,), torch.int64))
    # Corrections past N (the CPU clamps the divisor at 0, NaN included).
    for corr in (float("nan"), float("inf"), -float("inf"), 10.0):
        check(lambda t: torch.var(t, 1, correction=corr), x)
        check(lambda t: torch.std_mean(t, 0, correction=corr), x)
    check(lambda t: torch.var(t, 1, correction=float("nan")), torch.empty(3, 0))
    # An empty input is NaN for every correction (0 / (0 - (-1)) was 0).
    for corr in (-1, -0.5, 0, 2):
        for empty in (torch.empty(0, 3), torch.empty(0, 3, dtype=torch.complex64)):
            check(lambda t: (torch.var(t, 0, correction=corr), torch.std_mean(t, correction=corr),
                             torch.var_mean(t, 0, correction=corr)), empty)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32], ids=str)
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((2, 3, 4), (0, 2)), ((2, 0, 3), 1), ((2, 0, 3), 0), ((), 0)], ids=str)
def test_logsumexp(dtype, shape, dim):
    x = make(shape, dtype)
    check(lambda t: torch.logsumexp(t, dim), x)
    check(lambda t: torch.logsumexp(t, dim, keepdim=True), x)


def test_logsumexp_infinities():
    x = torch.tensor([[-math.inf, -math.inf], [math.inf, 1.0], [math.inf, math.inf], [math.nan, 1.0], [1000.0, 1000.0]])
    check(lambda t: torch.logsumexp(t, 1), x)


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, -1, math.inf, -math.inf])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
def test_vector_norm(ord, dtype):
    x = make((3, 4), dtype)
    x[0, 1] = 0
    check(lambda t: torch.linalg.vector_norm(t, ord), x)
    check(lambda t: torch.linalg.vector_norm(t, ord, dim=1, keepdim=True), x)
    check(lambda t: torch.linalg.vector_norm(t, ord, dim=(0, 1)), x)
    check(lambda t: t.norm(ord), x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_norm_overloads(dtype):
    x = make((3, 4), dtype)
    check(lambda t: torch.ops.aten.norm.Scalar(t, 3), x)
    check(lambda t: torch.ops.aten.norm.ScalarOpt_dim(t, None, [1], True), x)
    check(lambda t: torch.ops.aten.norm.ScalarOpt_dtype(t, 1, dtype=torch.float64), x)
    check(lambda t: torch.ops.aten.norm.ScalarOpt_dim_dtype(t, math.inf, [0], False, dtype=torch.float32), x)
    check(lambda t: torch.norm(t, dim=0), x)


def test_vector_norm_edges():
    check(torch.linalg.vector_norm, torch.ones(0))
    check(lambda t: torch.linalg.vector_norm(t, dtype=torch.float64), make((5,), torch.float32))
    check(lambda t: torch.linalg.vector_norm(t, 2, dim=0), make((), torch.float32))
    check(torch.linalg.vector_norm, make((4, 3), torch.float32, noncontiguous=True))
    check_raises_like_cpu(lambda t: torch.linalg.vector_norm(t, math.inf), torch.ones(0))
    check_raises_like_cpu(torch.linalg.vector_norm, make((3,), torch.int64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.bool], ids=str)
@pytest.mark.parametrize("shape,dim", [((), 0), ((0,), 0), ((7,), 0), ((3, 5), -2), ((2, 9, 3), 1), ((2, 0, 3), 2)],
                         ids=str)
def test_cumsum_cumprod(dtype, shape, dim):
    x = make(shape, dtype, low=-2, high=2)
    check(lambda t: torch.cumsum(t, dim), x)
    check(lambda t: torch.cumprod(t, dim), x)


def test_cumsum_dtype_arg():
    check(lambda t: torch.cumsum(t, 1, dtype=torch.float64), make((3, 5), torch.float32))
    check(lambda t: torch.cumprod(t, 1), make((3, 5), torch.float64))
    check(lambda t: torch.cumsum(t, 0), make((6,), torch.uint8))
    check(lambda t: torch.cumprod(t, 0, dtype=torch.int64), make((6,), torch.int8, low=-2, high=2))


def test_cumsum_long_inplace_out():
    check(lambda t: torch.cumsum(t, 0), make((1000,), torch.float32, low=0, high=1))
    check(lambda t: torch.cumsum(t, 1), make((3, 33), torch.int64))
    check(lambda t: t.t().cumsum(1), make((4, 6), torch.float32, noncontiguous=True))
    check_inplace(lambda t: t.cumsum_(1), make((3, 4), torch.float32))
    check_inplace(lambda o, t: torch.cumprod(t, 0, out=o), torch.empty(0), make((5,), torch.float32))
    check_raises_like_cpu(lambda t: torch.cumsum(t, 2), make((3, 4), torch.float32))


def grads(fn, *inputs):
    """Gradients of fn(*inputs).sum() w.r.t. every input, on CPU and on tpu."""
    out = []
    for dev in ("cpu", "tpu"):
        xs = [x.detach().clone().to(dev).requires_grad_() for x in inputs]
        fn(*xs).sum().backward()
        out.append([x.grad.cpu() for x in xs])
    torch.testing.assert_close(out[1], out[0])


@pytest.mark.parametrize("fn", [
    lambda t: t.sum(1),
    lambda t: t.sum(),
    lambda t: t.mean(0),
    lambda t: t.mean(),
    lambda t: t.amax(1),
    lambda t: t.max(),
    lambda t: t.max(1).values,
    lambda t: t.var(1),
    lambda t: t.std(),
    lambda t: torch.logsumexp(t, 1),
    lambda t: torch.linalg.vector_norm(t),
    lambda t: t.cumsum(1),
    lambda t: t.prod(1),
    lambda t: t.cumprod(1),
    lambda t: sum(torch.var_mean(t, 1)),
    lambda t: torch.linalg.vector_norm(t, math.inf, dim=1),
    lambda t: t.amin(0),
    lambda t: t.min(0).values,
    lambda t: t.nansum(1),
], ids=["sum_dim", "sum", "mean_dim", "mean", "amax", "max", "max_dim", "var", "std", "logsumexp", "norm",
        "cumsum", "prod", "cumprod", "var_mean", "norm_inf", "amin", "min_dim", "nansum"])
def test_backward(fn):
    grads(fn, make((3, 4), torch.float32, seed=3))


def test_clip_grad_norm():
    # clip_grad_norm_ computes per-tensor vector norms, their norm, and scales.
    result = []
    for dev in ("cpu", "tpu"):
        torch.manual_seed(0)
        m = torch.nn.Linear(4, 3).to(dev)
        m(torch.ones(2, 4, device=dev)).sum().backward()
        n = torch.nn.utils.clip_grad_norm_(m.parameters(), 0.1)
        result.append((n.cpu(), m.weight.grad.cpu(), m.bias.grad.cpu()))
    torch.testing.assert_close(result[1], result[0])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape,dim", FEW_DIMS, ids=str)
def test_hash_tensor(dtype, shape, dim):
    # Elements widened to 64 bits and xor-reduced; floats' float64 bit
    # patterns (subnormals, -0, inf and NaN of float32 included).
    x = make(shape, dtype, noncontiguous=True)
    if x.numel() == 0:  # the CPU wants a dim, and refuses an empty reduced dim
        check_raises_like_cpu(torch.hash_tensor, x)
        check_raises_like_cpu(lambda t: torch.hash_tensor(t, dim=1), x)
        check(lambda t: torch.hash_tensor(t, dim=[0, 2]), x)
        return
    check(torch.hash_tensor, x)
    check(lambda t: torch.hash_tensor(t, dim=dim, keepdim=True), x)
    if dtype in (torch.float32, torch.float16, torch.bfloat16):
        specials = torch.tensor([1e-40, -0.0, float("inf"), -float("inf"), float("nan"), -1e-45, 2.0 ** -126, 65504.0])
        check(lambda t: torch.hash_tensor(t[:, None], dim=1), specials.to(dtype))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8], ids=str)
def test_bincount(dtype):
    x = make((50,), dtype, low=0, high=20, noncontiguous=True)
    check(torch.bincount, x)
    check(lambda t: torch.bincount(t, minlength=40), x)
    for wdt in (torch.float32, torch.float64, torch.float16, torch.int64):  # result: f32 for f32 weights, else f64
        check(lambda t, w: torch.bincount(t, w), x, make((50,), wdt, seed=1))
    check(lambda t: torch.bincount(t, minlength=3), torch.empty(0, dtype=dtype))


def test_bincount_errors_like_cpu():
    check_raises_like_cpu(torch.bincount, torch.tensor([-1, 2]))
    check_raises_like_cpu(torch.bincount, torch.tensor([[1, 2]]))
    check_raises_like_cpu(torch.bincount, torch.tensor([1.0, 2.0]))
    check_raises_like_cpu(torch.bincount, torch.tensor([True, False]))
    check_raises_like_cpu(lambda t, w: torch.bincount(t, w), torch.tensor([1, 2, 3]), torch.tensor([1.0, 2.0]))
    check_raises_like_cpu(lambda t: torch.bincount(t, minlength=-1), torch.tensor([1, 2]))
