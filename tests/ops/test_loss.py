"""nll_loss, cross_entropy and mse_loss (forward and backward) against the CPU."""
import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from harness import check, check_grads, check_raises_like_cpu, make, to_tpu
from tiers import pairwise

REDUCTIONS = ["none", "mean", "sum"]


def run_grads(fn, inputs, seed=5):
    leaves = [t.detach().clone().requires_grad_() if t is not None and t.is_floating_point() and i == 0 else t
              for i, t in enumerate(inputs)]
    out = fn(*leaves)
    out.backward(make(out.shape, out.dtype, seed=seed).to(out.device))
    return out.detach(), leaves[0].grad


def check_grads(fn, *inputs, **tol):
    expect = run_grads(fn, inputs)
    got = run_grads(fn, to_tpu(list(inputs)))
    for g, e in zip(got, expect):
        assert g.device.type == "tpu"
        torch.testing.assert_close(g.cpu(), e, equal_nan=True, **tol)


@pytest.mark.parametrize(*pairwise("reduction", REDUCTIONS, "weighted", [False, True],
                                  "dtype", [torch.float32, torch.float64, torch.bfloat16]))
def test_nll_loss(reduction, weighted, dtype):
    x = torch.log_softmax(make((6, 5), torch.float32), 1).to(dtype)
    target = torch.tensor([1, 0, 4, -100, 2, 4])
    w = make((5,), dtype, low=0.1, high=2.0, seed=3) if weighted else None
    fn = lambda t, tg, ww: F.nll_loss(t, tg, weight=ww, reduction=reduction)  # noqa: E731
    check(fn, x, target, w)
    check_grads(fn, x, target, w)
    # A custom ignore_index, and a 1-D input with a 0-d target.
    check_grads(lambda t, tg, ww: F.nll_loss(t, tg, weight=ww, reduction=reduction, ignore_index=4), x,
                target.clamp(min=0), w)
    check_grads(lambda t, tg, ww: F.nll_loss(t, tg, weight=ww, reduction=reduction), x[0], torch.tensor(3), w)


def test_nll_loss_edge_cases():
    x = torch.log_softmax(make((3, 4), torch.float32), 1)
    # Every target ignored: mean is 0/0 = NaN, gradients 0.
    check_grads(lambda t, tg: F.nll_loss(t, tg), x, torch.full((3,), -100))
    check(lambda t, tg: F.nll_loss(t, tg), make((0, 4), torch.float32), torch.zeros(0, dtype=torch.long))
    # total_weight output of the ATen op.
    for r in (1, 2):
        check(torch.ops.aten.nll_loss_forward, x, torch.tensor([1, 0, 3]), make((4,), torch.float32, seed=1), r, -100)
    # NaN/inf in classes that are not picked stay out of the loss.
    y = x.clone()
    y[:, 0] = float("nan")
    check_grads(lambda t, tg: F.nll_loss(t, tg), y, torch.tensor([1, 2, 3]))
    check(lambda t, tg: F.nll_loss(t, tg), make((4, 6), torch.float32, noncontiguous=True), torch.tensor([5, 0, 1, 2]))
    check(lambda t, tg: F.nll_loss(t, tg), make((5, 3), torch.float32).t(), torch.tensor([4, 0, 1]))


def test_nll_loss_bad_input():
    x = torch.log_softmax(make((3, 4), torch.float32), 1)
    check_raises_like_cpu(lambda t, tg: F.nll_loss(t, tg), x, torch.tensor([1, 7, 0]))  # IndexError
    check_raises_like_cpu(lambda t, tg: F.nll_loss(t, tg), x, torch.tensor([1, 0]))
    check_raises_like_cpu(lambda t, tg: F.nll_loss(t, tg), x, torch.tensor([1, 0, 2], dtype=torch.int32))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
def test_cross_entropy(reduction, dtype):
    # bf16: the CPU's last-dim log_softmax rounds the row sum of exp to bf16
    # before the log (see test_softmax); tpu keeps it in f32. Allow 2 bf16 ulps.
    tol = {"atol": 2 ** -6, "rtol": 2 ** -6} if dtype == torch.bfloat16 else {}
    x = make((6, 5), dtype)
    target = torch.tensor([1, 0, 4, -100, 2, 4])
    check_grads(lambda t, tg: F.cross_entropy(t, tg, reduction=reduction), x, target, **tol)
    w = make((5,), dtype, low=0.1, high=2.0, seed=3)
    check_grads(lambda t, tg, ww: F.cross_entropy(t, tg, weight=ww, reduction=reduction), x, target, w, **tol)
    # Label smoothing goes through log_softmax + elementwise ops and reductions.
    check_grads(lambda t, tg: F.cross_entropy(t, tg, reduction=reduction, label_smoothing=0.1), x,
                target.clamp(0), **tol)


