"""Complex tensors on tpu: copies and casts, real/imag views (read and written
through), conjugate and negative views, complex/polar, elementwise math,
reductions, matrix products, indexing and random draws, each against the CPU."""
import math
import warnings

import pytest
import torch
from torch.testing import assert_close

from harness import check, check_raises_like_cpu, make


def cmake(shape, seed=0, dtype=torch.complex64, noncontiguous=False):
    part = torch.float32 if dtype == torch.complex64 else torch.float64
    return torch.complex(make(shape, part, seed=seed, noncontiguous=noncontiguous),
                         make(shape, part, seed=seed + 100, noncontiguous=noncontiguous))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4)], ids=str)
def test_round_trip_and_arithmetic(dtype, shape):
    x, y = cmake(shape, 1, dtype), cmake(shape, 2, dtype)
    check(lambda a: a.clone(), x)
    check(lambda a, b: a * b + a - b / (b.abs() + 1), x, y)
    check(lambda a, b: (a == b, a != a), x, y)


@pytest.mark.parametrize("src", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
def test_casts_to_and_from_complex(src):
    x = make((3, 4), src, seed=3)
    check(lambda a: a.cfloat(), x)
    check(lambda a: a.to(torch.complex128), x)
    z = cmake((3, 4), 4)
    with warnings.catch_warnings():  # "discards the imaginary part" (warned once per process)
        warnings.simplefilter("ignore")
        check(lambda a: a.to(src), z)


def test_real_imag_views_read_and_write():
    z = cmake((3, 4), 5, noncontiguous=True)
    check(lambda a: (a.real, a.imag, torch.view_as_real(a)), z)
    check(lambda a: torch.view_as_complex(torch.view_as_real(a).contiguous() * 2), z)

    def write(a):
        a = a.clone()
        a.real.mul_(3)
        a.imag[1:] = -1
        torch.view_as_real(a)[0, :, 0] += 10
        return a
    check(write, cmake((3, 4), 6))


def test_conjugate_and_negative_views():
    z = cmake((4,), 7)
    check(lambda a: a.conj(), z)
    check(lambda a: a.conj().resolve_conj(), z)
    check(lambda a: a.conj() * 2, z)
    check(lambda a: -a.conj(), z)
    check(lambda a: torch.conj_physical(a), z)
    check(lambda a: a.conj().imag, z)

    def write_into_conj(a):
        a = a.clone()
        a.conj().copy_(torch.ones(4, dtype=torch.complex64, device=a.device) * (1 + 2j))
        return a
    check(write_into_conj, z)


def test_complex_and_polar():
    a, b = make((2, 3), torch.float32, seed=8), make((3,), torch.float32, seed=9)
    check(torch.complex, a, b)  # broadcast
    check(torch.polar, a.abs(), b)
    check(torch.complex, a.double(), a.double())
    with pytest.raises(RuntimeError):
        torch.complex(a.to("tpu"), a.double().to("tpu"))  # mixed part dtypes: the CPU refuses too


@pytest.mark.parametrize("op", [torch.complex, torch.polar], ids=["complex", "polar"])
@pytest.mark.parametrize("dtypes", [(torch.bfloat16, torch.bfloat16), (torch.float32, torch.int64),
                                    (torch.complex64, torch.float32), (torch.float32, torch.float64),
                                    (torch.bool, torch.bool)], ids=str)
def test_complex_and_polar_part_dtypes_raise_like_cpu(op, dtypes):
    """The CPU's RuntimeError, in its words: parts of Half, Float or Double,
    both of one dtype. tpu raised the meta reference's AssertionError, and
    built complex numbers from bfloat16 parts."""
    a, b = make((3,), torch.float32, seed=8).abs().to(dtypes[0]), make((3,), torch.float32, seed=9).to(dtypes[1])
    e = check_raises_like_cpu(op, a, b)
    with pytest.raises(RuntimeError) as cpu:
        op(a, b)
    assert str(e).splitlines()[0] == str(cpu.value).splitlines()[0]


@pytest.mark.parametrize("dtypes,shapes", [((torch.int64, torch.bfloat16), ((4,), ())),
                                           ((torch.int32, torch.float64), ((4,), ())),
                                           ((torch.int8, torch.float16), ((), (4,))),
                                           ((torch.bool, torch.float32), ((4,), ())),
                                           ((torch.float16, torch.int64), ((4,), ())),
                                           ((torch.float32, torch.float64), ((4,), ()))], ids=str)
def test_ldexp_result_dtype_is_the_cpus(dtypes, shapes):
    """The CPU computes self * pow(2.0, other): a 0-d float exponent takes part
    in the product's promotion as a 0-d tensor (int64 by a 0-d bfloat16 gives
    bfloat16); tpu gave float32."""
    x = torch.tensor([3, -2, 0, 5][: shapes[0][0] if shapes[0] else 1]).reshape(shapes[0]).to(dtypes[0])
    e = torch.tensor([2, 1, -1, 0][: shapes[1][0] if shapes[1] else 1]).reshape(shapes[1]).to(dtypes[1])
    check(torch.ldexp, x, e)


# --- complex math, reductions, products, indexing (rules in csrc/ops/complex/
# and the TORCH_TPU_ACCEPTS_COMPLEX lists of the op families) ----------------

CDTYPES = [torch.complex64, torch.complex128]
UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos",
         "tan", "tanh", "sinh", "cosh", "sigmoid", "asin", "acos", "atan", "asinh", "acosh", "atanh", "sgn",
         "angle", "sinc", "isnan", "isinf", "logical_not"]


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary_math(name, dtype):
    fn = getattr(torch, name)
    for shape, noncontiguous in [((), False), ((0,), False), ((4, 6), True)]:
        check(fn, cmake(shape, 11, dtype, noncontiguous=noncontiguous))
    # Values near the branch cuts and zeros of the inverse functions.
    pts = torch.tensor([0, 1, -1, 2, -2, 0.5j, -3j, 1 + 1e-3j, -1 - 1e-3j, 1e-4 + 1e-4j, 20 + 5j, -20 - 5j], dtype=dtype)
    check(fn, pts)


