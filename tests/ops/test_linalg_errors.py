"""The value-dependent side of the LAPACK ops against the CPU: the errors its
kernels raise for a matrix that is singular, not positive-definite or holds
NaN (same exception type and the same words, the batch element and the minor
or diagonal entry included), the info values they return, and what NaN and
infinite entries give (LU pivoting as LAPACK's idamax, which skips NaN)."""
import math

import pytest
import torch

from harness import make

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # torch.cholesky's deprecation

NAN, INF = math.nan, math.inf


def rand(shape, dtype, seed):
    """Uniform in [-1, 1]; complex from two real draws."""
    if dtype.is_complex:
        real = torch.float64 if dtype == torch.complex128 else torch.float32
        return torch.complex(make(shape, real, seed=seed, low=-1, high=1), make(shape, real, seed=seed + 100, low=-1, high=1))
    return make(shape, dtype, seed=seed, low=-1, high=1)


def not_pd(n=4, batch=(), at=2, dtype=torch.float32):
    """A symmetric matrix (batch) whose leading minors are positive-definite up to order `at` only."""
    x = rand(batch + (n, n), dtype, seed=1)
    a = x @ x.mH + n * torch.eye(n, dtype=dtype)
    a[(..., at - 1, at - 1)] = -100.0
    return a


def singular(n=3, batch=(), col=1):
    a = make(batch + (n, n), torch.float32, seed=2)
    a[..., :, col] = 0  # an exactly zero column: LAPACK's info is col + 1
    return a


def batch_with_bad_element(bad):
    """Element 1 of a batch of two is `bad`, element 0 is fine (the CPU names the batch element)."""
    good = torch.eye(bad.shape[-1], dtype=bad.dtype) * 2
    return torch.stack([good, bad])


def with_nan(a, at=(1, 1)):
    a = a.clone()
    a[(...,) + at] = NAN
    return a


def spd(n, dtype=torch.float32):
    x = rand((n, n), dtype, seed=3)
    return x @ x.mH + n * torch.eye(n, dtype=dtype)


def solve_rhs(a):
    return torch.ones(a.shape[:-1], dtype=a.dtype, device=a.device)


ERROR_CASES = {
    "linalg.cholesky": (torch.linalg.cholesky, not_pd()),
    "linalg.cholesky batch": (torch.linalg.cholesky, not_pd(batch=(3,), at=3)),
    "linalg.cholesky upper": (lambda a: torch.linalg.cholesky(a, upper=True), not_pd(at=1)),
    "cholesky_ex(check_errors)": (lambda a: torch.linalg.cholesky_ex(a, check_errors=True).L, not_pd(n=5, at=4)),
    "cholesky_ex(check_errors) complex batch": (lambda a: torch.linalg.cholesky_ex(a, check_errors=True).L,
                                                batch_with_bad_element(not_pd(dtype=torch.complex64))),
    "cholesky_ex(check_errors) NaN": (lambda a: torch.linalg.cholesky_ex(a, check_errors=True).L,
                                      with_nan(spd(4), (2, 2))),
    "torch.cholesky": (torch.cholesky, not_pd()),
    "torch.cholesky batch upper": (lambda a: torch.cholesky(a, upper=True), batch_with_bad_element(not_pd(at=3))),
    "linalg.inv": (torch.linalg.inv, singular()),
    "inv_ex(check_errors)": (lambda a: torch.linalg.inv_ex(a, check_errors=True).inverse, singular(col=2)),
    "inv_ex(check_errors) batch": (lambda a: torch.linalg.inv_ex(a, check_errors=True).inverse,
                                   batch_with_bad_element(singular())),
    "lu_factor": (lambda a: torch.linalg.lu_factor(a).LU, singular()),
    "lu_factor_ex(check_errors)": (lambda a: torch.linalg.lu_factor_ex(a, check_errors=True).LU, singular(col=2)),
    "lu_factor_ex(check_errors) batch": (lambda a: torch.linalg.lu_factor_ex(a, check_errors=True).LU,
                                         batch_with_bad_element(singular())),
    "linalg.solve": (lambda a: torch.linalg.solve(a, solve_rhs(a)), singular()),
    "solve_ex(check_errors)": (lambda a: torch.linalg.solve_ex(a, solve_rhs(a), check_errors=True).result,
                               batch_with_bad_element(singular())),
    "cholesky_inverse of a zero diagonal": (torch.cholesky_inverse, torch.tensor([[2.0, 0.0], [1.0, 0.0]])),
    "cholesky_inverse batch": (torch.cholesky_inverse, batch_with_bad_element(torch.tensor([[0.0, 0.0], [1.0, 2.0]]))),
    "svd of NaN": (lambda a: torch.linalg.svd(a).S, with_nan(make((3, 4), torch.float32))),
    "svd of NaN batch": (lambda a: torch.linalg.svd(a, full_matrices=False).U,
                         batch_with_bad_element(with_nan(make((3, 3), torch.float32)))),
    "svdvals of NaN": (torch.linalg.svdvals, with_nan(make((4, 3), torch.float64))),
    "pinv of NaN": (torch.linalg.pinv, with_nan(make((3, 3), torch.float32))),
    "matrix_rank of NaN": (torch.linalg.matrix_rank, with_nan(make((3, 3), torch.float32))),
    "matrix_norm(2) of NaN": (lambda a: torch.linalg.matrix_norm(a, 2), with_nan(make((3, 3), torch.float32))),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_lapack_errors_raise_like_the_cpu(case):
    fn, a = ERROR_CASES[case]
    with pytest.raises(Exception) as cpu:
        fn(a)
    with pytest.raises(Exception) as tpu:  # raised at the synchronization (an asynchronous check)
        fn(a.to("tpu")).cpu()
    assert type(tpu.value) is type(cpu.value), f"tpu {tpu.value!r}, CPU {cpu.value!r}"
    assert str(tpu.value).splitlines()[0] == str(cpu.value).splitlines()[0]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 17, 33])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64], ids=str)