@pytest.mark.parametrize(*pairwise("reduction", REDUCTIONS, "dtype", [torch.float32, torch.float64, torch.bfloat16],
                                  "shape", [(), (0,), (7,), (3, 4), (2, 0, 3)]))
def test_mse_loss(reduction, dtype, shape):
    a, b = make(shape, dtype, seed=1), make(shape, dtype, seed=2)
    fn = lambda x, y: F.mse_loss(x, y, reduction=reduction)  # noqa: E731
    check(fn, a, b)
    if not (reduction == "mean" and a.numel() == 0):  # PyTorch's meta divides by numel in Python
        check_grads(fn, a, b)


def test_mse_loss_variants():
    a, b = make((3, 4), torch.float32, seed=1), make((3, 4), torch.float32, seed=2)
    check(F.mse_loss, make((3, 4), torch.float32, noncontiguous=True), b)
    check(F.mse_loss, make((4, 3), torch.float32).t(), b)
    check(lambda x, y: torch.ops.aten.mse_loss(x, y, 0), a, make((4,), torch.float32))  # broadcasting
    check(lambda x, y: torch.ops.aten.mse_loss(x, y, 1), a.bfloat16(), b)  # promotion
    check(lambda g, x, y: torch.ops.aten.mse_loss_backward(g, x, y, 1), torch.tensor(1.5), a, b)
    check(lambda g, x, y: torch.ops.aten.mse_loss_backward(g, x, y, 0), make((3, 4), torch.float32, seed=3), a, b)
    out = torch.empty(0)
    check(lambda x, y, o: torch.ops.aten.mse_loss.out(x, y, 2, out=o), a, b, out)
    check_raises_like_cpu(F.mse_loss, a, make((5,), torch.float32))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_spatial(reduction):
    # (N, C, H, W) reaches nll_loss2d; (N, C, L) is reshaped to it.
    x4 = make((2, 4, 3, 5), torch.float32)
    t4 = torch.randint(0, 4, (2, 3, 5), generator=torch.Generator().manual_seed(0))
    t4[0, 1, 2] = -100
    w = make((4,), torch.float32, low=0.1, high=2.0, seed=3)
    check_grads(lambda t, tg: F.cross_entropy(t, tg, reduction=reduction), x4, t4)
    check_grads(lambda t, tg, ww: F.cross_entropy(t, tg, weight=ww, reduction=reduction), x4, t4, w)
    check_grads(lambda t, tg: F.cross_entropy(t, tg, reduction=reduction), x4[:, :, 0], t4[:, 0])
    check_raises_like_cpu(lambda t, tg: F.nll_loss(t, tg), x4, t4.clamp(min=0) + 2)  # IndexError


# --- smooth_l1, huber, l1, binary cross entropy, and composite losses ---


@pytest.mark.parametrize(*pairwise("reduction", REDUCTIONS, "dtype", [torch.float32, torch.float64, torch.bfloat16],
                                  "shape", [(), (7,), (3, 4), (2, 0, 3)],
                                  "name", ["smooth_l1", "smooth_l1_beta0", "huber", "l1", "soft_margin"]))
def test_pointwise_losses(reduction, dtype, shape, name):
    fns = {
        "smooth_l1": lambda x, y: F.smooth_l1_loss(x, y, reduction=reduction, beta=1.5),
        "smooth_l1_beta0": lambda x, y: F.smooth_l1_loss(x, y, reduction=reduction, beta=0.0),
        "huber": lambda x, y: F.huber_loss(x, y, reduction=reduction, delta=0.8),
        "l1": lambda x, y: F.l1_loss(x, y, reduction=reduction),
        "soft_margin": lambda x, y: F.soft_margin_loss(x, y, reduction=reduction),
    }
    a, b = make(shape, dtype, low=-3, high=3, seed=1), make(shape, dtype, low=-3, high=3, seed=2)
    if name == "soft_margin":
        b = torch.sign(b)
    # bf16: the CPU's sums round per step, here once in f32.
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype == torch.bfloat16 and reduction != "none" else {}
    check(fns[name], a, b, **tol)
    if not (reduction == "mean" and a.numel() == 0):
        check_grads(fns[name], a, b, **tol)


