"""QR (linalg_qr, householder_product) and symmetric eigh against the CPU (LAPACK), forward and backward."""
import pytest
import torch

from harness import check, check_raises_like_cpu, make, to_cpu, to_tpu

QR_SHAPES = [(5, 3), (3, 5), (4, 4), (2, 5, 3), (2, 1, 3, 4), (1, 1), (0, 3), (3, 0), (0, 0), (0, 4, 2)]


@pytest.mark.parametrize("shape", QR_SHAPES, ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(shape, mode):
    a = make(shape, torch.float32, low=-1, high=1)
    check(lambda t: tuple(torch.linalg.qr(t, mode=mode)), a)


def test_qr_legacy_and_noncontiguous():
    a = make((3, 6, 4), torch.float32, low=-1, high=1, noncontiguous=True)
    check(lambda t: tuple(torch.linalg.qr(t)), a)
    check(lambda t: tuple(torch.qr(t, some=False)), a)
    check(lambda t: tuple(torch.linalg.qr(t[:, 1:, ::2].mT)), a)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)], ids=str)
def test_qr_backward(shape):
    a = make(shape, torch.float32, low=-1, high=1)
    q, r = torch.linalg.qr(a)
    gq, gr = make(q.shape, torch.float32, seed=1), make(r.shape, torch.float32, seed=2)
    ca, ta = a.clone().requires_grad_(), to_tpu(a).requires_grad_()
    cq, cr = torch.linalg.qr(ca)
    (cq * gq).sum().add((cr * gr).sum()).backward()
    tq, tr = torch.linalg.qr(ta)
    (tq * to_tpu(gq)).sum().add((tr * to_tpu(gr)).sum()).backward()
    torch.testing.assert_close(to_cpu(ta.grad), ca.grad)


@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (2, 6, 2), (3, 0)], ids=str)
def test_householder_product(shape):
    a = make(shape, torch.float32, low=-1, high=1)
    h, tau = torch.geqrf(a)
    check(torch.linalg.householder_product, h, tau)
    check(torch.linalg.householder_product, h, tau[..., :1] if tau.shape[-1] else tau)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (0, 3)], ids=str)
def test_geqrf_ormqr(shape):
    a = make(shape, torch.float32, low=-1, high=1)
    check(lambda t: tuple(torch.geqrf(t)), a)
    check(lambda t: tuple(torch.geqrf(t.mT.contiguous().mT)), a)  # a column-major input
    h, tau = torch.geqrf(a)
    c = make(shape[:-1] + (2,), torch.float32, seed=3)
    for left in (True, False):
        for transpose in (False, True):
            check(lambda hh, tt, cc: torch.ormqr(hh, tt, cc if left else cc.mT, left=left, transpose=transpose),
                  h, tau, c)


def test_qr_bad_dtype():
    check_raises_like_cpu(torch.linalg.qr, torch.ones(3, 3, dtype=torch.bfloat16))
    check_raises_like_cpu(torch.linalg.qr, torch.ones(3, 3, dtype=torch.bfloat16))
    check_raises_like_cpu(lambda t: torch.linalg.qr(t, mode="bad"), torch.ones(3, 3))


def symmetric(shape, seed=0, noncontiguous=False):
    a = make(shape, torch.float32, seed=seed, low=-1, high=1, noncontiguous=noncontiguous)
    return a + a.mT


EIGH_SHAPES = [(4, 4), (3, 5, 5), (2, 1, 3, 3), (1, 1), (0, 0), (0, 3, 3)]


def eigh_gauge_free(t, uplo="L"):
    w, v = torch.linalg.eigh(t, UPLO=uplo)
    return w, v.abs()  # eigenvectors are unique up to sign (OpInfo compares them the same way)


@pytest.mark.parametrize("shape", EIGH_SHAPES, ids=str)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(shape, uplo):
    a = symmetric(shape)
    check(lambda t: eigh_gauge_free(t, uplo), a)
    check(lambda t: torch.linalg.eigvalsh(t, UPLO=uplo), a)


def test_eigh_reconstructs_and_reads_one_triangle():
    a = symmetric((2, 5, 5), noncontiguous=True)
    w, v = torch.linalg.eigh(to_tpu(a))
    torch.testing.assert_close(to_cpu(v @ torch.diag_embed(w) @ v.mT), a, atol=1e-5, rtol=1e-5)  # rounding of 3 products
    junk_upper = a + torch.triu(torch.full((5, 5), 100.0), 1)
    check(lambda t: eigh_gauge_free(t, "L"), junk_upper)
    junk_lower = a + torch.tril(torch.full((5, 5), 100.0), -1)
    check(lambda t: eigh_gauge_free(t, "U"), junk_lower)


