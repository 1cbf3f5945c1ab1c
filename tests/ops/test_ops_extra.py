"""index_reduce, put, logspace (compared with the CPU) and
the cauchy / log_normal / geometric fills (statistics: the tpu stream is
Philox, not the CPU's)."""
import math

import pytest
import torch

from harness import check, make, to_tpu

DTYPES = [torch.float32, torch.bfloat16, torch.int64]


# --- index_reduce -------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(dtype, reduce, include_self):
    lo, hi = (-2, 2) if reduce == "prod" else (None, None)
    self = make((5, 4), dtype, seed=1, low=lo, high=hi)
    src = make((6, 4), dtype, seed=2, low=lo, high=hi)
    index = torch.tensor([0, 2, 2, 4, 0, 2])  # repeats and untouched rows
    check(lambda s, i, x: s.index_reduce(0, i, x, reduce, include_self=include_self), self, index, src)


@pytest.mark.parametrize("reduce", ["mean", "amax"])
def test_index_reduce_noncontiguous_dim1_inplace(reduce):
    self = make((3, 5), torch.float32, seed=3, noncontiguous=True)
    src = make((3, 4), torch.float32, seed=4, noncontiguous=True)
    index = torch.tensor([4, 1, 4, 0], dtype=torch.int32)

    def fn(s, i, x):
        s = s.clone()
        s.index_reduce_(-1, i, x, reduce)
        return s

    check(fn, self, index, src)


def test_index_reduce_empty_and_0d():
    check(lambda s, i, x: s.index_reduce(0, i, x, "amin"), make((4, 3), torch.float32), torch.tensor([], dtype=torch.long),
          make((0, 3), torch.float32))
    check(lambda s, i, x: s.index_reduce(0, i, x, "prod"), make((1,), torch.float32), torch.tensor([0, 0]),
          make((2,), torch.float32, seed=5))
    for reduce in ("prod", "mean"):
        check(lambda s, i, x: s.index_reduce(0, i, x, reduce, include_self=False), make((), torch.float32),
              torch.tensor([0]), make((), torch.float32, seed=8))
    with pytest.raises(IndexError):  # 0-d self with two indices: the CPU raises too
        torch.zeros((), device="tpu").index_reduce(0, torch.tensor([0, 0], device="tpu"),
                                                   torch.ones((), device="tpu"), "prod").cpu()


def test_index_reduce_nan_propagates():
    self = torch.tensor([1.0, 2.0, 3.0])
    src = torch.tensor([float("nan"), 5.0])
    check(lambda s, i, x: s.index_reduce(0, i, x, "amax"), self, torch.tensor([0, 2]), src)


def test_index_reduce_out_of_range_raises():
    s = torch.zeros(3, device="tpu")
    with pytest.raises(IndexError):
        s.index_reduce(0, torch.tensor([3], device="tpu"), torch.ones(1, device="tpu"), "amax").cpu()


# --- put ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES + [torch.bool])
@pytest.mark.parametrize("accumulate", [False, True])
def test_put(dtype, accumulate):
    self = make((3, 4), dtype, seed=6, noncontiguous=True)
    if accumulate:
        index = torch.tensor([[0, -1], [5, 5], [11, 0]])  # repeats add up
    else:
        index = torch.tensor([[0, -1], [5, 7], [10, 2]])
    src = make((3, 2), dtype, seed=7)
    check(lambda s, i, x: s.put(i, x, accumulate=accumulate), self, index, src)

    def inplace(s, i, x):
        s = s.clone()
        s.put_(i, x, accumulate=accumulate)
        return s

    check(inplace, self, index, src)


def test_put_empty_and_0d():
    check(lambda s, i, x: s.put(i, x), make((3,), torch.float32), torch.tensor([], dtype=torch.long),
          torch.tensor([]))
    check(lambda s, i, x: s.put(i, x), make((), torch.float32), torch.tensor([-1]), torch.tensor([7.0]))


def test_put_out_of_range_raises():
    s = torch.zeros(4, device="tpu")
    with pytest.raises(IndexError):
        s.put(torch.tensor([4], device="tpu"), torch.ones(1, device="tpu")).cpu()