def test_cholesky_info_is_the_first_minor_that_fails(n, dtype):
    # A batch of 2n: element k fails at leading minor k + 1 (by a negative
    # pivot, or by NaN), the last one factors. The CPU's potrf tells which minor;
    # tpu's factor is all NaN when it fails, so its info must be found another way.
    good = spd(n, dtype)
    mats = []
    for k in range(n):
        neg = good.clone()
        neg[k, k] = -1.0
        mats += [neg, with_nan(good, (k, k))]
    a = torch.stack(mats + [good])
    for upper in (False, True):
        expect = torch.linalg.cholesky_ex(a, upper=upper)
        got = torch.linalg.cholesky_ex(a.to("tpu"), upper=upper)
        assert got.info.dtype == torch.int32
        torch.testing.assert_close(got.info.cpu(), expect.info)
        torch.testing.assert_close(got.L[-1].cpu(), expect.L[-1])  # the one that factors


def test_cholesky_info_0d_and_empty():
    a = not_pd(n=3, at=2)
    torch.testing.assert_close(torch.linalg.cholesky_ex(a.to("tpu")).info.cpu(), torch.tensor(2, dtype=torch.int32))
    for shape in [(0, 3, 3), (2, 0, 0)]:
        got = torch.linalg.cholesky_ex(torch.zeros(shape, device="tpu"), check_errors=True)
        torch.testing.assert_close(got.info.cpu(), torch.linalg.cholesky_ex(torch.zeros(shape)).info)


def test_check_errors_false_returns_info_without_raising():
    a = batch_with_bad_element(singular())
    got = torch.linalg.inv_ex(a.to("tpu"))
    torch.testing.assert_close(got.info.cpu(), torch.linalg.inv_ex(a).info)
    got = torch.linalg.lu_factor_ex(a.to("tpu"))
    torch.testing.assert_close(got.info.cpu(), torch.linalg.lu_factor_ex(a).info)
    torch.tpu.synchronize()  # nothing raised later either


NAN_PLACES = [(0, 0), (1, 1), (2, 0), (0, 2), (3, 3)]


@pytest.mark.parametrize("at", NAN_PLACES, ids=str)
def test_lu_family_with_nan_like_the_cpu(at):
    # LAPACK's pivot search (idamax) skips a NaN unless it is the first
    # candidate; the elimination then carries it where the CPU's does.
    a = with_nan(make((4, 4), torch.float32, seed=4), at)
    for fn in [lambda t: tuple(torch.linalg.lu_factor_ex(t)), lambda t: tuple(torch.linalg.lu(t)),
               torch.linalg.det, lambda t: tuple(torch.linalg.slogdet(t)), lambda t: torch.linalg.inv_ex(t).inverse,
               lambda t: torch.linalg.solve_ex(t, solve_rhs(t)).result]:
        expect, got = fn(a), fn(a.to("tpu"))
        expect, got = (expect, got) if isinstance(expect, tuple) else ((expect,), (got,))
        for e, g in zip(expect, got):
            torch.testing.assert_close(g.cpu(), e, equal_nan=True)


