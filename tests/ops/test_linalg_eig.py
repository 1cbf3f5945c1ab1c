"""linalg.eig and linalg.eigvals (general eigendecomposition, as LAPACK's geev) against the CPU: eigenvalues
compared in order (the order is LAPACK's), eigenvectors by abs() (they are defined up to a phase) and by the
residual A V = V diag(w), gradients, shapes incl. empty, non-contiguous inputs and bad input."""
import warnings

import pytest
import torch

from harness import check, check_raises_like_cpu, make, to_cpu, to_tpu
from tiers import tiered

DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]
FAST_DTYPES = [torch.float32, torch.complex128]  # CI; the long tier runs all (tiers.py)


def general(shape, dtype, seed=0, noncontiguous=False):
    if dtype.is_complex:
        real = torch.float32 if dtype == torch.complex64 else torch.float64
        re = make(shape, real, seed=seed, low=-2, high=2, noncontiguous=noncontiguous)
        im = make(shape, real, seed=seed + 1, low=-2, high=2)
        return torch.complex(re, im) if not noncontiguous else torch.complex(re, im).mT.contiguous().mT
    return make(shape, dtype, seed=seed, low=-2, high=2, noncontiguous=noncontiguous)


def unbalanced(shape, dtype, seed=0):
    """D A D^-1 with D = diag(2^k), k in [-10, 10]: LAPACK's balancing rescales it."""
    a = general(shape, dtype, seed)
    g = torch.Generator().manual_seed(seed + 11)
    k = torch.randint(-10, 11, shape[:-1], generator=g).to(torch.float64)
    d = torch.pow(2.0, k).to(a.dtype)
    return a * d.unsqueeze(-1) / d.unsqueeze(-2)


def compare(a, tol=None):
    """eig on CPU and tpu: values in order, |vectors|, and the tpu residual; eigvals too."""
    w, v = torch.linalg.eig(a)
    tw, tv = torch.linalg.eig(to_tpu(a))
    tw, tv = to_cpu(tw), to_cpu(tv)
    assert tw.dtype == w.dtype and tv.dtype == v.dtype and tw.shape == w.shape and tv.shape == v.shape
    kw = {} if tol is None else dict(atol=tol, rtol=tol)
    torch.testing.assert_close(tw, w, **kw)
    torch.testing.assert_close(tv.abs(), v.abs(), **kw)
    torch.testing.assert_close(to_cpu(torch.linalg.eigvals(to_tpu(a))), w, **kw)
    if a.numel():
        ac = a.to(tv.dtype)
        res = ac @ tv - tv * tw.unsqueeze(-2)
        scale = torch.linalg.matrix_norm(ac, keepdim=True).abs().unsqueeze(-1).amax(-2, keepdim=True)
        eps = 1e-4 if a.dtype in (torch.float32, torch.complex64) else 1e-10
        assert (res.abs().amax(dim=(-2, -1)) <= eps * (1 + scale.squeeze(-1).squeeze(-1))).all()
        norms = torch.linalg.vector_norm(tv, dim=-2)
        torch.testing.assert_close(norms, torch.ones_like(norms))


# (Each new shape and dtype compiles its programs once: the tests below reuse a (4, 5, 5) batch.)
@pytest.mark.parametrize("dtype", tiered(DTYPES, FAST_DTYPES), ids=str)
def test_random(dtype):
    compare(general((4, 5, 5), dtype, seed=0))
    compare(general((2, 3, 3), dtype, seed=1))


@pytest.mark.parametrize("dtype", tiered(DTYPES, FAST_DTYPES), ids=str)
def test_unbalanced(dtype):
    compare(unbalanced((4, 5, 5), dtype, seed=2))