# --- logspace --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("start,end,steps,base", [(0, 3, 4, 10.0), (-1, 2.5, 7, 2.0), (1, 1, 1, 3.0),
                                                  (2, -2, 5, 2.0), (0, 4, 0, 10.0)])
def test_logspace(dtype, start, end, steps, base):
    expect = torch.logspace(start, end, steps, base=base, dtype=dtype)
    got = torch.logspace(start, end, steps, base=base, dtype=dtype, device="tpu").cpu()
    torch.testing.assert_close(got, expect)


def test_logspace_out_and_new_start_no_recompile():
    out = torch.empty(5, device="tpu")
    torch.logspace(0, 1, 5, out=out)
    torch.testing.assert_close(out.cpu(), torch.logspace(0, 1, 5))
    torch.testing.assert_close(torch.logspace(1, 2, 5, device="tpu").cpu(), torch.logspace(1, 2, 5))



# --- random fills: statistics --------------------------------------------------

def test_cauchy_statistics():
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.empty(20000, device="tpu", dtype=dtype).cauchy_(2.0, 0.5).cpu().float()
        assert x.dtype == torch.float32 and torch.isfinite(x).all()
        # Median 2, quartiles at median -/+ sigma.
        q = torch.quantile(x, torch.tensor([0.25, 0.5, 0.75]))
        torch.testing.assert_close(q, torch.tensor([1.5, 2.0, 2.5]), atol=0.05, rtol=0)


def test_log_normal_statistics():
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.empty(20000, device="tpu", dtype=dtype).log_normal_(1.0, 0.5).cpu()
        assert x.dtype == dtype and (x > 0).all()
        y = x.float().log()
        assert abs(y.mean().item() - 1.0) < 0.03 and abs(y.std().item() - 0.5) < 0.03


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_geometric_statistics(dtype):
    torch.manual_seed(0)
    p = 0.3
    x = torch.empty(20000, device="tpu", dtype=dtype).geometric_(p).cpu()
    assert x.dtype == dtype and (x >= 1).all() and (x == x.round()).all()
    x = x.double()
    assert abs(x.mean().item() - 1 / p) < 0.1  # mean 1/p, var (1-p)/p^2
    assert abs(x.var().item() - (1 - p) / p**2) < 0.6
    assert abs((x == 1).double().mean().item() - p) < 0.02


def test_random_fills_are_seeded():
    torch.manual_seed(3)
    a = [torch.empty(100, device="tpu").cauchy_().cpu(), torch.empty(100, device="tpu").log_normal_().cpu(),
         torch.empty(100, device="tpu").geometric_(0.5).cpu()]
    torch.manual_seed(3)
    b = [torch.empty(100, device="tpu").cauchy_().cpu(), torch.empty(100, device="tpu").log_normal_().cpu(),
         torch.empty(100, device="tpu").geometric_(0.5).cpu()]
    for x, y in zip(a, b):
        assert torch.equal(x, y)
    assert not torch.equal(a[0], torch.empty(100, device="tpu").cauchy_().cpu())


# --- scans, order statistics, search -------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES + [torch.bool])
@pytest.mark.parametrize("fn", [torch.cummax, torch.cummin])
def test_cummax_cummin(dtype, fn):
    x = make((4, 9), dtype, seed=9, low=-3, high=3, noncontiguous=True)  # small range: many ties
    check(lambda t: tuple(fn(t, 1)), x)
    check(lambda t: tuple(fn(t, 0)), x)
    check(lambda t: tuple(fn(t, 0)), make((), dtype))
    check(lambda t: tuple(fn(t, 1)), make((2, 0), dtype))


