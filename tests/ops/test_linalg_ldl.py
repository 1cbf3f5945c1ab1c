"""linalg.ldl_factor_ex / ldl_factor (Bunch-Kaufman, LAPACK ?sytrf / ?hetrf, lower) and linalg.ldl_solve
(?sytrs / ?hetrs) against the CPU: LD close, pivots and info exactly equal."""
import pytest
import torch

from harness import check_raises_like_cpu, make, to_cpu, to_tpu
from tiers import tiered

DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]
FAST_DTYPES = [torch.float32, torch.complex128]  # CI; the long tier runs all (tiers.py)


def matrix(shape, dtype, seed=0, small_diag=False, noncontiguous=False):
    """A random (not necessarily symmetric: only the lower triangle is read) batch; `small_diag` shrinks the
    diagonal so Bunch-Kaufman takes 2x2 pivots and interchanges."""
    real = torch.float64 if dtype in (torch.float64, torch.complex128) else torch.float32
    a = make(shape, real, seed=seed, low=-1, high=1, noncontiguous=noncontiguous)
    if dtype.is_complex:
        a = torch.complex(a, make(shape, real, seed=seed + 1, low=-1, high=1))
        if noncontiguous:
            a = a.mT.contiguous().mT
    if small_diag and a.numel():
        a = a - torch.diag_embed(torch.diagonal(a, dim1=-2, dim2=-1) * 0.99)
    return a


def assert_factor(a, hermitian):
    LD, piv, info = torch.linalg.ldl_factor_ex(a, hermitian=hermitian)
    tLD, tpiv, tinfo = torch.linalg.ldl_factor_ex(to_tpu(a), hermitian=hermitian)
    tLD, tpiv, tinfo = to_cpu((tLD, tpiv, tinfo))
    assert tpiv.dtype == torch.int32 and tinfo.dtype == torch.int32
    assert torch.equal(tpiv, piv), (tpiv, piv)
    assert torch.equal(tinfo, info), (tinfo, info)
    torch.testing.assert_close(tLD, LD)
    return piv


SHAPES = [(1, 1), (2, 2), (5, 5), (3, 6, 6), (2, 2, 4, 4), (12, 12)]


