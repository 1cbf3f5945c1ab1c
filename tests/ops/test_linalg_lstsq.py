"""linalg.lstsq (all four CPU drivers, real and complex) against the CPU (LAPACK): solution, residuals, rank and
singular values, which of them are empty per driver, batching and broadcasting, vector right sides, empty inputs,
out=, backward and the CPU's errors."""
import numpy as np
import pytest
import scipy.linalg
import torch
from torch.testing import assert_close

from harness import check, check_raises_like_cpu, make, to_cpu, to_tpu
from tiers import tiered

DRIVERS = ["gels", "gelsy", "gelsd", "gelss"]
DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]
FAST_DTYPES = [torch.float32, torch.complex128]  # CI; the long tier runs all (tiers.py)


def matrix(shape, dtype, seed=0, noncontiguous=False):
    """Well-conditioned (full-rank) batch: a random matrix plus a dominant identity block."""
    real = torch.float64
    a = make(shape, real, seed=seed, low=-1, high=1)
    if dtype.is_complex:
        a = torch.complex(a, make(shape, real, seed=seed + 1, low=-1, high=1))
    m, n = shape[-2], shape[-1]
    a = a + 3 * torch.eye(m, n, dtype=a.dtype)
    a = a.to(dtype)
    if noncontiguous:
        wide = torch.zeros(*a.shape[:-1], a.shape[-1] * 2, dtype=dtype)
        wide[..., ::2] = a
        a = wide[..., ::2]
    return a


def rhs(shape, dtype, seed=10):
    b = make(shape, torch.float64, seed=seed, low=-2, high=2)
    if dtype.is_complex:
        b = torch.complex(b, make(shape, torch.float64, seed=seed + 1, low=-2, high=2))
    return b.to(dtype)


def lstsq(*args, **kwargs):
    return tuple(torch.linalg.lstsq(*args, **kwargs))


def check_gelsy_rank_deficient(a, b, rcond):
    """gelsy on a rank-deficient batch against LAPACK's gelsy called with its pivots zeroed (all columns free),
    through scipy. torch's CPU gelsy is no reference here: it hands LAPACK an uninitialized pivot array
    (at::empty) and reuses it across the batch, so its rank estimate and solution depend on leftover memory
    (measured: 84 of 300 identical CPU calls differed, some by 0.5). Residuals and singular values (empty for
    gelsy) still come from the CPU."""
    _, residuals, _, singular_values = lstsq(a, b, rcond=rcond, driver="gelsy")
    cond = torch.finfo(a.dtype).eps * max(a.shape[-2:]) if rcond is None else rcond  # None: torch's default
    solutions, ranks = [], []
    for am, bm in zip(a.reshape(-1, *a.shape[-2:]), b.reshape(-1, *b.shape[-2:])):
        x, _, r, _ = scipy.linalg.lstsq(am.numpy(), bm.numpy(), cond=cond, lapack_driver="gelsy")
        solutions.append(torch.from_numpy(np.ascontiguousarray(x)))
        ranks.append(r)
    expect = (torch.stack(solutions).reshape(*a.shape[:-2], a.shape[-1], b.shape[-1]), residuals,
              torch.tensor(ranks, dtype=torch.int64).reshape(a.shape[:-2]), singular_values)
    got = to_cpu(lstsq(to_tpu(a), to_tpu(b), rcond=rcond, driver="gelsy"))
    assert_close(got, expect)


@pytest.mark.parametrize("dtype", tiered(DTYPES, FAST_DTYPES), ids=str)
@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("mn", [(5, 3), (3, 3), (2, 4)], ids=str)
def test_lstsq_drivers(dtype, driver, mn):
    m, n = mn
    a = matrix((2, m, n), dtype)
    b = rhs((2, m, 3), dtype)
    check(lstsq, a, b, driver=driver)
    check(lstsq, a[0], b[0], driver=driver)


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128], ids=str)
def test_lstsq_default_driver_and_vector_rhs(dtype):
    a = matrix((3, 6, 4), dtype)
    check(lstsq, a, rhs((3, 6), dtype))  # vector case: B has A's shape minus its last dim
    check(lstsq, a[0], rhs((6,), dtype), driver="gelsd")
    check(lstsq, a, rhs((3, 6, 2), dtype), driver="GELSS")  # driver names are case-insensitive


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("a_shape,b_shape", [((1, 5, 3), (2, 5, 4)), ((2, 5, 3), (1, 5, 4)), ((2, 1, 5, 3), (1, 3, 5, 2)),
                                             ((5, 5, 3), (5, 4)), ((1, 5, 3), (5, 4)), ((2, 3, 5, 3), (2, 3, 5))],
                         ids=str)
