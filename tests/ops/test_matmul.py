"""Matrix products (mm, bmm, dot, mv, addmm, baddbmm, addbmm, addmv, addr and
the composites matmul / linear that decompose into them) against the CPU."""
import pytest
import torch

import torch_tpu  # noqa: F401
from harness import check, check_inplace, check_raises_like_cpu, make, to_tpu

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.int8]


def mk(shape, dtype, seed=0, **kw):
    # Small integers keep integer products exact and half-type products
    # representable, so results match the CPU exactly up to rounding order.
    return make(shape, dtype, seed=seed, low=-3, high=3, **kw)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("m,k,n", [(3, 4, 5), (1, 1, 1), (0, 3, 2), (2, 0, 3), (3, 2, 0), (17, 33, 9)])
def test_mm(dtype, m, k, n):
    a, b = mk((m, k), dtype, 1), mk((k, n), dtype, 2)
    check(torch.mm, a, b)
    check(torch.matmul, a, b)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_bmm_dot_mv(dtype):
    check(torch.bmm, mk((2, 3, 4), dtype, 1), mk((2, 4, 5), dtype, 2))
    check(torch.bmm, mk((0, 3, 4), dtype, 1), mk((0, 4, 5), dtype, 2))
    check(torch.dot, mk((7,), dtype, 1), mk((7,), dtype, 2))
    check(torch.dot, mk((0,), dtype, 1), mk((0,), dtype, 2))
    check(torch.vdot, mk((7,), dtype, 1), mk((7,), dtype, 2))
    check(torch.vdot, mk((0,), dtype, 1), mk((0,), dtype, 2))
    check(torch.mv, mk((3, 4), dtype, 1), mk((4,), dtype, 2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int64], ids=str)
def test_scaled_accumulate_forms(dtype):
    f = dtype.is_floating_point
    beta, alpha = (0.5, -2.0) if f else (2, -3)
    c, a, b = mk((3, 5), dtype, 0), mk((3, 4), dtype, 1), mk((4, 5), dtype, 2)
    check(torch.addmm, c, a, b)
    check(lambda c, a, b: torch.addmm(c, a, b, beta=beta, alpha=alpha), c, a, b)
    check(lambda c, a, b: torch.addmm(c, a, b, beta=0), c, a, b)
    check(torch.addmm, mk((5,), dtype, 3), a, b)  # broadcast bias
    ba, bb = mk((2, 3, 4), dtype, 4), mk((2, 4, 5), dtype, 5)
    check(torch.baddbmm, mk((2, 3, 5), dtype, 6), ba, bb)
    check(lambda c, x, y: torch.baddbmm(c, x, y, beta=beta, alpha=alpha), mk((3, 1), dtype, 6), ba, bb)
    check(lambda c, x, y: torch.addbmm(c, x, y, beta=beta, alpha=alpha), c, ba, bb)
    check(lambda c, m, v: torch.addmv(c, m, v, beta=beta, alpha=alpha), mk((3,), dtype, 7), a, mk((4,), dtype, 8))
    check(lambda c, x, y: torch.addr(c, x, y, beta=beta, alpha=alpha), c, mk((3,), dtype, 9), mk((5,), dtype, 10))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.complex64],
                         ids=str)
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.6, 0.2), (0, 0.3), (1, 0)])
def test_addbmm_and_addr_round_like_the_cpu(dtype, beta, alpha):
    """Full-precision values: addbmm accumulates per rank-1 term (float) or per
    batch (half types round each time), addr rounds every half-type operation,
    as the CPU kernels do -- bit for bit."""
    g = torch.Generator().manual_seed(int(beta * 10 + alpha * 100))
    r = lambda *s: (torch.randn(*s, generator=g, dtype=torch.float64) * 3).to(dtype)  # noqa: E731
    c, x, y = r(5, 10), r(5, 5, 5), r(5, 5, 10)
    # (float64 and complex take other CPU gemm paths: close, not bit-equal;
    # transposed operands too.)
    exact = dict(atol=0, rtol=0) if dtype in (torch.float32, torch.bfloat16, torch.float16) else {}
    check(lambda c, x, y: torch.addbmm(c, x, y, beta=beta, alpha=alpha), c, x, y, **exact)
    check(lambda c, x, y: torch.addbmm(c, x, y, beta=beta, alpha=alpha), r(5), x.mT, y[:, :, :5])
    if not dtype.is_complex:
        half = dict(atol=0, rtol=0) if dtype in (torch.bfloat16, torch.float16) else {}
        check(lambda c, u, w: torch.addr(c, u, w, beta=beta, alpha=alpha), c, r(5), r(10), **half)


