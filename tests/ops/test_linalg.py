"""Cholesky, triangular solves, LU factor/unpack, cross products and matrix_exp against the CPU (LAPACK)."""
import pytest
import torch

from harness import check, check_raises_like_cpu, make, to_tpu

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # torch.cholesky / triangular_solve deprecations

SHAPES = [(4, 4), (3, 5, 5), (2, 1, 3, 3), (1, 1), (0, 0), (0, 3, 3), (2, 0, 0)]


def spd(shape, seed=0, noncontiguous=False):
    """A well-conditioned symmetric positive-definite batch."""
    n = shape[-1]
    a = make(shape, torch.float32, seed=seed, low=-1, high=1)
    a = a @ a.mT + n * torch.eye(n)
    if noncontiguous:
        a = a.mT  # symmetric, so the same values in a transposed layout
    return a


def tri(shape, upper, seed=0, noncontiguous=False):
    """A well-conditioned triangular batch (unit-ish diagonal plus small off-diagonal)."""
    n = shape[-1]
    a = make(shape, torch.float32, seed=seed, low=-0.5, high=0.5, noncontiguous=noncontiguous)
    a = a + 2 * torch.eye(n)
    return a.triu() if upper else a.tril()


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex(shape, upper):
    a = spd(shape)
    check(lambda t: tuple(torch.linalg.cholesky_ex(t, upper=upper)), a)
    check(lambda t: torch.linalg.cholesky(t, upper=upper), a)
    check(lambda t: torch.cholesky(t, upper=upper), a)


def test_cholesky_noncontiguous_and_lower_triangle_only():
    a = spd((3, 4, 4), noncontiguous=True)
    check(torch.linalg.cholesky, a)
    # Only the lower triangle is read, like LAPACK: garbage above is ignored.
    junk = a + torch.triu(torch.full((4, 4), 100.0), 1)
    check(torch.linalg.cholesky, junk)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_reads_the_triangle_upper_names(upper):
    # LAPACK's potrf reads the lower triangle, or the upper one for upper=True:
    # junk in the other triangle is ignored, junk in this one is read.
    a = spd((2, 4, 4))
    for junk in (torch.triu(torch.full((4, 4), 100.0), 1), torch.tril(torch.full((4, 4), 100.0), -1)):
        check(lambda t: torch.linalg.cholesky_ex(t, upper=upper).info, a + junk)
    ignored = torch.tril(torch.full((4, 4), 100.0), -1) if upper else torch.triu(torch.full((4, 4), 100.0), 1)
    check(lambda t: torch.linalg.cholesky(t, upper=upper), a + ignored)
    check(lambda t: torch.cholesky(t, upper=upper), a + ignored)


def test_cholesky_not_positive_definite():
    a = spd((2, 4, 4))
    a[1, 2, 2] = -100.0
    # info is 0 for the good matrix and the failing minor's order for the other, as on CPU
    # (tests/ops/test_linalg_errors.py has the errors' words and more shapes).
    _, info = torch.linalg.cholesky_ex(to_tpu(a))
    torch.testing.assert_close(info.cpu(), torch.linalg.cholesky_ex(a).info)
    check_raises_like_cpu(torch.linalg.cholesky, a)
    check_raises_like_cpu(lambda t: torch.linalg.cholesky_ex(t, check_errors=True)[0].cpu(), a)


@pytest.mark.parametrize("op", [lambda t: torch.linalg.cholesky(t), lambda t: torch.cholesky_inverse(t)])
def test_cholesky_bad_dtype(op):
    check_raises_like_cpu(op, torch.eye(3, dtype=torch.bfloat16))
    check_raises_like_cpu(op, torch.eye(3, dtype=torch.bfloat16))


@pytest.mark.parametrize("a_shape,b_shape", [((4, 4), (4, 2)), ((3, 5, 5), (3, 5, 1)), ((5, 5), (2, 5, 3)),
                                             ((2, 1, 3, 3), (4, 3, 2)), ((0, 3, 3), (0, 3, 2)),
                                             ((3, 3), (3, 0)), ((0, 0), (0, 4))], ids=str)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular(a_shape, b_shape, upper, left, unit):
    a = tri(a_shape, upper)
    b = make(b_shape, torch.float32, seed=1)
    if not left:
        b = b.mT
    check(lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper, left=left, unitriangular=unit), a, b)


def test_solve_triangular_noncontiguous():
    a = tri((2, 4, 4), True, noncontiguous=True)
    b = make((2, 4, 3), torch.float32, seed=1, noncontiguous=True)
    check(lambda x, y: torch.linalg.solve_triangular(x, y, upper=False), a.mT, b)
    check(lambda x, y: torch.linalg.solve_triangular(x[..., 1:, 1:], y[..., 1:, :], upper=True), a, b)


@pytest.mark.parametrize("a_shape,b_shape", [((4, 4), (4, 2)), ((3, 5, 5), (3, 5, 1)), ((5, 5), (2, 5, 3)),
                                             ((0, 3, 3), (0, 3, 2))], ids=str)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_triangular_solve(a_shape, b_shape, upper, transpose, unit):
    a = tri(a_shape, upper)
    b = make(b_shape, torch.float32, seed=1)
    check(lambda y, x: tuple(torch.triangular_solve(y, x, upper=upper, transpose=transpose, unitriangular=unit)),
          b, a)