SPECIAL = [complex(-math.inf, 0.5), complex(math.inf, -2), complex(3, math.inf), complex(-3, -math.inf),
           complex(math.inf, math.inf), complex(1e30, 1e30), complex(-1e20, 3), complex(0, math.inf),
           complex(-1e25, -0.0), complex(-2, -0.0), complex(-2, 0.0), complex(0.5, -0.0), complex(math.nan, 1),
           complex(0, 0), complex(-0.0, -0.0), complex(30, 2), complex(-95, 1)]


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
@pytest.mark.parametrize("name", ["atanh", "asinh", "asin", "acos", "atan", "acosh", "sqrt", "log", "exp", "tanh",
                                  "tan", "sin", "cos", "sinh", "cosh", "log1p", "expm1"])
def test_unary_math_special_values(name, dtype):
    # Infinities, huge values and signed zeros on the branch cuts: C99's values, as the CPU's std::complex.
    check(getattr(torch, name), torch.tensor(SPECIAL, dtype=dtype))


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_non_finite_classification_and_logic(dtype):
    z = torch.tensor([complex("nan"), complex(1, float("inf")), 0, 1j, complex(float("-inf"), 0)], dtype=dtype)
    check(lambda a: (a.isnan(), a.isinf(), a.isfinite(), a.logical_not()), z)
    w = cmake((5,), 12, dtype)
    check(lambda a, b: (torch.logical_and(a, b), torch.logical_or(a, b), torch.logical_xor(a, b)), z, w)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_magnitude_keeps_nan_and_inf_parts(dtype):
    # |z| is C99's hypot, as the CPU's std::abs: inf when a part is infinite,
    # else NaN when a part is NaN. (The CPU plugin's own complex abs gave
    # |1 + nan i| = 1.41 and |0 + nan i| = 0: a NaN silently lost.)
    nan, inf = math.nan, math.inf
    z = torch.tensor([complex(0, nan), complex(1, nan), complex(nan, 0), complex(nan, nan), complex(inf, nan),
                      complex(nan, -inf), complex(-inf, 2), complex(0, inf), complex(3, 4), complex(-0.0, 0),
                      complex(1e30, 1e30), complex(-1e-30, 1e-30)], dtype=dtype)
    check(lambda a: (a.abs(), a.sgn(), torch.angle(a)), z)
    check(lambda a: (a.abs(), a.sgn()), z[1::3])  # strided
    check(lambda a: (a.abs(), a.sgn()), z[0])  # 0-d
    # Norms see every element's magnitude: one NaN part makes the norm NaN.
    rows = z.reshape(4, 3)
    check(lambda a: (torch.linalg.vector_norm(a, 2, 1), torch.linalg.vector_norm(a, 1, 1),
                     torch.linalg.vector_norm(a, inf, 1), torch.linalg.vector_norm(a, -inf, 1), a.norm(dim=1)), rows)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_exp_and_quotients_at_infinities(dtype):
    # C99's e^(-inf + iy) = 0 and e^(+inf + iy) = inf + i NaN for a non-finite
    # y (XLA's exponential gave NaN), and quotients as the CPU's c10::complex
    # divides (Smith's scaling; XLA's divide gave 1 / (inf + inf i) = 0 where
    # the CPU gives NaN), in exp, exp2, sigmoid, silu, reciprocal, rsqrt, sgn;
    # expm1 as the CPU's formula (expm1(inf + 0i) = inf + i NaN, XLA's inf + 0i).
    nan, inf = math.nan, math.inf
    z = torch.tensor([complex(-inf, -inf), complex(-inf, inf), complex(-inf, nan), complex(inf, nan),
                      complex(inf, -inf), complex(inf, inf), complex(-inf, 1), complex(inf, 0), complex(nan, 0),
                      complex(0, inf), complex(3e38, 3e38), complex(-3e38, 0.5), complex(1e-30, 1e-30),
                      complex(0, 0), complex(1, 2)], dtype=dtype)
    fns = lambda a: (a.exp(), a.expm1(), torch.exp2(a), a.sigmoid(), torch.nn.functional.silu(a), a.reciprocal(),
                     a.rsqrt(), a.sgn())
    check(fns, z)
    check(fns, z[::2])  # strided