def test_beta_zero_ignores_nan_and_inplace_out():
    c = torch.full((3, 5), float("nan"))
    a, b = mk((3, 4), torch.float32, 1), mk((4, 5), torch.float32, 2)
    check(lambda c, a, b: torch.addmm(c, a, b, beta=0), c, a, b)
    check(lambda c, x, y: torch.addr(c, x, y), mk((3, 5), torch.bool), mk((3,), torch.bool, 1), mk((5,), torch.bool, 2))
    check_inplace(lambda c, a, b: c.addmm_(a, b, alpha=0.5), mk((3, 5), torch.float32), a, b)
    check_inplace(lambda o, a, b: torch.mm(a, b, out=o), torch.empty(0), a, b)
    check_inplace(lambda o, a, b: torch.bmm(a, b, out=o), torch.empty(0),
                  mk((2, 3, 4), torch.float32), mk((2, 4, 2), torch.float32))
    check_inplace(lambda c, x, y: c.baddbmm_(x, y, beta=2.0), mk((2, 3, 2), torch.float32),
                  mk((2, 3, 4), torch.float32), mk((2, 4, 2), torch.float32))


def test_noncontiguous_and_transposed():
    a = mk((4, 6), torch.float32, 1, noncontiguous=True)
    b = mk((6, 5), torch.float32, 2, noncontiguous=True)
    check(torch.mm, a, b)
    check(lambda a, b: a.t().t() @ b, a, b)
    check(lambda a, b: b.t() @ a.t(), a, b)
    check(lambda x: x[:, 1:3] @ x[1:3, :], a)
    check(torch.bmm, mk((3, 4, 2), torch.float32).transpose(1, 2), mk((3, 4, 5), torch.float32, 3))


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((5, 2, 3), (3, 4)),
                                   ((2, 3), (5, 3, 4)), ((2, 1, 2, 3), (4, 3, 2)), ((6, 2, 3), (6, 3, 2)),
                                   ((0, 2, 3), (3, 4)), ((4,), (2, 4, 3))], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64], ids=str)
def test_matmul_broadcast(sa, sb, dtype):
    check(torch.matmul, mk(sa, dtype, 1), mk(sb, dtype, 2))


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4), (0, 4)], ids=str)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_linear(shape, bias, dtype):
    w = mk((5, 4), dtype, 1)
    bvec = mk((5,), dtype, 2) if bias else None
    check(lambda x, w, bv: torch.nn.functional.linear(x, w, bv), mk(shape, dtype, 3), w, bvec)


def test_errors_like_cpu():
    check_raises_like_cpu(torch.mm, mk((3, 4), torch.float32), mk((5, 2), torch.float32))
    check_raises_like_cpu(torch.mm, mk((3, 4), torch.float32), mk((4, 2), torch.float64))
    check_raises_like_cpu(torch.bmm, mk((2, 3, 4), torch.float32), mk((3, 4, 2), torch.float32))
    check_raises_like_cpu(torch.dot, mk((3,), torch.float32), mk((4,), torch.float32))
    check_raises_like_cpu(torch.matmul, mk((), torch.float32), mk((3,), torch.float32))
    # CPU: NotImplementedError ("not implemented for 'Bool'"); tpu: RuntimeError
    # (its base class), which is all a lowering rule can raise.
    with pytest.raises(RuntimeError):
        torch.mm(to_tpu(mk((2, 2), torch.bool)), to_tpu(mk((2, 2), torch.bool))).cpu()


