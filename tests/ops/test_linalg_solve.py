"""linalg_lu_solve, linalg_inv_ex, det, slogdet and solve (from the LU rule) against the CPU (LAPACK), forward
and backward."""
import warnings

import pytest
import torch

from harness import check, check_raises_like_cpu, make, to_cpu, to_tpu


def well_conditioned(shape, seed=0, noncontiguous=False):
    """A general (non-symmetric) batch with a dominant diagonal, so pivoting still happens but solves are stable."""
    n = shape[-1]
    a = make(shape, torch.float32, seed=seed, low=-1, high=1, noncontiguous=noncontiguous)
    return a + n * torch.eye(n) * torch.sign(make(shape[:-1], torch.float32, seed=seed + 7, low=-1, high=1)).unsqueeze(-1)


def pivoted(shape, seed=0):
    """A well-conditioned batch with its rows reversed, so partial pivoting swaps rows."""
    return well_conditioned(shape, seed).flip(-2).contiguous()


SQUARE = [(4, 4), (3, 5, 5), (2, 1, 3, 3), (1, 1), (0, 0), (0, 3, 3), (2, 0, 0)]


@pytest.mark.parametrize("shape", SQUARE, ids=str)
@pytest.mark.parametrize("build", [well_conditioned, pivoted], ids=["diag", "pivoted"])
def test_inv(shape, build):
    a = build(shape)
    check(torch.linalg.inv, a)
    check(lambda t: tuple(torch.linalg.inv_ex(t)), a)
    check(torch.inverse, a)


def test_inv_noncontiguous_and_view():
    a = well_conditioned((3, 4, 4), noncontiguous=True)
    check(torch.linalg.inv, a)
    big = well_conditioned((6, 6), seed=2)
    check(lambda t: torch.linalg.inv(t[1:5, 1:5].mT), big)


def test_inv_backward():
    a = well_conditioned((2, 4, 4)).requires_grad_()
    ta = to_tpu(a.detach()).requires_grad_()
    g = make((2, 4, 4), torch.float32, seed=3)
    torch.linalg.inv(a).backward(g)
    torch.linalg.inv(ta).backward(to_tpu(g))
    torch.testing.assert_close(to_cpu(ta.grad), a.grad)


def test_inv_singular():
    a = well_conditioned((3, 4, 4))
    a[1, :, 2] = 0.0  # column 2 zero: getrf reports info = 3 for that matrix
    inv, info = torch.linalg.inv_ex(to_tpu(a))
    _, cpu_info = torch.linalg.inv_ex(a)
    assert info.dtype == torch.int32
    assert torch.equal(info.cpu(), cpu_info)
    assert cpu_info[1] > 0 and cpu_info[0] == 0
    torch.testing.assert_close(inv.cpu()[0], torch.linalg.inv(a[0]))
    check_raises_like_cpu(lambda t: torch.linalg.inv(t).cpu(), a)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.int64])
def test_inv_bad_dtype(dtype):
    a = torch.eye(3, dtype=dtype)
    check_raises_like_cpu(torch.linalg.inv, a)


def test_inv_not_square():
    check_raises_like_cpu(torch.linalg.inv, torch.ones(3, 4))


@pytest.mark.parametrize("a_shape,b_shape", [((4, 4), (4, 2)), ((3, 5, 5), (3, 5, 1)), ((5, 5), (2, 5, 3)),
                                             ((2, 1, 3, 3), (4, 3, 2)), ((1, 1), (1, 3)), ((0, 3, 3), (0, 3, 2)),
                                             ((3, 3), (3, 0)), ((0, 0), (0, 4))], ids=str)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve(a_shape, b_shape, left, adjoint):
    a = pivoted(a_shape)
    lu, piv = torch.linalg.lu_factor(a)
    b = make(b_shape, torch.float32, seed=1)
    if not left:
        b = b.mT
    check(lambda x, p, y: torch.linalg.lu_solve(x, p, y, left=left, adjoint=adjoint), lu, piv, b)


def test_lu_solve_noncontiguous():
    lu, piv = torch.linalg.lu_factor(pivoted((2, 4, 4)))
    b = make((2, 4, 3), torch.float32, seed=1, noncontiguous=True)
    check(lambda x, p, y: torch.linalg.lu_solve(x, p, y), lu.mT.contiguous().mT, piv, b)
    check(lambda x, p, y: torch.linalg.lu_solve(x, p, y[..., 1:, :]), lu[..., 1:, 1:].contiguous(),
          torch.linalg.lu_factor(pivoted((2, 3, 3)))[1], b)


def test_lu_solve_legacy():
    a = pivoted((3, 4, 4))
    lu, piv = torch.linalg.lu_factor(a)
    b = make((3, 4, 2), torch.float32, seed=1)
    check(lambda y, x, p: torch.lu_solve(y, x, p), b, lu, piv)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_backward(left, adjoint):
    a = pivoted((2, 4, 4))
    lu0, piv = torch.linalg.lu_factor(a)
    b0 = make((2, 4, 3) if left else (2, 3, 4), torch.float32, seed=1)
    g = make(b0.shape, torch.float32, seed=2)
    lu, b = lu0.clone().requires_grad_(), b0.clone().requires_grad_()
    tlu, tb = to_tpu(lu0).requires_grad_(), to_tpu(b0).requires_grad_()
    torch.linalg.lu_solve(lu, piv, b, left=left, adjoint=adjoint).backward(g)
    torch.linalg.lu_solve(tlu, to_tpu(piv), tb, left=left, adjoint=adjoint).backward(to_tpu(g))
    torch.testing.assert_close(to_cpu(tb.grad), b.grad)
    torch.testing.assert_close(to_cpu(tlu.grad), lu.grad)