def assert_same_special_values(actual, expected):
    # NaN where the CPU has NaN, and the signs of its zeros and infinities
    # (of the zeros both give: a rounding residue such as acosh(0.5)'s real
    # part -4e-17 is assert_close's to judge).
    a, e = torch.view_as_real(actual.cpu()), torch.view_as_real(expected)
    assert_close(a, e, equal_nan=True)
    exact = ((e == 0) & (a == 0)) | e.isinf()
    assert torch.equal(a.signbit()[exact], e.signbit()[exact]), (actual, expected)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
@pytest.mark.parametrize("name", ["log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
                                  "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "exp", "expm1",
                                  "sgn", "reciprocal", "sigmoid"])
def test_unary_math_at_every_class_of_special_value(name, dtype):
    # Every pair of {+-0, finite, +-inf, NaN} parts: C99's values (Annex G),
    # as the CPU's std::complex functions give them, element by element. XLA's
    # formulas gave log(1 + i NaN) = 0.35 + i NaN, sqrt(-1.5 + i NaN) =
    # NaN + 1.35i and atanh(inf + i NaN) = 0 + i pi/2: a NaN silently lost.
    parts = [0.0, -0.0, 1.0, -1.5, 0.5, math.inf, -math.inf, math.nan]
    z = torch.tensor([complex(a, b) for a in parts for b in parts], dtype=dtype)
    fn = getattr(torch, name)
    expected = torch.stack([fn(z[i:i + 1])[0] for i in range(len(z))])  # the CPU's per-element path
    assert_same_special_values(fn(z.to("tpu")), expected)
    assert_same_special_values(fn(z.to("tpu")[::3]), expected[::3])  # strided


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_pow_at_every_class_of_special_value(dtype):
    # glibc's cpow, exp(y * log x) with C99's complex product (infinities
    # recovered): pow(0 + i NaN, 2) was 0, the CPU NaN + i NaN.
    parts = [0.0, -0.0, 1.0, -1.5, 0.5, math.inf, -math.inf, math.nan]
    z = torch.tensor([complex(a, b) for a in parts for b in parts], dtype=dtype)
    x, y = z.repeat_interleave(len(z)), z.repeat(len(z))
    assert_same_special_values(torch.pow(x.to("tpu"), y.to("tpu")), torch.pow(x, y))
    # ldexp(x, e) = x * 2 ** e: 2 ** (-inf + 0.5i) is 0 (XLA's power gave NaN)
    w = torch.tensor([1.5 - 2j] * len(z), dtype=dtype)
    assert_close(torch.ldexp(w.to("tpu"), z.to("tpu")).cpu(), torch.ldexp(w, z), equal_nan=True)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