@pytest.mark.parametrize("dtype", tiered(DTYPES, FAST_DTYPES), ids=str)
def test_isolated_eigenvalues(dtype):
    """Triangular and block matrices: balancing's permutations isolate eigenvalues."""
    a = general((5, 5), dtype, seed=4)
    b = a.clone()
    b[2, :] = 0
    b[:, 4] = 0
    b[2, 2] = 3
    c = a.clone()
    c[:, 0] = 0
    c[0, 0] = -1
    compare(torch.stack([torch.triu(a), torch.tril(a), b, c]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_complex_pairs(dtype):
    """Real matrices with complex-conjugate eigenvalue pairs (rotations) and repeated eigenvalues."""
    rot = torch.zeros(5, 5, dtype=torch.float64)
    rot[:2, :2] = torch.tensor([[0.0, -2.0], [2.0, 0.0]])
    rot[2:4, 2:4] = torch.tensor([[1.0, 3.0], [-3.0, 1.0]])
    rot[4, 4] = 0.5
    q, _ = torch.linalg.qr(general((5, 5), torch.float64, seed=9))
    mats = [rot, q @ rot @ q.T, torch.eye(5, dtype=torch.float64), torch.zeros(5, 5, dtype=torch.float64)]
    compare(torch.stack(mats).to(dtype))


@pytest.mark.parametrize("dtype", tiered(DTYPES, FAST_DTYPES), ids=str)
def test_batched_and_empty(dtype):
    for shape in [(2, 1, 3, 3), (0, 3, 3), (0, 0), (2, 0, 0)]:
        compare(general(shape, dtype, seed=2))


@pytest.mark.parametrize("dtype", tiered(DTYPES, FAST_DTYPES), ids=str)
def test_noncontiguous_and_views(dtype):
    compare(general((4, 5, 5), dtype, seed=3, noncontiguous=True))
    big = general((4, 7, 7), dtype, seed=5)
    compare(big[:, 1:6, 1:6].mT)
    compare(big[:, ::2, ::2][:, :, :3].expand(4, 4, 3)[:, 1:, :])


@pytest.mark.parametrize("dtype", tiered(DTYPES, FAST_DTYPES), ids=str)
def test_backward(dtype):
    """Gradients through |V| and w (phase-invariant, as the OpInfo's output_process_fn_grad)."""
    a = general((4, 5, 5), dtype, seed=6)
    ta = to_tpu(a).requires_grad_()
    a = a.clone().requires_grad_()

    def loss(x):
        w, v = torch.linalg.eig(x)
        k = torch.arange(1, 6, device=x.device)
        return (w * k).real.sum() + (w.imag ** 2).sum() + (v.abs() * k).sum()

    # eig's gradient divides by eigenvalue gaps: float32 rounding differences grow (both sides)
    tol = dict(atol=1e-4, rtol=1e-4) if dtype in (torch.float32, torch.complex64) else {}
    loss(a).backward()
    loss(ta).backward()
    torch.testing.assert_close(to_cpu(ta.grad), a.grad, **tol)
    a2 = general((4, 5, 5), dtype, seed=7).requires_grad_()
    ta2 = to_tpu(a2.detach()).requires_grad_()
    torch.linalg.eigvals(a2).abs().sum().backward()
    torch.linalg.eigvals(ta2).abs().sum().backward()
    torch.testing.assert_close(to_cpu(ta2.grad), a2.grad, **tol)


def test_out_and_dtypes():
    a = general((4, 5, 5), torch.float32, seed=8)
    w, v = torch.linalg.eig(to_tpu(a))
    assert w.dtype == torch.complex64 and v.dtype == torch.complex64
    wo = torch.empty(4, 5, dtype=torch.complex64, device="tpu")
    vo = torch.empty(4, 5, 5, dtype=torch.complex64, device="tpu")
    torch.linalg.eig(to_tpu(a), out=(wo, vo))
    cw, cv = torch.linalg.eig(a)
    torch.testing.assert_close(to_cpu(wo), cw)
    torch.testing.assert_close(to_cpu(vo).abs(), cv.abs())


def test_bad_input():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a in [torch.randn(3, 4), torch.randn(3), torch.tensor(1.0), torch.ones(3, 3, dtype=torch.int64),
                  torch.ones(3, 3, dtype=torch.bool), torch.randn(3, 3).half(), torch.randn(3, 3).bfloat16()]:
            check_raises_like_cpu(torch.linalg.eig, a)
            check_raises_like_cpu(torch.linalg.eigvals, a)
        # non-finite input: eig refuses it (eigvals returns NaN, as the CPU does for inf)
        bad = torch.tensor([[1.0, float("inf")], [0.0, 1.0]])
        check_raises_like_cpu(lambda t: torch.linalg.eig(t)[0].cpu(), bad)
        check(torch.linalg.eigvals, bad)


def test_real_input_complex_pair_vectors_take_the_cpus_sign():
    # dgeev rotates a complex pair's largest component real with dlartg, whose
    # result is negative only where Re < 0 and |Re| > |Im| (the CPU's LAPACK);
    # taking sign(Re) flipped 21% of these vectors against the CPU's. Up to a
    # phase either is an eigenvector; the CPU's is the one users compare with.
    a = general((200, 4, 4), torch.float64, seed=5)
    w, v = torch.linalg.eig(a)
    tv = to_cpu(torch.linalg.eig(to_tpu(a))[1])
    pair = w.imag != 0  # 446 of the 800 columns
    same = ((v - tv).abs() < 1e-8).all(-2)[pair].double().mean().item()
    assert same > 0.95, f"{same:.3f} of the complex-pair eigenvectors equal the CPU's"