def test_eigh_backward():
    a = symmetric((2, 4, 4))
    gw = make((2, 4), torch.float32, seed=1)
    ca, ta = a.clone().requires_grad_(), to_tpu(a).requires_grad_()
    (torch.linalg.eigvalsh(ca) * gw).sum().backward()
    (torch.linalg.eigvalsh(ta) * to_tpu(gw)).sum().backward()
    torch.testing.assert_close(to_cpu(ta.grad), ca.grad)


def test_eigh_bad_input():
    check_raises_like_cpu(torch.linalg.eigh, torch.ones(3, 3, dtype=torch.bfloat16))
    check_raises_like_cpu(torch.linalg.eigh, torch.ones(3, 4))
    check_raises_like_cpu(lambda t: torch.linalg.eigh(t, UPLO="X"), torch.ones(3, 3))


SVD_SHAPES = [(5, 3), (3, 5), (4, 4), (2, 5, 3), (2, 1, 3, 4), (1, 1), (0, 3), (3, 0), (0, 0), (2, 0, 0)]


def svd_gauge_free(t, full):
    """Singular values, |U|, |Vh| over the min(m, n) singular pairs (signs are not unique), and U S Vh."""
    u, s, vh = torch.linalg.svd(t, full_matrices=full)
    k = s.shape[-1]
    return s, u[..., :k].abs(), vh[..., :k, :].abs(), (u[..., :k] * s.unsqueeze(-2)) @ vh[..., :k, :]


@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
@pytest.mark.parametrize("full", [False, True])
def test_svd(shape, full):
    a = make(shape, torch.float32, low=-1, high=1)
    check(lambda t: svd_gauge_free(t, full), a)
    check(torch.linalg.svdvals, a)
    u, s, vh = torch.linalg.svd(to_tpu(a), full_matrices=full)
    cu, cs, cvh = torch.linalg.svd(a, full_matrices=full)
    assert u.shape == cu.shape and s.shape == cs.shape and vh.shape == cvh.shape
    if full and a.numel():  # the completed bases are orthonormal (their choice is not unique)
        u, vh = to_cpu(u), to_cpu(vh)
        eye_u, eye_v = torch.eye(u.shape[-1]).expand(u.shape), torch.eye(vh.shape[-1]).expand(vh.shape)
        torch.testing.assert_close(u.mT @ u, eye_u, atol=1e-5, rtol=0)  # rounding of an m-term sum
        torch.testing.assert_close(vh @ vh.mT, eye_v, atol=1e-5, rtol=0)


def test_svd_noncontiguous_and_composites():
    a = make((3, 6, 4), torch.float32, low=-1, high=1, noncontiguous=True)
    check(lambda t: svd_gauge_free(t, False), a)
    check(lambda t: svd_gauge_free(t[:, ::2].mT, False), a)
    check(torch.linalg.pinv, a)
    check(torch.linalg.matrix_rank, a)
    check(lambda t: torch.linalg.matrix_norm(t, "nuc"), a)
    check(lambda t: torch.linalg.matrix_norm(t, 2), a)


def test_svd_rank_deficient_values():
    a = make((5, 2), torch.float32, low=-1, high=1)
    a = a @ make((2, 4), torch.float32, seed=1, low=-1, high=1)  # rank 2
    check(torch.linalg.svdvals, a, atol=1e-5, rtol=1.3e-6)  # zero singular values: absolute rounding of eps * |A|
    check(torch.linalg.matrix_rank, a)
    check(torch.linalg.pinv, a)


def test_svd_backward():
    a = make((2, 5, 3), torch.float32, low=-1, high=1)
    gs = make((2, 3), torch.float32, seed=1)
    ca, ta = a.clone().requires_grad_(), to_tpu(a).requires_grad_()
    cu, cs, cvh = torch.linalg.svd(ca, full_matrices=False)
    tu, ts, tvh = torch.linalg.svd(ta, full_matrices=False)
    # Gauge-invariant loss: singular values and the product U S Vh.
    ((cs * gs).sum() + ((cu * cs.unsqueeze(-2)) @ cvh).square().sum()).backward()
    ((ts * to_tpu(gs)).sum() + ((tu * ts.unsqueeze(-2)) @ tvh).square().sum()).backward()
    torch.testing.assert_close(to_cpu(ta.grad), ca.grad)


def test_svd_bad_dtype():
    check_raises_like_cpu(torch.linalg.svd, torch.ones(3, 3, dtype=torch.bfloat16))
    check_raises_like_cpu(torch.linalg.svd, torch.ones(3, 3, dtype=torch.int64))