def test_lu_pivot_rules_with_nan():
    # First candidate NaN: kept as the pivot. A later NaN: skipped. All NaN: the first.
    for a in ([[NAN, 1.0], [2.0, 3.0]], [[1.0, 1.0], [NAN, 3.0]], [[NAN, 1.0], [NAN, 3.0]], [[0.0, 1.0], [NAN, 3.0]]):
        a = torch.tensor(a)
        expect, got = torch.linalg.lu_factor_ex(a), torch.linalg.lu_factor_ex(a.to("tpu"))
        for e, g in zip(expect, got):
            torch.testing.assert_close(g.cpu(), e, equal_nan=True)


def test_exactly_singular_matrix_keeps_its_zero_pivot():
    # The elimination's 4 - (2/3) * 6 is 0 with the product rounded (LAPACK)
    # and -1.2e-7 as one fused multiply-add (what XLA's CPU backend emits
    # unless told otherwise): det would be 3.6e-7 and solve would not raise.
    a = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    for m in (a, a.mT.contiguous(), torch.stack([a.mT, a]), a.double().mT):
        for fn in (lambda t: tuple(torch.linalg.lu_factor_ex(t)), torch.linalg.det,
                   lambda t: tuple(torch.linalg.slogdet(t))):
            expect, got = fn(m), fn(m.to("tpu"))
            expect, got = (expect, got) if isinstance(expect, tuple) else ((expect,), (got,))
            for e, g in zip(expect, got):
                torch.testing.assert_close(g.cpu(), e, atol=0, rtol=0)
        with pytest.raises(torch.linalg.LinAlgError) as cpu:
            torch.linalg.solve(m, solve_rhs(m))
        with pytest.raises(torch.linalg.LinAlgError) as tpu:
            torch.linalg.solve(m.to("tpu"), solve_rhs(m.to("tpu"))).cpu()
        assert str(tpu.value) == str(cpu.value)


def test_slogdet_sign_of_nan_and_inf():
    # The CPU's sign of a real determinant is (d > 0) - (d < 0): 0 for NaN, 1 for +inf.
    for a in (with_nan(make((3, 3), torch.float32)), torch.tensor([[INF, 0.0], [0.0, 1.0]]),
              torch.tensor([[-INF, 0.0], [0.0, 1.0]])):
        expect, got = torch.linalg.slogdet(a), torch.linalg.slogdet(a.to("tpu"))
        torch.testing.assert_close(got.sign.cpu(), expect.sign, equal_nan=True)
        torch.testing.assert_close(got.logabsdet.cpu(), expect.logabsdet, equal_nan=True)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3)], ids=str)
def test_svd_of_an_infinite_entry_is_nan(shape):
    # LAPACK gives NaN singular values for a matrix with an infinite entry (and
    # no error); the Jacobi solver gave finite ones (zeros) before.
    a = make(shape, torch.float32, seed=5)
    a[(0,) * (len(shape) - 2) + (0, 2)] = INF
    expect, got = torch.linalg.svdvals(a), torch.linalg.svdvals(a.to("tpu")).cpu()
    assert torch.equal(got.isnan(), expect.isnan()), f"tpu {got}, CPU {expect}"
    finite = ~expect.isnan().any(-1)
    torch.testing.assert_close(got[finite], expect[finite])
    if a.dim() == 2:  # (LAPACK's gesdd with vectors gives up on the batched one: error code 2)
        torch.testing.assert_close(torch.linalg.pinv(a.to("tpu")).cpu(), torch.linalg.pinv(a), equal_nan=True)


def test_checks_hold_in_compiled_and_fused_programs():
    a = batch_with_bad_element(not_pd(at=3))
    with pytest.raises(torch.linalg.LinAlgError) as cpu:
        torch.linalg.cholesky_ex(a, check_errors=True)
    f = torch.compile(lambda t: torch.linalg.cholesky_ex(t, check_errors=True).L * 2, backend="tpu", fullgraph=True)
    with pytest.raises(torch.linalg.LinAlgError) as compiled:
        f(a.to("tpu")).cpu()
    assert str(compiled.value) == str(cpu.value)
    with torch.tpu.set_eager_mode(torch.tpu.EagerMode.DEFER_AND_FUSE):
        with pytest.raises(torch.linalg.LinAlgError) as fused:
            (torch.linalg.inv_ex(singular().to("tpu"), check_errors=True).inverse + 1).cpu()
    with pytest.raises(torch.linalg.LinAlgError) as cpu:
        torch.linalg.inv_ex(singular(), check_errors=True)
    assert str(fused.value) == str(cpu.value)
