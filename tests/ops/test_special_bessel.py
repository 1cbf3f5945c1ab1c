"""Bessel functions (j0, j1, y0, y1, spherical j0, modified i1/k0/k1 and the
scaled k0/k1) and airy_ai against the CPU: float32, ints and bool (the CPU has
no half kernels: same exception), empty/0-d shapes, non-contiguous inputs,
branch points and special values."""
import math

import pytest
import torch

from harness import check, check_raises_like_cpu, make
from tiers import pairwise

SHAPES = [(7,), (3, 5), (0, 4), ()]
NAN, INF = math.nan, math.inf
NAMES = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "spherical_bessel_j0"]


@pytest.mark.parametrize(*pairwise("name", NAMES, "dtype", [torch.float32, torch.int64, torch.bool], "shape", SHAPES))
def test_dtypes(name, dtype, shape):
    check(getattr(torch.special, name), make(shape, dtype, low=-30, high=30))


@pytest.mark.parametrize("name", NAMES)
def test_half_not_implemented_like_cpu(name):
    check_raises_like_cpu(getattr(torch.special, name), make((3,), torch.bfloat16))


@pytest.mark.parametrize("name", NAMES)
def test_values(name):
    # 0 and -0, the small-x forms (1e-5, 1/2), the fit/asymptotic switch at 5, negative x (odd j1,
    # NaN y0/y1), large x, inf and NaN.
    x = torch.tensor([0.0, -0.0, 1e-7, -1e-7, 9.9e-6, 1e-5, 0.4999, 0.5, -0.5, 4.9999, 5.0, 5.0001, -5.0,
                      2.4048, 3.8317, 100.0, -100.0, 1e4, 1e10, INF, -INF, NAN])
    f = getattr(torch.special, name)
    check(f, torch.cat([x, torch.linspace(-40, 40, 801)]))
    check(f, make((4, 6), torch.float32, low=-12, high=12, noncontiguous=True).t())
    check(f, make((5, 6), torch.float32, low=0, high=12)[1::2, ::3])


MODIFIED = ["modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
            "scaled_modified_bessel_k1"]


@pytest.mark.parametrize(*pairwise("name", MODIFIED, "dtype", [torch.float32, torch.int64, torch.bool], "shape", SHAPES))
def test_modified_dtypes(name, dtype, shape):
    check(getattr(torch.special, name), make(shape, dtype, low=-12, high=30))


@pytest.mark.parametrize("name", MODIFIED)
def test_modified_half_not_implemented_like_cpu(name):
    check_raises_like_cpu(getattr(torch.special, name), make((3,), torch.bfloat16))


@pytest.mark.parametrize("name", MODIFIED)
def test_modified_values(name):
    # 0 and -0 (k: inf), negative x (i1 odd, k NaN), the fit/expansion switches at 2 (k) and 8 (i1),
    # exp's overflow (~88.7), large x, inf and NaN.
    x = torch.tensor([0.0, -0.0, 1e-7, 1e-3, 1.9999, 2.0, 2.0001, -2.0, 7.9999, 8.0, 8.0001, -8.0, -20.0, 85.0,
                      88.0, 89.0, 100.0, 1e4, 1e10, INF, -INF, NAN])
    f = getattr(torch.special, name)
    check(f, torch.cat([x, torch.linspace(-30, 100, 1301)]))
    check(f, make((4, 6), torch.float32, low=0, high=12, noncontiguous=True).t())
    check(f, make((5, 6), torch.float32, low=-9, high=9)[1::2, ::3])


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_airy_ai_dtypes(dtype, shape):
    check(torch.special.airy_ai, make(shape, dtype, low=-20, high=20))


def test_airy_ai_values():
    # The branch points -2.09 / 2.09 / 8.32 / 103.892, 0, inf (NaN) and NaN. (Not beyond about
    # -1e5: there sin/cos of zeta ~ (-x)^1.5 depend on each library's range reduction.)
    x = torch.tensor([0.0, -0.0, -2.09, -2.0899, 2.09, 2.0899, 8.3203353, 8.33, 103.892, 103.9, -1e4, 1e10,
                      INF, -INF, NAN])
    check(torch.special.airy_ai, torch.cat([x, torch.linspace(-40, 110, 1501)]))
    check(torch.special.airy_ai, make((4, 6), torch.float32, low=-5, high=5, noncontiguous=True).t())
    check_raises_like_cpu(torch.special.airy_ai, make((3,), torch.bfloat16))
