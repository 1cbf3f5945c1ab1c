"""torch.special functions (orthogonal polynomials, polygamma, zeta, i1/i1e,
entr) against the CPU: float32 and bfloat16 (where the CPU has the op), ints
and bool, empty/0-d shapes, non-contiguous inputs, special values."""
import math

import pytest
import torch

from harness import check, check_raises_like_cpu, make, to_tpu
from tiers import pairwise

POLYS = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p",
]
SHAPES = [(7,), (3, 5), (0, 4), ()]
NAN, INF = math.nan, math.inf


def poly_x():
    # Interval ends (special-cased by the CPU kernels), 0, 1/2 and values inside and outside [-1, 1].
    ends = torch.tensor([-1.0, 1.0, 0.0, 0.5, -0.5, 0.999, 1.2, -1.7, 3.0, NAN, INF])
    return torch.cat([ends, torch.linspace(-1.5, 1.5, 13)])


def poly_n():
    # Negative n, 0, 1, the recurrence, the trigonometric branch (n > 4/6/8), fractions (truncated),
    # and NaN/inf (the CPU's int64 cast: negative). Larger n inside (-1, 1) is ill-conditioned:
    # a 1-ulp difference in acos(x) becomes n ulps in the trigonometric form.
    return torch.tensor([-3.0, -0.5, 0.0, 0.7, 1.0, 2.0, 3.0, 4.9, 5.0, 7.0, 9.0, 10.0, 13.0, NAN, INF])


@pytest.mark.parametrize("name", POLYS)
def test_polynomial_grid(name):
    f = getattr(torch.special, name)
    check(f, poly_x()[:, None], poly_n()[None, :])


@pytest.mark.parametrize("name", ["hermite_polynomial_h", "hermite_polynomial_he"])
def test_hermite_limit(name):
    # The CPU returns NaN above n = 128 in float32.
    x = torch.tensor([0.5, -0.25, 0.0, 1.0])[:, None]
    check(getattr(torch.special, name), x, torch.tensor([30.0, 128.0, 129.0, 130.0])[None, :])


@pytest.mark.parametrize(*pairwise("name", POLYS, "dtype", [torch.float32, torch.int64, torch.bool], "shape", SHAPES))
def test_polynomial_dtypes(name, dtype, shape):
    f = getattr(torch.special, name)
    x = make(shape, dtype, low=-2, high=2)
    n = make(shape, dtype, seed=1, low=-2, high=9)
    check(f, x, n)


@pytest.mark.parametrize("name", POLYS)
def test_polynomial_noncontiguous_and_scalars(name):
    f = getattr(torch.special, name)
    x = make((4, 6), torch.float32, low=-1.5, high=1.5, noncontiguous=True)
    n = make((4, 6), torch.int64, seed=2, low=0, high=12, noncontiguous=True)
    check(f, x, n)
    check(f, x.t(), n.t())
    check(lambda t: f(t, 5), x)        # n_scalar
    check(lambda t: f(0.3, t), n)      # x_scalar