@pytest.mark.parametrize("hermitian", [False, True], ids=["sym", "herm"])
@pytest.mark.parametrize("dtype", tiered(DTYPES, FAST_DTYPES), ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_factor(shape, dtype, hermitian):
    assert_factor(matrix(shape, dtype), hermitian)
    piv = assert_factor(matrix(shape, dtype, seed=3, small_diag=True), hermitian)
    if shape[-1] >= 5:
        assert (piv < 0).any()  # 2x2 blocks were taken


@pytest.mark.parametrize("shape", [(0, 0), (0, 3, 3), (2, 0, 0)], ids=str)
def test_factor_empty(shape):
    for dt in (torch.float32, torch.complex128):
        assert_factor(matrix(shape, dt), False)
        LD, piv = torch.linalg.ldl_factor(to_tpu(matrix(shape, dt)))
        assert LD.shape == shape and piv.shape == shape[:-1]


def test_factor_noncontiguous_and_views():
    assert_factor(matrix((3, 7, 7), torch.float32, noncontiguous=True, small_diag=True), False)
    assert_factor(matrix((2, 5, 5), torch.complex64, noncontiguous=True, small_diag=True), True)
    big = matrix((9, 9), torch.float64, seed=4, small_diag=True)
    LD, piv = torch.linalg.ldl_factor(big[1:7, 2:8].mT)
    tLD, tpiv = torch.linalg.ldl_factor(to_tpu(big)[1:7, 2:8].mT)
    assert torch.equal(tpiv.cpu(), piv)
    torch.testing.assert_close(tLD.cpu(), LD)


def test_factor_out():
    a = matrix((2, 5, 5), torch.float64, small_diag=True)
    LD, piv, info = torch.empty(2, 5, 5, dtype=torch.float64), torch.empty(2, 5, dtype=torch.int32), torch.empty(2, dtype=torch.int32)
    torch.linalg.ldl_factor_ex(a, out=(LD, piv, info))
    t = to_tpu((torch.empty_like(LD), torch.empty_like(piv), torch.empty_like(info)))
    torch.linalg.ldl_factor_ex(to_tpu(a), out=t)
    torch.testing.assert_close(t[0].cpu(), LD)
    assert torch.equal(t[1].cpu(), piv) and torch.equal(t[2].cpu(), info)


def test_factor_larger_blocked_path():
    # n >= 64: LAPACK's blocked ?sytrf; same pivots as the unblocked ?sytf2.
    assert_factor(matrix((70, 70), torch.float64, seed=5, small_diag=True), False)


def test_factor_singular():
    a = matrix((3, 5, 5), torch.float64)
    a[0] = 0.0  # info = 1
    a[1, :, 2] = 0.0
    a[1, 2, :] = 0.0  # a zero row/column 2: info = 3 (or later)
    piv = assert_factor(a, False)
    assert_factor(a.to(torch.complex128), True)
    _, _, info = torch.linalg.ldl_factor_ex(a)
    assert info[0] == 1 and info[1] > 0 and info[2] == 0
    # The CPU raises (a RuntimeError) for info > 0 in ldl_factor and in ldl_factor_ex(check_errors=True).
    check_raises_like_cpu(lambda t: torch.linalg.ldl_factor(t)[0].cpu(), a)
    check_raises_like_cpu(lambda t: torch.linalg.ldl_factor_ex(t, check_errors=True)[0].cpu(), a)
    del piv


def test_hermitian_ignores_imag_diagonal_and_upper():
    a = matrix((6, 6), torch.complex128, seed=8, small_diag=True)
    a = a + 5j * torch.eye(6)  # the imaginary part of the diagonal is ignored by ?hetrf
    assert_factor(a, True)
    assert_factor(a, False)


def solve_inputs(ld_shape, b_shape, dtype, hermitian, seed=0):
    a = matrix(ld_shape, dtype, seed=seed, small_diag=True)
    a = a + a.mH if hermitian else a + a.mT  # a genuine symmetric / Hermitian A
    LD, piv = torch.linalg.ldl_factor(a, hermitian=hermitian)
    return a, LD, piv, matrix(b_shape, dtype, seed=seed + 9)


@pytest.mark.parametrize("hermitian", [False, True], ids=["sym", "herm"])
@pytest.mark.parametrize("dtype", tiered(DTYPES, FAST_DTYPES), ids=str)
@pytest.mark.parametrize("shapes", [((5, 5), (5, 3)), ((2, 6, 6), (2, 6, 2)), ((2, 5, 5), (5, 5)),
                                    ((1, 1), (1, 4)), ((3, 4, 4), (1, 4, 1))], ids=str)
def test_solve(shapes, dtype, hermitian):
    a, LD, piv, B = solve_inputs(*shapes, dtype, hermitian)
    X = torch.linalg.ldl_solve(LD, piv, B, hermitian=hermitian)
    tX = torch.linalg.ldl_solve(to_tpu(LD), to_tpu(piv), to_tpu(B), hermitian=hermitian).cpu()
    torch.testing.assert_close(tX, X)
    # and it solves A X = B
    tol = 1e-3 if dtype in (torch.float32, torch.complex64) else 1e-8
    torch.testing.assert_close(a @ tX, B.expand_as(X), atol=tol, rtol=tol)


def test_solve_tpu_factor_and_int64_pivots():
    a, _, _, B = solve_inputs((3, 7, 7), (3, 7, 2), torch.complex64, False, seed=2)
    tLD, tpiv = torch.linalg.ldl_factor(to_tpu(a))
    LD, piv = torch.linalg.ldl_factor(a)
    X = torch.linalg.ldl_solve(LD, piv.long(), B)
    torch.testing.assert_close(torch.linalg.ldl_solve(tLD, tpiv.long(), to_tpu(B)).cpu(), X)


def test_solve_noncontiguous_and_empty():
    a, LD, piv, B = solve_inputs((2, 6, 6), (2, 6, 3), torch.float64, False, seed=4)
    LDn = LD.mT.contiguous().mT
    Bn = make((2, 3, 6), torch.float64, seed=1).mT
    X = torch.linalg.ldl_solve(LDn, piv, Bn)
    torch.testing.assert_close(torch.linalg.ldl_solve(to_tpu(LDn), to_tpu(piv), to_tpu(Bn)).cpu(), X)
    for ld_shape, b_shape in [((0, 0), (0, 5)), ((0, 2, 2), (2, 5)), ((0, 2, 2), (0, 2, 5))]:
        LD0, piv0 = torch.zeros(ld_shape), torch.zeros(ld_shape[:-1], dtype=torch.int32)
        X = torch.linalg.ldl_solve(to_tpu(LD0), to_tpu(piv0), to_tpu(torch.zeros(b_shape)))
        assert X.shape == torch.linalg.ldl_solve(LD0, piv0, torch.zeros(b_shape)).shape


def test_errors():
    check_raises_like_cpu(lambda t: torch.linalg.ldl_factor_ex(t)[0].cpu(), torch.randn(3, 4))
    check_raises_like_cpu(lambda t: torch.linalg.ldl_factor_ex(t)[0].cpu(), torch.randn(3))
    check_raises_like_cpu(lambda t: torch.linalg.ldl_factor_ex(t)[0].cpu(), torch.ones(3, 3, dtype=torch.int64))
    check_raises_like_cpu(lambda t: torch.linalg.ldl_factor_ex(t)[0].cpu(), torch.ones(3, 3, dtype=torch.float16))
    _, LD, piv, B = solve_inputs((4, 4), (4, 2), torch.float32, False)
    check_raises_like_cpu(lambda l, p, b: torch.linalg.ldl_solve(l, p, b).cpu(), *[LD, piv.float(), B])
    check_raises_like_cpu(lambda l, p, b: torch.linalg.ldl_solve(l, p, b).cpu(), *[LD, piv, B.double()])
    check_raises_like_cpu(lambda l, p, b: torch.linalg.ldl_solve(l, p, b).cpu(), *[LD, piv[:3], B])
    check_raises_like_cpu(lambda l, p, b: torch.linalg.ldl_solve(l, p, b).cpu(), *[LD, piv, B[:3]])
    check_raises_like_cpu(lambda l, p, b: torch.linalg.ldl_solve(l, p, b).cpu(), *[LD, piv, B[:, 0]])
    check_raises_like_cpu(lambda l, p, b: torch.linalg.ldl_solve(l, p, b).cpu(), *[LD.half(), piv, B.half()])


def test_no_autograd():
    a = matrix((4, 4), torch.float64, small_diag=True)
    check_raises_like_cpu(lambda t: torch.linalg.ldl_factor_ex(t.requires_grad_())[0].sum().backward(),
                          a)


NONFINITE = [[[float("nan"), 1.0], [3e38, 0.0]], [[float("nan"), 0.0], [0.0, 1.0]], [[1.0, 0.0], [float("nan"), 1.0]],
             [[float("inf"), 0.0], [1.0, 1.0]], [[-float("inf"), -1.0, 1.0, -float("inf")]] * 4,
             [[5.0, 0.0, 0.0], [1.0, float("nan"), 0.0], [float("nan"), 3.0, 1.0]],
             [[0.1, 0, 0, 0], [1, 0.1, 0, 0], [3, 2, 1, 0], [float("nan"), 1, 1, 1]]]


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128], ids=str)
@pytest.mark.parametrize("m", range(len(NONFINITE)))
def test_factor_nonfinite(m, dtype):
    # The CPU's (MKL's) NaN / inf conventions: i?amax picks the first NaN, Fortran MAX keeps its second
    # argument on NaN, ?syr skips alpha = 0 and x_j = 0, the complex routines stop at a NaN diagonal.
    a = torch.tensor(NONFINITE[m]).to(dtype)
    for hermitian in (False, True):
        LD, piv, info = torch.linalg.ldl_factor_ex(a, hermitian=hermitian)
        tLD, tpiv, tinfo = to_cpu(tuple(torch.linalg.ldl_factor_ex(to_tpu(a), hermitian=hermitian)))
        assert torch.equal(tpiv, piv) and torch.equal(tinfo, info)
        torch.testing.assert_close(tLD, LD, equal_nan=True)