@pytest.mark.parametrize(*pairwise("reduction", REDUCTIONS, "dtype", [torch.float32, torch.float64, torch.bfloat16],
                                  "weighted", [False, True]))
def test_binary_cross_entropy(reduction, dtype, weighted):
    x = make((4, 5), dtype, low=0.0, high=1.0, seed=1)
    x[0, 0], x[0, 1] = 0.0, 1.0  # log clamps at -100
    y = make((4, 5), dtype, low=0.0, high=1.0, seed=2)
    w = make((5,), dtype, low=0.1, high=2.0, seed=3) if weighted else None
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype == torch.bfloat16 and reduction != "none" else {}
    fn = lambda a, b, ww: F.binary_cross_entropy(a, b, weight=ww, reduction=reduction)  # noqa: E731
    check(fn, x, y, w, **tol)
    check_grads(fn, x, y, w, **tol)
    logits = make((4, 5), dtype, seed=4)
    pw = make((5,), dtype, low=0.5, high=2.0, seed=5)
    fn2 = lambda a, b, ww, p: F.binary_cross_entropy_with_logits(a, b, weight=ww, pos_weight=p,  # noqa: E731
                                                                 reduction=reduction)
    check_grads(fn2, logits, y, w, pw, **tol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
def test_binary_cross_entropy_double_weight_keeps_the_input_dtype(dtype, reduction):
    """The CPU multiplies the loss by the weight in place: a float64 weight
    gives a result (and gradient) of the input's dtype, the product taken in
    double and rounded. tpu's result was float64."""
    x = make((4, 5), dtype, low=0.05, high=0.95, seed=1)
    y = make((4, 5), dtype, low=0.0, high=1.0, seed=2)
    w = make((5,), torch.float64, low=0.1, high=2.0, seed=3)
    fn = lambda a, b, ww: F.binary_cross_entropy(a, b, weight=ww, reduction=reduction)  # noqa: E731
    check(fn, x, y, w)
    check_grads(fn, x, y, w)


def test_binary_cross_entropy_bad_input():
    check_raises_like_cpu(F.binary_cross_entropy, torch.tensor([0.5, 1.5]), torch.tensor([0.0, 1.0]))
    check_raises_like_cpu(F.binary_cross_entropy, torch.tensor([0.5, float("nan")]), torch.tensor([0.0, 1.0]))
    check_raises_like_cpu(F.binary_cross_entropy, torch.tensor([0.5, 0.2]), torch.tensor([0.0, 1.0, 1.0]))
    # Targets outside [0, 1] raise too (tpu returned a loss), with the
    # message of the CPU's first bad element (it checks input, then target).
    for x, y in [([0.5, 0.2], [2.0, 0.1]), ([0.5, 0.2], [0.5, float("nan")]), ([0.5, -1.0], [3.0, 0.5]),
                 ([1.5, 0.2], [2.0, 0.1]), ([0.5, 0.2], [0.5, -0.1])]:
        e = check_raises_like_cpu(F.binary_cross_entropy, torch.tensor(x), torch.tensor(y))
        which = "input" if not 0 <= x[[not 0 <= a <= 1 or not 0 <= b <= 1 for a, b in zip(x, y)].index(True)] <= 1 \
            else "target"
        assert f"all elements of {which} should be between 0 and 1" in str(e), e


@pytest.mark.parametrize(*pairwise("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16],
                                  "reduction", [0, 1, 2], "weighted", [False, True]))
def test_binary_cross_entropy_backward_is_the_cpus_kernel(dtype, reduction, weighted):
    # grad * (x - y) / max((1 - x) * x, 1e-12f), each step rounded to the
    # dtype, then the weight, then 1/n: bit for bit. 1e-12 is 0 in float16
    # (x = 0, y = 0 gave 0, the CPU 0 / 0 = NaN); the CPU's max(-0, 0) is -0
    # (x = -0 gave -inf, the CPU +inf); float64's epsilon is 1e-12 rounded to
    # float32; bfloat16 rounded once at the end was off by an ulp.
    edge = [0.0, -0.0, 1.0, 0.5, 1e-30, 1 - 1e-7, 1e-8]
    x = torch.cat([make((300,), torch.float32, low=0.0, high=1.0, seed=1), torch.tensor([a for a in edge for _ in edge])])
    y = torch.cat([make((300,), torch.float32, low=0.0, high=1.0, seed=2), torch.tensor([b for _ in edge for b in edge])])
    x, y = x.to(dtype), y.to(dtype)
    w = make(x.shape, dtype, low=0.1, high=2.0, seed=3) if weighted else None
    g = make(x.shape if reduction == 0 else (), dtype, seed=4)
    expected = torch.ops.aten.binary_cross_entropy_backward(g, x, y, w, reduction)
    actual = torch.ops.aten.binary_cross_entropy_backward(g.to("tpu"), x.to("tpu"), y.to("tpu"),
                                                          None if w is None else w.to("tpu"), reduction).cpu()
    assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(actual.signbit()[~expected.isnan()], expected.signbit()[~expected.isnan()])
    if dtype in (torch.bfloat16, torch.float16):  # log and log1p are the CPU's float ones rounded to the dtype
        loss = F.binary_cross_entropy(x.to("tpu"), y.to("tpu"), weight=None if w is None else w.to("tpu"), reduction="none")
        assert_close(loss.cpu(), F.binary_cross_entropy(x, y, weight=w, reduction="none"), rtol=0, atol=0)


def test_loss_layouts_and_backward_ops():
    a, b = make((4, 3), torch.float32, seed=1), make((3, 4), torch.float32, seed=2).t()
    for fn in (F.smooth_l1_loss, F.huber_loss, F.l1_loss):
        check(fn, make((4, 3), torch.float32, noncontiguous=True), b)
        check(fn, a, b)
    g = make((4, 3), torch.float32, seed=3)
    check(lambda *t: torch.ops.aten.smooth_l1_loss_backward(*t, 0, 0.5), g, a, b)
    check(lambda *t: torch.ops.aten.huber_loss_backward(*t, 1, 0.5), torch.tensor(2.0), a, b)
    p = make((4, 3), torch.float32, low=0.01, high=0.99, seed=4)
    check(lambda *t: torch.ops.aten.binary_cross_entropy_backward(*t, None, 2), torch.tensor(2.0), p, p.flip(0))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_composite_losses(reduction):
    x, y = make((4, 6), torch.float32, seed=1), make((4, 6), torch.float32, seed=2)
    check_grads(lambda a, b: F.kl_div(a.log_softmax(1), b.log_softmax(1), reduction=reduction, log_target=True),
                x, y)
    check_grads(lambda a, b: F.poisson_nll_loss(a, b.abs(), reduction=reduction), x, y)
    check_grads(lambda a, b: F.gaussian_nll_loss(a, b, torch.ones_like(b), reduction=reduction), x, y)
    lbl = torch.tensor([1.0, -1.0, 1.0, -1.0])
    check_grads(lambda a, b, t: F.cosine_embedding_loss(a, b, t, reduction=reduction), x, y, lbl)
    check_grads(lambda a, b, t: F.margin_ranking_loss(a, b, t, margin=0.3, reduction=reduction), x[:, 0], y[:, 0], lbl)
    check_grads(lambda a, b: F.hinge_embedding_loss(a, torch.sign(b), reduction=reduction), x, y)
    check_grads(lambda a, b, c: F.triplet_margin_loss(a, b, c, reduction=reduction), x, y, x.flip(0))
    check_grads(lambda a, b: F.multilabel_soft_margin_loss(a, (b > 0).float(), reduction=reduction), x, y)


# binary_cross_entropy: the CPU wants target of input's dtype (RuntimeError).
@pytest.mark.parametrize("dtypes", [(torch.float32, torch.float64), (torch.float64, torch.float32)], ids=str)
def test_binary_cross_entropy_dtype_mismatch_raises_like_cpu(dtypes):
    x, y = torch.tensor(0.3, dtype=dtypes[0]), torch.tensor(0.6, dtype=dtypes[1])
    check_raises_like_cpu(F.binary_cross_entropy, x, y)


# huber_loss keeps the input's dtype on the CPU, whatever the target's (the meta kernel promotes).
@pytest.mark.parametrize(*pairwise("reduction", ["none", "mean", "sum"], "shapes", [((5,), ()), ((5,), (5,)), ((), (5,))],
                                  "dtypes", [(torch.float32, torch.float64), (torch.float64, torch.float32)]))
def test_huber_loss_mixed_dtype_keeps_input_dtype(reduction, shapes, dtypes):
    x = make(shapes[0], dtypes[0])
    y = make(shapes[1], dtypes[1], seed=1)
    with pytest.warns(UserWarning) if shapes[0] != shapes[1] else _nullcontext():
        check(lambda a, b: F.huber_loss(a, b, reduction=reduction, delta=0.7), x, y)
    check(lambda a, b: torch.ops.aten.huber_loss(a, b, {"none": 0, "mean": 1, "sum": 2}[reduction], 0.7), x, y)


# mse_loss_backward and smooth_l1_loss_backward give self's dtype on the CPU
# (computed in the promoted dtype, then cast; the meta kernels promote).
@pytest.mark.parametrize("dtypes", [(torch.float64, torch.float32, torch.float64), (torch.float32, torch.float16, torch.float32),
                                    (torch.float16, torch.float16, torch.float64), (torch.float32, torch.bfloat16, torch.float16)],
                         ids=str)
def test_mse_and_smooth_l1_backward_keep_self_dtype(dtypes):
    g, x, y = make((3, 4), dtypes[0]), make((3, 4), dtypes[1], seed=1), make((3, 4), dtypes[2], seed=2)
    for reduction in (0, 1, 2):
        gr = g if reduction == 0 else g[0, 0]
        check(lambda a, b, c: torch.ops.aten.mse_loss_backward(a, b, c, reduction), gr, x, y)
        check(lambda a, b, c: torch.ops.aten.smooth_l1_loss_backward(a, b, c, reduction, 0.5), gr, x, y)
    check(lambda a, b, c: torch.ops.aten.mse_loss_backward(a, b, c, 1), g[0, 0], x.T, y.T)  # transposed
    check(lambda a, b, c: torch.ops.aten.smooth_l1_loss_backward(a, b, c, 0, 0.0), g[:0], x[:0], y[:0])  # empty
    # An integral self: the out= form computes in the promoted dtype and casts
    # into out (a result typed as self would have truncated it to 0 first).
    xi = make((3, 4), torch.int64, seed=3, low=-5, high=5)
    for fn in (lambda a, b, c, o: torch.ops.aten.mse_loss_backward.grad_input(a, b, c, 0, grad_input=o),
               lambda a, b, c, o: torch.ops.aten.smooth_l1_loss_backward.grad_input(a, b, c, 0, 1.0, grad_input=o)):
        out = torch.empty(3, 4, dtype=torch.float64)
        expected = fn(g.double(), xi, y.double(), out.clone())
        got = fn(to_tpu(g.double()), to_tpu(xi), to_tpu(y.double()), to_tpu(out))
        torch.testing.assert_close(got.cpu(), expected)


def _nullcontext():
    import contextlib
    return contextlib.nullcontext()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multi_margin_loss(dtype, reduction):
    x = make((6, 5), dtype, seed=1, low=-2, high=2)
    t = torch.tensor([0, 4, 2, 2, 1, 3])
    w = make((5,), dtype, seed=2, low=0.1, high=2)
    for p, margin, weighted in [(1, 1.0, False), (2, 0.5, False), (1, 1.5, True), (2, 1.0, True)]:
        fn = lambda a, tt, ww: F.multi_margin_loss(a, tt, p=p, margin=margin, weight=ww,  # noqa: E731
                                                   reduction=reduction)
        check(fn, x, t, w if weighted else None)
        check_grads(lambda a: fn(a, t.to(a.device), w.to(a.device) if weighted else None), x)
    check(lambda a, tt: F.multi_margin_loss(a, tt, reduction=reduction), x[0], t[1])  # one sample


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss(dtype, reduction):
    x = make((4, 5), dtype, seed=3, low=-2, high=2)
    # Targets up to the first -1; later entries are ignored.
    t = torch.tensor([[3, 0, -1, 1, 2], [1, -1, 0, 0, 0], [4, 3, 2, 1, 0], [-1, 2, 2, 2, 2]])
    check(lambda a, tt: F.multilabel_margin_loss(a, tt, reduction=reduction), x, t)
    check(lambda a, tt: torch.ops.aten.multilabel_margin_loss_forward(a, tt, 1), x, t)  # with is_target
    check_grads(lambda a: F.multilabel_margin_loss(a, t.to(a.device), reduction=reduction), x)
    check(lambda a, tt: F.multilabel_margin_loss(a, tt, reduction=reduction), x[0], t[0])


def test_margin_losses_check_targets_like_cpu():
    x = make((3, 4), torch.float32)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x.to("tpu"), torch.tensor([0, 4, 1], device="tpu")).cpu()
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multilabel_margin_loss(x.to("tpu"), torch.tensor([[0, 5, -1, 0]] * 3, device="tpu")).cpu()
    with pytest.raises(RuntimeError, match="p == 1 and p == 2"):  # (F.multi_margin_loss checks p in Python)
        torch.ops.aten.multi_margin_loss(x.to("tpu"), torch.tensor([0, 1, 1], device="tpu"), 3).cpu()