@pytest.mark.parametrize("name", ["log1p", "atanh", "atan"])
def test_nan_and_infinite_parts_beside_extreme_finite_ones(name, dtype):
    # atanh(3e38 + i NaN) came out -0 + i NaN and log1p(3e38 + i NaN)
    # 88.9 + i NaN (C99 and the CPU: NaN + i NaN); log1p(1e-30 + i inf) was
    # inf + i pi/2, where the CPU's log u * z / (u - 1) gives NaN + i NaN.
    big = 3e38 if dtype == torch.complex64 else 1e308
    parts = [0.0, -0.0, 1.0, big, -big, 1e-30, -1e-30, math.inf, -math.inf, math.nan]
    z = torch.tensor([complex(a, b) for a in parts for b in parts], dtype=dtype)
    fn = getattr(torch, name)
    expected = torch.stack([fn(z[i:i + 1])[0] for i in range(len(z))])
    assert_same_special_values(fn(z.to("tpu")), expected)


def near_branch_points(dtype, n=4000):
    # z within 1e-12..1e-1 of +-1 and +-i, and with one part from 1e-30 to 1e-5:
    # where log(iz + sqrt(1 - z^2)) and its kin cancel
    g = torch.Generator().manual_seed(7)
    def u(*shape):
        return torch.rand(*shape, generator=g, dtype=torch.float64)
    step = 10 ** (-1 - 11 * u(n)) * torch.where(u(n) < 0.5, -1.0, 1.0).double()
    tiny = 10 ** (-5 - 25 * u(n)) * torch.where(u(n) < 0.5, -1.0, 1.0).double()
    centre = torch.where(u(n) < 0.5, -1.0, 1.0).double()
    on_real = torch.complex(centre + step, tiny)
    on_imag = torch.complex(tiny, centre + step)
    return torch.cat([on_real, on_imag, torch.complex(centre, tiny)]).to(dtype)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
