"""logcumsumexp on complex64/complex128 against the CPU: shapes (empty, 0-d,
non-contiguous), every dim, imaginary parts spread over several periods (the
branch of the logarithm each step keeps depends on the CPU's sequential
order), large real parts, infinities and NaN, out=, the backward, errors."""
import math

import pytest
import torch

from harness import check, check_raises_like_cpu, make, to_tpu

NAN, INF = math.nan, math.inf
CDTYPES = [torch.complex64, torch.complex128]


def cmake(shape, dtype, seed=0, low=-5.0, high=5.0, noncontiguous=False):
    real = torch.float32 if dtype == torch.complex64 else torch.float64
    re = make(shape, real, seed=seed, low=low, high=high, noncontiguous=noncontiguous)
    im = make(shape, real, seed=seed + 100, low=-9, high=9, noncontiguous=noncontiguous)
    z = torch.complex(re, im)
    if noncontiguous and z.dim() > 0:
        wide = torch.zeros(*z.shape[:-1], z.shape[-1] * 2, dtype=dtype)
        wide[..., ::2] = z
        z = wide[..., ::2]
    return z


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
@pytest.mark.parametrize("shape,dim", [((5, 5, 5), 0), ((5, 5, 5), 1), ((5, 5, 5), -1), ((17,), 0), ((), 0),
                                       ((0, 3), 0), ((3, 0), 1), ((4, 1), 1)], ids=str)
def test_values(dtype, shape, dim):
    check(torch.logcumsumexp, cmake(shape, dtype), dim)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_large_and_noncontiguous(dtype):
    z = cmake((6, 9), dtype, seed=3, noncontiguous=True)
    check(torch.logcumsumexp, z, 1)
    check(torch.logcumsumexp, z.t(), 0)
    big = cmake((5, 5, 5), dtype, seed=4)
    big[0] = 10000
    check(torch.logcumsumexp, big, 0)
    check(torch.logcumsumexp, big, 1)
    check(torch.logcumsumexp, cmake((40,), dtype, seed=5, low=-30, high=30), 0)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_special_values(dtype):
    # -inf, +inf and NaN real or imaginary parts, between finite values and each other.
    vals = [complex(-INF, 1), complex(-INF, -2), complex(INF, 0), complex(INF, 1.5), complex(NAN, 1), complex(1, NAN),
            complex(2, 3), complex(-1, -3), complex(0, 0)]
    rows = [[a, b, c] for a in vals for b in vals for c in vals[:: 3]]
    z = torch.tensor(rows, dtype=dtype)
    check(torch.logcumsumexp, z, 1)
    for v in vals:  # 0-d: the value itself
        check(torch.logcumsumexp, torch.tensor(v, dtype=dtype), 0)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_out(dtype):
    z = cmake((4, 5), dtype)
    check(lambda z: torch.logcumsumexp(z, 1, out=torch.empty(4, 5, dtype=dtype, device=z.device)), z)
    check(lambda z: torch.logcumsumexp(z, 0, out=torch.empty(0, dtype=dtype, device=z.device)), z)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
@pytest.mark.parametrize("dim", [0, 1])
def test_backward(dtype, dim):
    z = cmake((4, 6), dtype, seed=7, low=-2, high=2)
    g = cmake((4, 6), dtype, seed=8, low=-1, high=1)

    def run(z, g):
        leaf = z.detach().clone().requires_grad_()
        torch.logcumsumexp(leaf, dim).backward(g)
        return leaf.grad

    expect = run(z, g)
    got = run(to_tpu(z), to_tpu(g))
    assert got.device.type == "tpu"
    torch.testing.assert_close(got.cpu(), expect)


def test_errors():
    z = cmake((3, 4), torch.complex64)
    check_raises_like_cpu(torch.logcumsumexp, z, 2)  # dim out of range
    check_raises_like_cpu(lambda z: torch.logcumsumexp(z, 0, out=torch.empty(3, 4, device=z.device)), z)  # complex into float