def test_cummax_cummin_nan():
    x = torch.tensor([[1.0, float("nan"), 3.0, float("nan"), 0.0], [2.0, 2.0, -1.0, 5.0, 5.0]])
    check(lambda t: tuple(torch.cummax(t, 1)), x)
    check(lambda t: tuple(torch.cummin(t, 1)), x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_logcumsumexp(dtype):
    x = make((3, 17), dtype, seed=10, noncontiguous=True)
    check(lambda t: torch.logcumsumexp(t, 1), x)
    check(lambda t: torch.logcumsumexp(t, 0), x)
    check(lambda t: torch.logcumsumexp(t, 0), make((), dtype))
    check(lambda t: torch.logcumsumexp(t, 0), make((0, 2), dtype))
    inf = float("inf")
    check(lambda t: torch.logcumsumexp(t, 0), torch.tensor([-inf, -inf, 1.0, inf, inf, float("nan"), 0.0], dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES + [torch.bool])
def test_mode(dtype):
    x = make((3, 4, 7), dtype, seed=11, low=-2, high=2, noncontiguous=True)
    check(lambda t: tuple(torch.mode(t, -1)), x)
    check(lambda t: tuple(torch.mode(t, 1, keepdim=True)), x)
    check(lambda t: tuple(torch.mode(t, 0)), make((), dtype))
    check(lambda t: tuple(torch.mode(t, 1)), make((0, 3), dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_nanmedian(dtype):
    x = make((4, 6), dtype, seed=12, low=-3, high=3, noncontiguous=True)
    if dtype.is_floating_point:
        x[0, 1] = x[2, 0] = x[2, 3] = float("nan")
    check(lambda t: tuple(torch.nanmedian(t, 1)), x)
    if dtype.is_floating_point:  # a row of NaNs: NaN (its index is arbitrary on the CPU)
        x[3] = float("nan")
        check(lambda t: torch.nanmedian(t, 1).values, x)
    check(lambda t: tuple(torch.nanmedian(t, 0, keepdim=True)), x)
    check(torch.nanmedian, x)
    check(torch.nanmedian, make((), dtype))
    check(lambda t: tuple(torch.nanmedian(t, 0)), make((), dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_bucketize(dtype, right):
    seq = torch.sort(make((3, 6), dtype, seed=13, low=-4, high=4)).values
    vals = make((3, 5), dtype, seed=14, low=-5, high=5, noncontiguous=True)
    check(lambda s, v: torch.searchsorted(s, v, right=right), seq, vals)
    check(lambda s, v: torch.searchsorted(s, v, right=right, out_int32=True), seq[0], vals)
    check(lambda s, v: torch.searchsorted(s, v, side="right" if right else "left"), seq[1], make((), dtype))
    check(lambda v, s: torch.bucketize(v, s, right=right), vals, seq[2])
    check(lambda v, s: torch.bucketize(v, s, right=right), make((0,), dtype), seq[2])


def test_searchsorted_sorter_and_nan():
    seq = torch.tensor([3.0, 1.0, float("nan"), 2.0, float("nan")])
    sorter = torch.argsort(seq)
    vals = torch.tensor([0.5, 2.0, 2.5, float("nan"), 9.0, float("inf")])
    check(lambda s, v, o: torch.searchsorted(s, v, sorter=o), seq, vals, sorter)
    check(lambda s, v, o: torch.searchsorted(s, v, sorter=o, right=True), seq, vals, sorter)


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_follows_the_cpu_search_path(right):
    # The CPU's binary search counts a probed NaN as smaller than every value,
    # so past a NaN it runs beyond numbers it never probes: 3 in
    # [-inf, -1, -0, 0, 1, 2, 3, inf, nan, nan] is at 10, not 6. The same on an
    # unsorted sequence: the answer is the search's, step for step.
    nan, inf = float("nan"), float("inf")
    vals = torch.tensor([3.0, inf, -inf, 0.0, nan, 2.5, -7.0, 100.0])
    for k in range(1, 13):
        numbers = torch.sort(make((k,), torch.float32, seed=k, low=-4, high=4)).values
        for tail in range(0, 3):
            seq = torch.cat([numbers[: k - tail], torch.full((min(tail, k),), nan)])
            check(lambda s, v: torch.searchsorted(s, v, right=right), seq, vals)
            check(lambda v, s: torch.bucketize(v, s, right=right), vals, seq)
    unsorted = make((2, 9), torch.float32, seed=3, low=-4, high=4)
    check(lambda s, v: torch.searchsorted(s, v, right=right), unsorted, vals.reshape(1, 8).expand(2, 8).contiguous())
    check(lambda s, v: torch.searchsorted(s, v, right=right), (unsorted[0] * 3).long(), (vals[vals.isfinite()] * 3).long())