@pytest.mark.parametrize("name", ["asin", "acos", "asinh", "acosh", "atanh", "atan", "log1p"])
def test_inverse_functions_near_their_branch_points(name, dtype):
    # Each part to a few ulps of the CPU's (glibc's, accurate there):
    # acos(0.9994 + 2e-17i) had an imaginary part of -2.3e-9 in complex64,
    # the CPU -5.6e-16; atanh(1 + 1e-30i) was inf, the CPU 34.9.
    z = near_branch_points(dtype)
    fn = getattr(torch, name)
    expected = fn(z)
    # the CPU's complex128 acos is pi/2 - asin z, off by an ulp of pi/2 where acos z is tiny
    atol = 5e-16 if (name == "acos" and dtype == torch.complex128) else 0
    rtol = 2e-6 if dtype == torch.complex64 else 1e-13
    assert_close(torch.view_as_real(fn(z.to("tpu")).cpu()), torch.view_as_real(expected), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_division_near_the_largest_finite_values(dtype):
    # Smith's scale 1 / (c + d * (d / c)) is subnormal past 2^126 (float32)
    # and XLA's CPU flushes it to zero: 3e38 / 3e38 came out 0, not 1.
    big = 3e38 if dtype == torch.complex64 else 1e308
    x = torch.tensor([complex(big, -big / 2), complex(big, 0), complex(-big / 3, big), complex(2e30, 1e30),
                      complex(1, 2), complex(big / 2, big / 2)], dtype=dtype)
    y = torch.tensor([complex(big, big / 4), complex(big * 0.7, -big / 10), complex(big / 5, -big), complex(1e30, -3e30),
                      complex(3, -1), complex(-big / 2, big / 3)], dtype=dtype)
    check(torch.div, x, y)
    check(torch.div, x[:1], y[:1])  # the CPU's per-element path
    check(lambda a, b: a / b, x[::2], y[1::2])  # strided
    check(lambda a: a / a, x)  # 1 + 0i each


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_addcdiv_special_values_divide_as_the_cpu(dtype):
    # addcdiv took XLA's complex quotient: 1 / (inf + inf j) gave 0, the CPU's NaN
    z = torch.tensor(SPECIAL, dtype=dtype)
    n = len(SPECIAL)
    num, den = z.repeat_interleave(n), z.repeat(n)
    check(lambda s, a, b: torch.addcdiv(s, a, b, value=2 - 1j), torch.ones_like(num), num, den)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_pow_silu_ldexp_lerp_addc(dtype):
    x, y, w = cmake((3, 4), 13, dtype), cmake((3, 4), 14, dtype) / 4, cmake((3, 4), 15, dtype)
    check(torch.pow, x, y)
    check(lambda a: (a ** 2, a ** 0.5, 2 ** a), x)
    check(torch.nn.functional.silu, x)
    check(torch.ldexp, x, torch.arange(12).reshape(3, 4) - 6)
    check(lambda a, b, c: (torch.lerp(a, b, 0.3), torch.lerp(a, b, c), torch.addcmul(a, b, c, value=2),
                           torch.addcdiv(a, b, c + 10)), x, y, w)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_pow_special_exponents(dtype):
    # cexp(y log x) with C99's infinities (the CPU's std::pow), and its
    # shortcuts for Scalar exponents 0, +-0.5, -1, 2, 3, -2.
    e = torch.tensor([-3.0, -0.0, 1.0, 1e30, 0.5, -math.inf, math.inf, math.nan, 2, -2, -1, -0.5, 3])
    for base in [1.5 - 0.5j, 0j, -2 - 0.0j, 0.3 + 0.1j]:
        check(lambda t: torch.pow(base, t), e.to(torch.float64 if dtype == torch.complex128 else torch.float32))
    x = torch.tensor([1.5 - 0.5j, 0j, -2 - 0.0j, 0.3 + 0.1j, -1e10 + 2j], dtype=dtype)
    for k in [0, 2, 3, -2, -1, 0.5, -0.5, 1.7, 1j, math.inf]:
        check(lambda t: t ** k, x)
    # at special values: x ** 1 and x ** True copy x (cpow lost digits of 3e38
    # parts), 1 ** y is 1 (cpow gave NaN for a NaN y), and 1/x, 1/(x*x),
    # 1/sqrt(x) are the CPU's quotients (XLA's gave 1 / (inf + i NaN) = 0)
    parts = [0.0, -0.0, 1.0, -1.5, math.inf, -math.inf, math.nan]
    z = torch.tensor([complex(a, b) for a in parts + [3e38] for b in parts + [3e38]], dtype=dtype)
    for k in [1, True, 0.5, 0, False]:
        assert_same_special_values(torch.pow(z.to("tpu"), k), torch.pow(z, k))
    z = torch.tensor([complex(a, b) for a in parts for b in parts], dtype=dtype)  # 1 / 3e38: subnormal, flushed
    for k in [-1, -2, -0.5]:
        assert_same_special_values(torch.pow(z.to("tpu"), k), torch.pow(z, k))
    for base in [1, 1 + 0j, True]:
        assert_same_special_values(torch.pow(base, z.to("tpu")), torch.pow(base, z))


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0, 3), (4, 5)], ids=str)
def test_reductions(dtype, shape):
    x = cmake(shape, 16, dtype)
    check(lambda a: (a.sum(), a.mean(), a.prod(), a.count_nonzero(), a.all(), a.any()), x)
    if len(shape) == 2:
        check(lambda a: (a.sum(0), a.mean(1, keepdim=True), a.prod(1), a.cumsum(1), a.cumprod(0)), x)
        check(lambda a: (a.var(0), a.std(1), torch.var_mean(a, 1), torch.std_mean(a, 0, correction=0)), x)
        # var(re) + var(im), as the CPU: with no divisor left, a constant part's
        # 0 / 0 makes the variance NaN (|z - mean|^2 / 0 gave inf).
        real_valued = torch.complex(x.real, torch.zeros_like(x.real))
        for corr in (5, 1e20):
            check(lambda a: (a.var(1, correction=corr), torch.std_mean(a, correction=corr)), real_valued)
        check(lambda a: (torch.logsumexp(a, 1), torch.linalg.vector_norm(a, 3, 1), torch.linalg.norm(a),
                         a.norm(1), a.norm(float("inf"), 1), torch.renorm(a, 2, 0, 5.0)), x)
        check(lambda a: (a.trace(), a.T.trace()), x)
    check(lambda a: (a.cumsum(0) if a.dim() else a.cumsum(0)), x)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_matrix_products(dtype):
    m, k, n = cmake((3, 5), 17, dtype), cmake((5, 4), 18, dtype), cmake((3, 4), 19, dtype)
    check(torch.mm, m, k)
    check(lambda a, b: a @ b, m.T.contiguous().T, k)  # non-contiguous lhs
    check(torch.mv, m, cmake((5,), 20, dtype))
    check(torch.dot, cmake((5,), 21, dtype), cmake((5,), 22, dtype))
    check(torch.vdot, cmake((5,), 21, dtype), cmake((5,), 22, dtype))
    check(lambda a, b, c: torch.addmm(c, a, b, beta=0.5 - 1j, alpha=2j), m, k, n)
    check(torch.bmm, cmake((2, 3, 5), 23, dtype), cmake((2, 5, 4), 24, dtype))
    check(lambda a, b, c: torch.addr(c, a, b, alpha=1 + 1j), cmake((3,), 25, dtype), cmake((4,), 26, dtype), n)
    check(lambda a, b: a.conj() @ b, m, k)  # conjugate view as an operand
    check(torch.linalg.cross, cmake((4, 3), 27, dtype), cmake((4, 3), 28, dtype))
    check(lambda a, b: torch.einsum("ij,jk->ik", a, b), m, k)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_select_index_scatter_pad(dtype):
    x, y = cmake((4, 5), 29, dtype), cmake((4, 5), 30, dtype)
    mask = make((4, 5), torch.bool, seed=31)
    idx = torch.tensor([3, 0, 3])
    check(lambda a, b, m: (torch.where(m, a, b), a.masked_fill(m, 2 - 1j), a[m], a[idx], a[:, idx]), x, y, mask)
    check(lambda a, i: (a.index_select(1, i), a.index_fill(0, i, 1j), a.take(i),
                        torch.gather(a, 1, i.expand(4, 3))), x, idx)

    def writes(a, b, i):
        a = a.clone()
        a[i] = b[:3]
        a.index_add_(0, i, b[:3], alpha=2)
        a.index_put_((i,), b[0], accumulate=True)
        a.scatter_add_(1, i.expand(4, 3), b[:, :3])
        a.put_(i, b[0, :3], accumulate=True)
        return a.index_copy(0, torch.tensor([1, 2], device=a.device), b[:2])
    check(writes, x, y, idx)
    check(lambda a: (torch.nn.functional.pad(a[None], (2, 1), mode="reflect"),
                     torch.nn.functional.pad(a[None], (1, 2), mode="replicate"), torch.eye(3, dtype=a.dtype,
                                                                                         device=a.device)), x)
    check(lambda a: torch.linspace(1 - 2j, 5 + 1j, 7, dtype=a.dtype, device=a.device), x)
    check(lambda a: torch.logspace(1 - 2j, 2 + 1j, 6, base=2.5, dtype=a.dtype, device=a.device), x)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_random_draws(dtype):
    # PyTorch draws complex values as view_as_real: each part N(mean, std^2 / 2)
    # for normal_, U(from, to) for uniform_.
    torch.manual_seed(0)
    z = torch.empty(20000, dtype=dtype, device="tpu").normal_(1.0, 2.0).cpu()
    parts = torch.view_as_real(z)
    assert_close(parts.mean(0), torch.tensor([1.0, 1.0], dtype=parts.dtype), atol=0.05, rtol=0)
    assert_close(parts.std(0), torch.full((2,), 2.0 / 2 ** 0.5, dtype=parts.dtype), atol=0.05, rtol=0)
    assert abs(float(torch.corrcoef(parts.T)[0, 1])) < 0.05
    u = torch.view_as_real(torch.empty(20000, dtype=dtype, device="tpu").uniform_(-1, 3).cpu())
    assert float(u.min()) >= -1 and float(u.max()) < 3
    assert_close(u.mean(0), torch.tensor([1.0, 1.0], dtype=u.dtype), atol=0.05, rtol=0)
    assert torch.randn(3, dtype=dtype, device="tpu").dtype == dtype