@pytest.mark.parametrize("a_shape,b_shape", [((4, 4), (4, 2)), ((3, 5, 5), (3, 5, 1)), ((5, 5), (2, 5, 3)),
                                             ((2, 1, 3, 3), (4, 3, 2)), ((0, 3, 3), (0, 3, 2))], ids=str)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve(a_shape, b_shape, upper):
    f = torch.linalg.cholesky(spd(a_shape), upper=upper)
    b = make(b_shape, torch.float32, seed=1, noncontiguous=True)
    check(lambda y, x: torch.cholesky_solve(y, x, upper=upper), b, f)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse(shape, upper):
    f = torch.linalg.cholesky(spd(shape), upper=upper)
    check(lambda x: torch.cholesky_inverse(x, upper=upper), f)


CROSS_DTYPES = [torch.float32, torch.bfloat16, torch.int64, torch.int32]


@pytest.mark.parametrize("dtype", CROSS_DTYPES, ids=str)
@pytest.mark.parametrize("x_shape,y_shape,dim", [((3,), (3,), -1), ((4, 3), (4, 3), -1), ((3, 5), (3, 5), 0),
                                                 ((2, 3, 4), (1, 3, 1), 1), ((0, 3), (0, 3), 1),
                                                 ((5, 3), (1, 3), -1)], ids=str)
def test_cross(dtype, x_shape, y_shape, dim):
    x = make(x_shape, dtype)
    y = make(y_shape, dtype, seed=1, noncontiguous=True)
    check(lambda a, b: torch.linalg.cross(a, b, dim=dim), x, y)
    check(lambda a, b: torch.cross(a, b, dim=dim), x, y)


def test_cross_errors():
    check_raises_like_cpu(torch.linalg.cross, torch.ones(4, 2), torch.ones(4, 2))
    check_raises_like_cpu(lambda a, b: torch.linalg.cross(a, b, dim=3), torch.ones(3),
                          torch.ones(3))
    check_raises_like_cpu(torch.linalg.cross, torch.ones(3, dtype=torch.bool),
                          torch.ones(3, dtype=torch.bool))


@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (6, 4), (4, 6), (2, 3, 1, 1), (0, 0), (2, 0, 0), (0, 3, 3)],
                         ids=str)
def test_lu_factor(shape):
    a = make(shape, torch.float32, noncontiguous=True)
    check(lambda t: tuple(torch.linalg.lu_factor_ex(t)), a)
    check(lambda t: tuple(torch.linalg.lu_factor(t)), a)


def test_lu_factor_singular():
    # A zero column: LAPACK skips it, leaves it zero and reports info = its index + 1.
    a = make((2, 4, 4), torch.float32)
    a[1, :, 1] = 0
    got = check(lambda t: tuple(torch.linalg.lu_factor_ex(t)), a)
    assert got[2].tolist() == [0, 2]
    check_raises_like_cpu(lambda t: torch.linalg.lu_factor(t)[0].cpu(), a)


def test_lu_factor_bad_input():
    check_raises_like_cpu(lambda t: torch.linalg.lu_factor(t, pivot=False), torch.eye(3))
    check_raises_like_cpu(torch.linalg.lu_factor, torch.eye(3, dtype=torch.bfloat16))


@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (6, 4), (4, 6), (1, 1), (0, 0), (2, 0, 0), (0, 3, 3)], ids=str)
@pytest.mark.parametrize("unpack", [(True, True), (True, False), (False, True)], ids=str)
def test_lu_unpack(shape, unpack):
    lu, piv = torch.linalg.lu_factor(make(shape, torch.float32, seed=3))
    check(lambda x, p: tuple(torch.lu_unpack(x, p, *unpack)), lu, piv)


@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 6)], ids=str)
def test_lu(shape):
    check(lambda t: tuple(torch.lu_unpack(*torch.linalg.lu_factor(t))),
          make(shape, torch.float32, seed=4, noncontiguous=True))


@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 6), (0, 0), (2, 0, 3)], ids=str)
def test_linalg_lu(shape):
    check(lambda t: tuple(torch.linalg.lu(t)), make(shape, torch.float32, seed=5, noncontiguous=True))


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128, torch.float32], ids=str)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (0, 3, 3)], ids=str)
def test_matrix_exp(dtype, shape):
    # Scaling and squaring with the CPU's degree-18 scheme; large norms (up to
    # 9 per entry) take several squarings. float32 is compared normwise: its
    # gemm rounding, amplified by the squarings, differs from the CPU's BLAS.
    part = torch.float64 if dtype == torch.complex128 else dtype
    a = make(shape, part, low=-9, high=9)
    if dtype.is_complex:
        a = torch.complex(a, make(shape, part, seed=1, low=-3, high=3))
    if dtype == torch.float32:
        got, want = torch.linalg.matrix_exp(to_tpu(a)).cpu(), torch.linalg.matrix_exp(a.double())
        err = torch.linalg.matrix_norm(got.double() - want)
        assert bool((err <= 1e-5 * torch.linalg.matrix_norm(want).clamp(min=1)).all())
    else:
        check(torch.linalg.matrix_exp, a)
    check(torch.linalg.matrix_exp, make(shape, part, low=-0.1, high=0.1))  # small norms: no squaring
    grads = []
    for dev in ("cpu", "tpu"):
        x = make((3, 3), torch.float64, low=-2, high=2).to(dev).requires_grad_()
        torch.linalg.matrix_exp(x).sum().backward()
        grads.append(x.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0])