def test_precision_float32_large():
    # Full float32 precision (no bf16 passes): close to the CPU at default tolerance.
    # Float32 sums of 256 products of size up to 25 differ from the CPU's BLAS
    # by summation order alone (~1e-4 absolute); so compare both with a float64
    # reference: the tpu result must be as accurate as the CPU's.
    a, b = make((64, 256), torch.float32, 1), make((256, 48), torch.float32, 2)
    exact = a.double() @ b.double()
    err_cpu = ((a @ b).double() - exact).abs().max()
    err_tpu = ((to_tpu(a) @ to_tpu(b)).cpu().double() - exact).abs().max()
    assert err_tpu <= 2 * err_cpu + 1e-6, (err_tpu, err_cpu)
    check(torch.mm, a[:, :32], b[:32])  # short sums: default tolerance


@pytest.mark.parametrize("fn,shapes", [
    (torch.mm, [(3, 4), (4, 5)]),
    (torch.bmm, [(2, 3, 4), (2, 4, 5)]),
    (torch.matmul, [(2, 3, 4), (4, 5)]),
    (torch.matmul, [(4,), (4,)]),
    (torch.matmul, [(3, 4), (4,)]),
    (lambda x, w, b: torch.nn.functional.linear(x, w, b), [(2, 3, 4), (5, 4), (5,)]),
    (lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0), [(3, 5), (3, 4), (4, 5)]),
    (lambda c, a, b: torch.baddbmm(c, a, b, alpha=2.0), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    (lambda c, a, b: torch.addbmm(c, a, b, beta=0.5), [(3, 5), (2, 3, 4), (2, 4, 5)]),
    (lambda c, m, v: torch.addmv(c, m, v, alpha=-1.0), [(3,), (3, 4), (4,)]),
    (lambda c, x, y: torch.addr(c, x, y), [(3, 5), (3,), (5,)]),
    (torch.dot, [(4,), (4,)]),
    (torch.mv, [(3, 4), (4,)]),
], ids=["mm", "bmm", "matmul3d", "matmul_dot", "matmul_mv", "linear", "addmm", "baddbmm", "addbmm", "addmv", "addr",
        "dot", "mv"])
def test_backward(fn, shapes):
    inputs = [make(s, torch.float32, seed=i) for i, s in enumerate(shapes)]
    got = []
    for dev in ("cpu", "tpu"):
        xs = [x.clone().to(dev).requires_grad_() for x in inputs]
        fn(*xs).sum().backward()
        got.append([x.grad.cpu() for x in xs])
    torch.testing.assert_close(got[1], got[0])


# mv with a 0-d self: the CPU's IndexError (the meta kernel's RuntimeError before).
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_mv_0d_self_raises_like_cpu(dtype):
    check_raises_like_cpu(torch.mv, torch.tensor(1.5, dtype=dtype), torch.randn(10))


# addr promotes all three operands like dimensioned tensors (self is expanded first).
@pytest.mark.parametrize("dtypes", [(torch.float64, torch.float32, torch.float32),
                                    (torch.float64, torch.float32, torch.float64),
                                    (torch.float32, torch.float32, torch.float64),
                                    (torch.float16, torch.float32, torch.float32),
                                    (torch.int64, torch.float32, torch.float32)], ids=str)
@pytest.mark.parametrize("self_shape", [(), (10,), (5, 10)], ids=str)
def test_addr_mixed_dtypes_like_cpu(dtypes, self_shape):
    s = make(self_shape, dtypes[0]) if dtypes[0].is_floating_point else torch.ones(self_shape, dtype=dtypes[0])
    check(torch.addr, s, make((5,), dtypes[1], seed=1), make((10,), dtypes[2], seed=2))