@pytest.mark.parametrize(*pairwise("n", [0, 1, 2, 3, 4],
                                  "dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], "shape", SHAPES))
def test_polygamma(n, dtype, shape):
    check(lambda t: torch.polygamma(n, t), make(shape, dtype, low=-9, high=9))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
def test_polygamma_special_values(n):
    x = torch.tensor([-8.7, -5.5, -2.5, -2.0, -1.0, -0.3, -0.0, 0.0, 1e-3, 0.5, 1.0, 10.0, 1e4, NAN, INF, -INF])
    check(lambda t: torch.polygamma(n, t), x)
    check(lambda t: torch.special.polygamma(n, t), make((3, 4), torch.float32, noncontiguous=True))


def test_polygamma_backward():
    x = make((11,), torch.float32, low=-4, high=6)
    for fn in (torch.digamma, lambda t: torch.polygamma(2, t)):
        leaf_c = x.clone().requires_grad_()
        leaf_t = to_tpu(x).requires_grad_()
        fn(leaf_c).sum().backward()
        fn(leaf_t).sum().backward()
        torch.testing.assert_close(leaf_t.grad.cpu(), leaf_c.grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_zeta(dtype, shape):
    check(torch.special.zeta, make(shape, dtype, low=0, high=6), make(shape, dtype, seed=1, low=-5, high=5))


def test_zeta_special_values():
    x = torch.tensor([1.0, 0.5, 2.0, 2.0, 2.5, 3.0, 4.0, 3.0, 2.0, NAN, 2.0, 2.0])
    q = torch.tensor([3.0, 2.0, 0.0, -2.0, -1.5, -1.5, -3.5, -8.7, 1e9, 1.0, NAN, INF])
    check(torch.special.zeta, x, q)
    check(lambda t: torch.special.zeta(t, 2.0), make((3, 4), torch.float32, low=1, high=5, noncontiguous=True))
    check(lambda t: torch.special.zeta(3.0, t), make((3, 4), torch.float32, low=-3, high=5, noncontiguous=True))


@pytest.mark.parametrize(*pairwise("name", ["i0", "i0e", "i1", "i1e", "entr", "modified_bessel_i0"],
                                  "dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], "shape", SHAPES))
def test_unary(name, dtype, shape):
    if name == "modified_bessel_i0" and dtype == torch.bfloat16:
        check_raises_like_cpu(torch.special.modified_bessel_i0, make(shape, dtype))
        return
    check(getattr(torch.special, name), make(shape, dtype, low=-20, high=20))


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e", "entr", "modified_bessel_i0"])
def test_unary_special_values(name):
    # 20 is where i0e switches from the power series to the asymptotic one; 88.7 is exp's overflow.
    x = torch.tensor([0.0, -0.0, 1e-30, 0.5, -0.5, 19.99, 20.0, 20.01, 30.0, -30.0, 88.7, 88.8, 90.0, -90.0,
                      100.0, 1e4, NAN, INF, -INF])
    check(getattr(torch.special, name), x)
    check(getattr(torch.special, name), make((4, 6), torch.float32, noncontiguous=True).t())


@pytest.mark.parametrize("name", POLYS + ["zeta"])
def test_half_not_implemented_like_cpu(name):
    # The CPU kernels exist for float32/float64 only.
    x = make((3,), torch.bfloat16)
    check_raises_like_cpu(getattr(torch.special, name), x, x)


def test_i_backward():
    # i1's derivative uses i0, i1e's uses i0e.
    x = make((9,), torch.float32, low=-12, high=12)
    for fn in (torch.special.i1, torch.special.i1e, torch.special.i0e, torch.i0):
        leaf_c = x.clone().requires_grad_()
        leaf_t = to_tpu(x).requires_grad_()
        fn(leaf_c).sum().backward()
        fn(leaf_t).sum().backward()
        torch.testing.assert_close(leaf_t.grad.cpu(), leaf_c.grad)


def test_i0e_bfloat16_like_cpu_and_backward():
    # The CPU evaluates bfloat16 i0e in bfloat16 steps; i0e's gradient i1e - sgn * i0e cancels, so
    # an ulp's difference there shows. Both branches (|x| <= 8 and above) and the switch.
    x = torch.tensor([-8.5, -1.765625, -4.3125, -2.40625, -7.9375, 8.0, 8.0625, 0.0, 0.5, 30.0, 200.0],
                     dtype=torch.bfloat16)
    got = check(torch.special.i0e, x)
    torch.testing.assert_close(got, torch.special.i0e(x), rtol=0, atol=0)
    leaf_c = x.clone().requires_grad_()
    leaf_t = to_tpu(x).requires_grad_()
    torch.special.i0e(leaf_c).sum().backward()
    torch.special.i0e(leaf_t).sum().backward()
    torch.testing.assert_close(leaf_t.grad.cpu(), leaf_c.grad)