def test_lstsq_broadcasting(driver, a_shape, b_shape):
    # A matrix B one dim short of A broadcasts against A's batch by its leading dims, as on the CPU.
    check(lstsq, matrix(a_shape, torch.float64), rhs(b_shape, torch.float64), driver=driver)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("a_shape,b_shape", [((0, 3), (0, 4)), ((5, 0), (5, 2)), ((2, 5, 0), (2, 5, 2)),
                                             ((0, 5, 0), (0, 5, 2)), ((0, 5, 3), (0, 5, 2)), ((0, 0), (0, 2)),
                                             ((3, 0), (3,))], ids=str)
def test_lstsq_empty(driver, a_shape, b_shape):
    check(lstsq, torch.zeros(a_shape, dtype=torch.float64), torch.ones(b_shape, dtype=torch.float64), driver=driver)


@pytest.mark.parametrize("driver", ["gels", "gelsy"])
def test_lstsq_no_rhs(driver):
    check(lstsq, matrix((5, 3), torch.float32), torch.ones(5, 0), driver=driver)


@pytest.mark.parametrize("driver", DRIVERS)
def test_lstsq_zero_matrix(driver):
    # gels: LAPACK returns a zero solution and zero residuals for an all-zero A; the others rank 0.
    check(lstsq, torch.zeros(2, 5, 3, dtype=torch.float64), rhs((2, 5, 2), torch.float64), driver=driver)


@pytest.mark.parametrize("dtype", tiered(DTYPES, FAST_DTYPES), ids=str)
@pytest.mark.parametrize("driver", ["gelsd", "gelss"])
@pytest.mark.parametrize("tall", [True, False])
def test_lstsq_rank_deficient_svd_drivers(dtype, driver, tall):
    # One matrix of the batch has rank 3 of 4: gelsd/gelss give the minimum-norm truncated solution,
    # its rank, and no residuals (not every matrix has full rank).
    a = matrix((3, 6, 4) if tall else (3, 4, 6), dtype)
    if tall:
        a[1, :, 3] = a[1, :, 0] + a[1, :, 1]
    else:
        a[1, 3, :] = a[1, 0, :] + a[1, 1, :]
    b = rhs((3, a.shape[-2], 2), dtype)
    check(lstsq, a, b, driver=driver)


@pytest.mark.parametrize("tall", [True, False])
def test_lstsq_rank_deficient_gelsy(tall):
    # gelsy's rank here comes from the SVD with the same rcond rule: for a clearly rank-deficient matrix its
    # solution is the minimum-norm one, as LAPACK's.
    a = matrix((6, 4) if tall else (4, 6), torch.float64)
    if tall:
        a[:, 3] = a[:, 0] - 2 * a[:, 1]
    else:
        a[3, :] = a[0, :] - 2 * a[1, :]
    # (an rcond well above the rounding of the dependent direction: the default eps * 6 sits at its level)
    check_gelsy_rank_deficient(a, rhs((a.shape[0], 2), torch.float64), rcond=1e-10)


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss"])
def test_lstsq_rcond(driver):
    a = matrix((2, 6, 4), torch.float64)
    a[0, :, 3] *= 1e-6
    b = rhs((2, 6, 2), torch.float64)
    for rcond in [None, 1e-3, 1e-9, 0.0, -1.0]:
        if driver == "gelsy":
            check_gelsy_rank_deficient(a, b, rcond)
        else:
            check(lstsq, a, b, rcond=rcond, driver=driver)


def test_lstsq_noncontiguous_and_views():
    a = matrix((3, 6, 4), torch.float32, noncontiguous=True)
    b = rhs((3, 2, 6), torch.float32).mT  # a transposed view
    check(lstsq, a, b, driver="gelsd")
    check(lstsq, a, b)
    big = matrix((8, 8), torch.complex64)
    check(lambda t, u: lstsq(t[1:7, 2:6], u[1:7]), big, rhs((8, 3), torch.complex64))


@pytest.mark.parametrize("driver", DRIVERS)
def test_lstsq_out(driver):
    a, b = matrix((2, 5, 3), torch.float64), rhs((2, 5, 2), torch.float64)

    def run(x, y):
        outs = (torch.empty(0, dtype=x.dtype, device=x.device), torch.empty(0, dtype=torch.float64, device=x.device),
                torch.empty(0, dtype=torch.int64, device=x.device), torch.empty(0, dtype=torch.float64, device=x.device))
        r = torch.linalg.lstsq(x, y, driver=driver, out=outs)
        assert all(o is p for o, p in zip(r, outs))
        return outs

    check(run, a, b)