def well_conditioned(n, seed, dtype, batch=()):
    return cmake(batch + (n, n), seed, dtype) + 8 * torch.eye(n, dtype=dtype)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_lu_family(dtype):
    a = cmake((2, 4, 4), 32, dtype)
    b = cmake((2, 4, 3), 33, dtype)
    check(lambda m: torch.linalg.lu_factor(m), a)  # pivots by |re| + |im|, as LAPACK's izamax
    check(lambda m: torch.linalg.lu(m), a)
    check(lambda m: torch.linalg.lu_factor(m[0, :3]), a)  # non-square too
    for left, adjoint in [(True, False), (True, True), (False, False), (False, True)]:
        rhs = b if left else b.mT
        check(lambda m, r: torch.linalg.lu_solve(*torch.linalg.lu_factor(m), r, left=left, adjoint=adjoint), a, rhs)
    check(torch.linalg.inv, well_conditioned(4, 34, dtype, (3,)))
    check(lambda m: torch.linalg.inv_ex(m), a.mT)  # non-contiguous


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_solve_det_slogdet(dtype):
    a, b = well_conditioned(4, 35, dtype, (2,)), cmake((2, 4, 3), 36, dtype)
    check(torch.linalg.solve, a, b)
    check(torch.linalg.solve, a, cmake((2, 4), 37, dtype))  # a vector right side
    check(lambda m, r: torch.linalg.solve(m, r, left=False), a, b.mT)
    check(lambda m, r: torch.linalg.solve_ex(m, r), a.mT, b)
    z = cmake((3, 4, 4), 38, dtype)
    check(lambda m: (torch.linalg.det(m), torch.linalg.slogdet(m), torch.logdet(m @ m.mH)), z)
    sing = z.clone()
    sing[:, :, 1] = 0  # an exactly zero pivot, whatever the elimination order
    check(lambda m: (torch.linalg.det(m), torch.linalg.slogdet(m)), sing)
    check(lambda m: torch.linalg.det(m), torch.empty(2, 0, 0, dtype=dtype))
    with pytest.raises(RuntimeError, match="singular"):
        torch.linalg.solve(sing[:2].to("tpu"), b.to("tpu"))


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_cholesky_and_triangular(dtype):
    m = cmake((2, 4, 4), 39, dtype)
    hpd = m @ m.mH + torch.eye(4, dtype=dtype)  # Hermitian positive-definite
    b = cmake((2, 4, 3), 40, dtype)
    check(lambda h: (torch.linalg.cholesky(h), torch.linalg.cholesky(h, upper=True), torch.cholesky(h)), hpd)
    check(lambda h: torch.linalg.cholesky_ex(h), hpd)
    for upper in (False, True):
        check(lambda h, r: torch.cholesky_solve(r, torch.linalg.cholesky(h, upper=upper), upper=upper), hpd, b)
        check(lambda h: torch.cholesky_inverse(torch.linalg.cholesky(h, upper=upper), upper=upper), hpd)
    t = torch.tril(m) + 4 * torch.eye(4, dtype=dtype)
    check(lambda a, r: torch.linalg.solve_triangular(a, r, upper=False), t, b)
    check(lambda a, r: torch.linalg.solve_triangular(a.mT, r.mT, upper=True, left=False), t, b)
    check(lambda r, a: torch.triangular_solve(r, a, upper=False, transpose=True), b, t)
    with pytest.raises(RuntimeError, match="positive-definite"):
        torch.linalg.cholesky(-hpd.to("tpu"))
        torch.tpu.synchronize()


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_decompositions(dtype):
    # Eigen- and singular vectors are unique up to a phase per vector: compare
    # values and what the vectors reconstruct; QR follows LAPACK's reflectors.
    m = cmake((2, 5, 5), 41, dtype)
    herm = m + m.mH

    def eigh_parts(h):
        w, v = torch.linalg.eigh(h)
        return w, (v * w.to(h.dtype)[..., None, :]) @ v.mH, v.mH @ v, torch.linalg.eigvalsh(h, UPLO="U")
    check(eigh_parts, herm)
    for shape in [(5, 3), (3, 5), (2, 4, 4)]:
        a = cmake(shape, 42, dtype)

        def svd_parts(x):
            u, s, vh = torch.linalg.svd(x, full_matrices=False)
            return s, (u * s.to(x.dtype)[..., None, :]) @ vh, u.mH @ u, vh @ vh.mH, torch.linalg.svdvals(x)
        check(svd_parts, a, atol=1e-4 if dtype == torch.complex64 else None, rtol=1e-4 if dtype == torch.complex64 else None)
        check(lambda x: tuple(torch.linalg.qr(x)), a)
        check(lambda x: tuple(torch.linalg.qr(x, mode="complete")), a)
        check(lambda x: tuple(torch.geqrf(x)), a)
        h, tau = torch.geqrf(a)
        c = cmake(shape[:-1] + (2,), 43, dtype)
        for transpose in (False, True):
            check(lambda hh, tt, cc: torch.ormqr(hh, tt, cc, left=True, transpose=transpose), h, tau, c)
            check(lambda hh, tt, cc: torch.ormqr(hh, tt, cc.mT, left=False, transpose=transpose), h, tau, c)
