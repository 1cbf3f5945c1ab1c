"""torch.histogram and torch.histogramdd (histogram.bin_ct / .bins_tensor, _histogramdd_bin_edges,
_histogramdd_from_bin_cts, _histogramdd_from_bin_tensors) against the CPU kernel: equal-width edges bit for bit,
given edges (sorted or not), ranges, weights, density, empty inputs, out-of-range and NaN elements, bad input."""
import pytest
import torch

from harness import check, check_raises_like_cpu, make, to_cpu, to_tpu
from tiers import tiered

DTYPES = [torch.float32, torch.float64]


def exact(fn, *args):
    """Same values exactly (edges and counts), as the CPU."""
    expect = fn(*args)
    got = to_cpu(fn(*to_tpu(list(args))))
    torch.testing.assert_close(got, expect, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", tiered(DTYPES, [torch.float32]))  # float64 too: long tier
@pytest.mark.parametrize("bins", [1, 3, 10, 33, 100])
@pytest.mark.parametrize("shape", [(50,), (4, 7), (0,), (1,), (3, 0, 2)], ids=str)
def test_histogram_bin_ct(dtype, bins, shape):
    x = make(shape, dtype, seed=1, low=-3.7, high=5.1)
    exact(lambda t: tuple(torch.histogram(t, bins)), x)
    exact(lambda t: tuple(torch.histogram(t, bins, range=(-1.0, 2.5))), x)
    w = make(shape, dtype, seed=2, low=0, high=2)
    check(lambda t, u: tuple(torch.histogram(t, bins, weight=u)), x, w)
    check(lambda t, u: tuple(torch.histogram(t, bins, weight=u, density=True)), x, w)
    check(lambda t: tuple(torch.histogram(t, bins, range=(-2.0, 3.0), density=True)), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_histogram_edge_values(dtype):
    # Elements exactly on the edges (the rightmost edge counts), outside, NaN, and a constant input.
    edges = torch.linspace(-1, 1, 11, dtype=dtype)
    x = torch.cat([edges, edges[:5], torch.tensor([-2.0, 2.0, float("nan"), 1.0], dtype=dtype)])
    exact(lambda t: tuple(torch.histogram(t, 10, range=(-1.0, 1.0))), x)
    exact(lambda t, e: tuple(torch.histogram(t, e)), x, edges)
    exact(lambda t: tuple(torch.histogram(t, 4)), torch.full((5,), 3.0, dtype=dtype))
    exact(lambda t: tuple(torch.histogram(t, 7, range=(0.5, 0.5))), torch.full((5,), 0.5, dtype=dtype))
    exact(lambda t: tuple(torch.histogram(t, 7, range=(1e-3, 1e-3 + 1e-7))), torch.rand(100, dtype=dtype) * 2e-3)


@pytest.mark.parametrize("bins", [4, 100])
def test_histogram_of_values_near_the_float32_maximum(bins):
    # A 3e38 element makes a step of 3e36: the emulated fused multiply-add's
    # split overflowed there and every edge came out NaN, every count 0. The
    # edges equal the CPU's bit for bit; the counts are checked against those
    # edges (edges[i] <= x < edges[i + 1], the last bin closed), because the
    # float32 CPU kernel's (x - lo) * bins overflows to inf and puts 3e38 in
    # bin 1 (a PyTorch bug).
    x = torch.tensor([3e38, -0.0, 0.0, 0.5, -3.0, 2e38, 1e37])
    hist, edges = torch.histogram(x.to("tpu"), bins)
    want_edges = torch.histogram(x, bins)[1]
    torch.testing.assert_close(edges.cpu(), want_edges, rtol=0, atol=0)
    want = torch.zeros(bins)
    for v in x.tolist():
        i = int(torch.searchsorted(want_edges, torch.tensor(v), right=True)) - 1
        want[min(i, bins - 1)] += 1
    torch.testing.assert_close(hist.cpu(), want, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_histogram_bins_tensor(dtype):
    x = make((60,), dtype, seed=3, low=-2, high=2)
    w = make((60,), dtype, seed=4, low=0, high=1)
    for e in [torch.tensor([-1.0, -0.3, 0.0, 0.2, 1.5], dtype=dtype),
              torch.tensor([-1.0, 0.5, -0.2, 1.0, 0.7, 1.2], dtype=dtype),  # unsorted: the CPU's binary search
              torch.tensor([0.0, 0.0, 1.0], dtype=dtype), torch.tensor([-3.0, 3.0], dtype=dtype)]:
        exact(lambda t, b: tuple(torch.histogram(t, b)), x, e)
        check(lambda t, b, u: tuple(torch.histogram(t, b, weight=u, density=True)), x, e, w)
    big = make((64,), dtype, seed=5, low=-2, high=2).sort().values
    exact(lambda t, b: tuple(torch.histogram(t, b)), x, big)
    exact(lambda t, b: tuple(torch.histogram(t, b)), x.reshape(6, 10)[:, ::2], big[::3])


@pytest.mark.parametrize("dtype", tiered(DTYPES, [torch.float64]))  # float32 too: long tier
@pytest.mark.parametrize("bins", [[3, 4], [1, 7], [5, 5, 2]], ids=str)
def test_histogramdd(dtype, bins):
    d = len(bins)
    x = make((40, d), dtype, seed=6, low=-1, high=1)
    w = make((40,), dtype, seed=7, low=0, high=1)
    exact(lambda t: (lambda r: (r.hist, *r.bin_edges))(torch.histogramdd(t, bins)), x)
    rng = [v for k in range(d) for v in (-0.5 - k, 0.5)]
    exact(lambda t: (lambda r: (r.hist, *r.bin_edges))(torch.histogramdd(t, bins, range=rng)), x)
    check(lambda t, u: (lambda r: (r.hist, *r.bin_edges))(torch.histogramdd(t, bins, weight=u, density=True)), x, w)
    edges = [torch.linspace(-0.8, 0.9, b + 1, dtype=dtype) ** 3 for b in bins]
    exact(lambda t, *e: torch.histogramdd(t, list(e)).hist, x, *edges)
    check(lambda t, u, *e: torch.histogramdd(t, list(e), weight=u, density=True).hist, x, w, *edges)
    exact(lambda t: torch.histogramdd(t, bins).hist, x.reshape(4, 10, d))
    exact(lambda t: (lambda r: (r.hist, *r.bin_edges))(torch.histogramdd(t, bins)), x[:0])


def test_histogram_backends_agree_noncontiguous():
    x = make((8, 12), torch.float32, seed=8, noncontiguous=True)
    exact(lambda t: tuple(torch.histogram(t, 9)), x)
    exact(lambda t: torch.histogramdd(t.mT[:, :3], [3, 2, 4]).hist, x)


def test_bad_input():
    x = torch.rand(10)
    check_raises_like_cpu(lambda t: torch.histogram(t, 0), x)
    check_raises_like_cpu(lambda t: torch.histogram(t, 5, range=(1.0, 0.0)), x)
    check_raises_like_cpu(lambda t: torch.histogram(t, 5, range=(0.0, float("inf"))), x)
    check_raises_like_cpu(lambda t: torch.histogram(t, 5, weight=t[:4]), x)
    check_raises_like_cpu(lambda t: torch.histogram(t, 5, weight=t.double()), x)
    check_raises_like_cpu(lambda t: torch.histogram(t, t[:1]), x)
    check_raises_like_cpu(lambda t: torch.histogram(t, t.double()), x)
    check_raises_like_cpu(lambda t: torch.histogram(t, t.reshape(2, 5)), x)
    check_raises_like_cpu(lambda t: torch.histogramdd(t, [2, 3]), x)
    check_raises_like_cpu(lambda t: torch.histogramdd(t.reshape(5, 2), [2, 3], range=[0.0, 1.0]), x)
    check_raises_like_cpu(lambda t: torch.histogramdd(t.reshape(5, 2), [t[:3], t[:2], t[:2]]).hist, x)
    with pytest.raises(RuntimeError):  # an inferred range that is not finite (checked on the data)
        x = torch.tensor([1.0, float("inf")], device="tpu")
        torch.histogram(x, 3)[0].cpu()
        torch.tpu.synchronize()