@pytest.mark.parametrize("dtype", tiered([torch.float32, torch.float64], [torch.float64]), ids=str)
@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("mn", [(5, 3), (3, 3), (2, 4)], ids=str)
def test_lstsq_backward(dtype, driver, mn):
    m, n = mn
    a0, b0 = matrix((2, m, n), dtype), rhs((2, m, 3), dtype)

    def grads(a, b):
        a = a.detach().clone().requires_grad_()
        b = b.detach().clone().requires_grad_()
        sol, res = torch.linalg.lstsq(a, b, driver=driver)[:2]
        loss = (sol * make(sol.shape, dtype, seed=3).to(sol.device)).sum()
        if res.numel():
            loss = loss + (res * make(res.shape, dtype, seed=4).to(res.device)).sum()
        loss.backward()
        return a.grad, b.grad

    expect = grads(a0, b0)
    got = grads(to_tpu(a0), to_tpu(b0))
    for g, e in zip(got, expect):
        torch.testing.assert_close(to_cpu(g), e)


@pytest.mark.parametrize("a_shape,b_shape,kwargs", [
    ((5,), (5,), {}),                                   # A under 2 dims
    ((5, 3), (), {}),                                   # B 0-d
    ((5, 3), (6, 2), {}),                               # rows differ
    ((5, 3), (6,), {}),                                 # vector rows differ
    ((2, 5, 3), (5,), {}),                              # B two dims short
    ((5, 3), (1, 5, 2), {}),                            # B more dims than A
    ((2, 5, 3), (1, 5), {}),                            # not a vector of A's batch: a matrix with 1 row
    ((2, 5, 3), (3, 5, 2), {}),                         # batches don't broadcast
    ((2, 5, 3), (5, 2), {}),                            # a matrix B one dim short: its rows meet A's batch
    ((5, 3), (5, 2), {"driver": "foo"}),                # bad driver name
])
def test_lstsq_errors(a_shape, b_shape, kwargs):
    check_raises_like_cpu(torch.linalg.lstsq, torch.ones(a_shape), torch.ones(b_shape), **kwargs)


def test_lstsq_error_dtypes():
    check_raises_like_cpu(torch.linalg.lstsq, torch.ones(5, 3), torch.ones(5, 2, dtype=torch.float64))
    check_raises_like_cpu(torch.linalg.lstsq, torch.ones(5, 3, dtype=torch.float16), torch.ones(5, 2, dtype=torch.float16))
    check_raises_like_cpu(torch.linalg.lstsq, torch.ones(5, 3, dtype=torch.float16), torch.ones(5, 2, dtype=torch.float16),
                          rcond=0.1)
    check_raises_like_cpu(torch.linalg.lstsq, torch.ones(5, 3, dtype=torch.int64), torch.ones(5, 2, dtype=torch.int64),
                          rcond=0.1)


def test_lstsq_gels_singular():
    # An exactly zero column: gels's triangular factor is singular. The CPU raises torch.linalg.LinAlgError (a
    # RuntimeError); the device check raises at synchronization as a RuntimeError naming the op.
    a = matrix((2, 5, 3), torch.float64)
    a[1, :, 1] = 0
    b = rhs((2, 5, 2), torch.float64)
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.lstsq(a, b, driver="gels")
    with pytest.raises(RuntimeError, match="does not have full rank"):
        torch.linalg.lstsq(to_tpu(a), to_tpu(b), driver="gels")[0].cpu()


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("where", ["nanA", "nanB", "infA", "infB"])
def test_lstsq_nonfinite(driver, where):
    # The CPU's LAPACK rejects NaN input (every driver); an infinite entry of A fails gels/gelsd/gelss (tall);
    # gelsy and an infinite B return.
    a, b = matrix((2, 4, 3), torch.float32), rhs((2, 4, 2), torch.float32)
    (a if where.endswith("A") else b)[0, 1, 1] = float("nan") if where.startswith("nan") else float("inf")
    fn = lambda x, y: torch.linalg.lstsq(x, y, driver=driver)[0].cpu()  # noqa: E731
    try:
        torch.linalg.lstsq(a, b, driver=driver)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            fn(to_tpu(a), to_tpu(b))
            torch.tpu.synchronize()
        return
    out = torch.linalg.lstsq(to_tpu(a), to_tpu(b), driver=driver)
    assert out[0].shape == torch.linalg.lstsq(a, b, driver=driver)[0].shape