def test_lu_solve_bad_shapes():
    lu, piv = torch.linalg.lu_factor(pivoted((3, 3)))
    check_raises_like_cpu(torch.linalg.lu_solve, lu, piv, torch.ones(4, 2))


# Operands under 2 dims: the CPU's RuntimeError (the meta kernels assert: AssertionError).
@pytest.mark.parametrize("case", ["solve_triangular_A0", "solve_triangular_A0_f64", "solve_triangular_A1",
                                  "solve_triangular_B0", "linalg_lu_solve_A0", "linalg_lu_solve_B1", "lu_solve_0d_LU"])
def test_solves_low_rank_operands_raise_like_cpu(case):
    piv = torch.tensor([1, 2, 3], dtype=torch.int32)
    st = lambda a, b: torch.linalg.solve_triangular(a, b, upper=True, left=True, unitriangular=True)  # noqa: E731
    if case == "solve_triangular_A0":
        check_raises_like_cpu(st, torch.tensor(1.5), torch.randn(3, 1))
    elif case == "solve_triangular_A0_f64":
        check_raises_like_cpu(st, torch.tensor(1.5, dtype=torch.float64), torch.randn(3, 1))
    elif case == "solve_triangular_A1":
        check_raises_like_cpu(st, torch.randn(3), torch.randn(3, 1))
    elif case == "solve_triangular_B0":
        check_raises_like_cpu(st, torch.randn(3, 3), torch.tensor(1.5))
    elif case == "linalg_lu_solve_A0":
        check_raises_like_cpu(lambda a, p, b: torch.linalg.lu_solve(a, p, b, adjoint=True), torch.tensor(1.5), piv,
                              torch.randn(3, 4))
    elif case == "linalg_lu_solve_B1":
        check_raises_like_cpu(torch.linalg.lu_solve, torch.eye(3), piv, torch.randn(3))
    else:
        with warnings.catch_warnings():  # lu_solve's deprecation warning (once per process)
            warnings.simplefilter("ignore")
            check_raises_like_cpu(torch.lu_solve, torch.randn(3, 4), torch.tensor(1.5), piv)


def grads_match(fn, a, *rest, tpu_fn=None):
    """fn's value and its gradient with respect to every input, on tpu (tpu_fn, default fn) as on the CPU."""
    ins = [a, *rest]
    tpu_fn = tpu_fn or fn
    cpu = [x.detach().clone().requires_grad_() for x in ins]
    tpu = [to_tpu(x.detach().clone()).requires_grad_() for x in ins]
    for f, side in ((fn, cpu), (tpu_fn, tpu)):
        out = f(*side)
        out = out if isinstance(out, tuple) else (out,)
        sum(o.float().sum() * (k + 1) for k, o in enumerate(out) if o.is_floating_point()).backward()
    torch.testing.assert_close(to_cpu(tpu_fn(*[x.detach() for x in tpu])), fn(*[x.detach() for x in cpu]))
    for c, t in zip(cpu, tpu):
        torch.testing.assert_close(to_cpu(t.grad), c.grad)


# det/slogdet return the LU their backward reads: the CPU factors A^T for a
# contiguous A and A itself otherwise; solve factors A either way.
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_det_slogdet_solve_forward_backward(layout):
    base = pivoted((3, 5, 5), seed=4)
    a = {"contiguous": base, "transposed": base.mT, "sliced": well_conditioned((3, 6, 6), seed=5)[:, 1:, 1:]}[layout]
    assert a.is_contiguous() == (layout == "contiguous")
    b = make((3, 5, 2), torch.float32, seed=6)
    check(lambda t: torch.ops.aten._linalg_det(t), a)  # det and the LU it keeps for backward
    check(lambda t: tuple(torch.ops.aten._linalg_slogdet(t)), a)
    check(lambda t, r: tuple(torch.ops.aten._linalg_solve_ex(t, r)), a, b)
    grads_match(torch.linalg.det, a)
    grads_match(torch.linalg.slogdet, a)
    grads_match(torch.logdet, a @ a.mT)
    grads_match(torch.linalg.solve, a, b)
    grads_match(lambda t, r: torch.linalg.solve(t, r, left=False), a, b.mT)
    grads_match(torch.linalg.solve, a, b[..., 0])  # vector right side


def test_det_singular_and_empty_and_solve_errors():
    a = well_conditioned((2, 4, 4))
    a[1, :, 2] = 0.0
    check(lambda t: (torch.linalg.det(t), torch.linalg.slogdet(t)), a)
    check(torch.linalg.det, torch.empty(3, 0, 0))
    check_raises_like_cpu(lambda t, r: torch.linalg.solve(t, r).cpu(), a, make((2, 4, 1), torch.float32))
    check_raises_like_cpu(torch.linalg.det, make((3, 4), torch.float32))  # not square


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_compiled_det_slogdet_solve_forward_backward(layout):
    # In a graph, det's LU follows the traced tensor's layout, as the backward
    # graph AOTAutograd traced from it does.
    base = pivoted((2, 4, 4), seed=7)
    a = base if layout == "contiguous" else base.mT

    def fn(t):
        sign, logabs = torch.linalg.slogdet(t)
        return torch.linalg.det(t) * 2, sign * logabs
    grads_match(fn, a, tpu_fn=torch.compile(fn, backend="tpu", fullgraph=True))
    # (linalg.solve checks its result with an effectful op, so its graphs run
    # eagerly; TORCH_TPU_FALLBACK=error here would refuse that.)
