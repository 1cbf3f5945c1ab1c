"""layer_norm, rms_norm and embedding (forward and backward) against the CPU."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_grads, check_raises_like_cpu, make, to_tpu
from tiers import pairwise

FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


@pytest.mark.parametrize(*pairwise("dtype", FLOATS, "shape,norm", [((5,), (5,)), ((3, 4), (4,)), ((2, 3, 4), (3, 4)),
                                                                    ((0, 4), (4,)), ((2, 0, 3), (3,))],
                                  "affine", ["none", "weight", "both"]))
def test_layer_norm_forward(dtype, shape, norm, affine):
    x = make(shape, dtype)
    w = make(norm, dtype, seed=1) if affine != "none" else None
    bias = make(norm, dtype, seed=2) if affine == "both" else None
    check(lambda t, ww, bb: F.layer_norm(t, norm, ww, bb, eps=1e-5), x, w, bias)
    # The saved statistics too, in the CPU's dtype: the input's (half types
    # included), float32 only for a "mixed" call (see the mixed test).
    check(lambda t, ww, bb: torch.native_layer_norm(t, norm, ww, bb, 1e-3), x, w, bias)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,norm", [((6,), (6,)), ((3, 4), (4,)), ((2, 3, 4), (3, 4))], ids=str)
def test_layer_norm_backward(dtype, shape, norm):
    # Half types: grads are sums over rows of half products, rounded once on
    # tpu but per step on the CPU; allow a few half ulps.
    tol = {}
    if dtype in (torch.bfloat16, torch.float16):
        eps = torch.finfo(dtype).eps
        tol = {"atol": 4 * eps, "rtol": 4 * eps}
    check_grads(lambda t, w, b: F.layer_norm(t, norm, w, b), make(shape, dtype), make(norm, dtype, seed=1),
                make(norm, dtype, seed=2), **tol)
    # Without a bias (or any parameter), including a normalized shape that is the whole input.
    check_grads(lambda t, w: F.layer_norm(t, norm, w), make(shape, dtype), make(norm, dtype, seed=1), **tol)
    check_grads(lambda t: F.layer_norm(t, shape), make(shape, dtype), **tol)


def test_layer_norm_mixed_and_noncontiguous():
    # bf16 activations with f32 parameters (autocast-style).
    x = make((3, 8), torch.bfloat16)
    check(lambda t, w, b: F.layer_norm(t, (8,), w, b), x, make((8,), torch.float32, seed=1),
          make((8,), torch.float32, seed=2))
    check(lambda t, w: torch.native_layer_norm(t, (8,), w, None, 1e-5), x, make((8,), torch.float32, seed=1))
    check(lambda t: F.layer_norm(t, (4,)), make((3, 4), torch.float32, noncontiguous=True))
    check(lambda t: F.layer_norm(t, (3,)), make((3, 5), torch.float32).t())
    check_grads(lambda t, w, b: F.layer_norm(t, (3,), w, b), make((3, 5), torch.float32).t(),
                make((3,), torch.float32, seed=1), make((3,), torch.float32, seed=2))
    # Constant rows: variance 0, rstd = 1/sqrt(eps).
    check(lambda t: torch.native_layer_norm(t, (4,), None, None, 1e-5), torch.ones(2, 4))


def test_layer_norm_module_training_step():
    def run(dev):
        torch.manual_seed(0)
        m = torch.nn.LayerNorm(6).to(dev)
        x = make((4, 6), torch.float32).to(dev).requires_grad_()
        m(x).backward(make((4, 6), torch.float32, seed=3).to(dev))
        return [t.cpu() for t in (x.grad, m.weight.grad, m.bias.grad)]

    for g, e in zip(run("tpu"), run("cpu")):
        torch.testing.assert_close(g, e)


def test_layer_norm_bad_input():
    check_raises_like_cpu(lambda t: F.layer_norm(t, (5,)), make((3, 4), torch.float32))
    check_raises_like_cpu(lambda t, w: F.layer_norm(t, (4,), w), make((3, 4), torch.float32),
                          make((3,), torch.float32))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_rms_norm(dtype):
    # rms_norm is CompositeImplicitAutograd: it runs as pow/mean/rsqrt/mul on tpu.
    x, w = make((3, 8), dtype), make((8,), dtype, seed=1)
    check(lambda t: F.rms_norm(t, (8,)), x)
    check(lambda t, ww: F.rms_norm(t, (8,), ww, eps=1e-4), x, w)
    if dtype in (torch.float32, torch.float64):
        check_grads(lambda t, ww: F.rms_norm(t, (8,), ww), x, w)


@pytest.mark.parametrize(*pairwise("dtype", [torch.float32, torch.float64, torch.bfloat16],
                                  "padding_idx", [None, 2, -1], "scale", [False, True]))
def test_embedding(dtype, padding_idx, scale):
    weight = make((10, 4), dtype)
    idx = torch.tensor([[1, 2, 3, 2], [9, 1, 1, 0]])
    fn = lambda w, i: F.embedding(i, w, padding_idx=padding_idx, scale_grad_by_freq=scale)  # noqa: E731
    check(fn, weight, idx)
    check_grads(fn, weight, idx)


def test_embedding_backward_direct():
    g = make((2, 3, 4), torch.float32)
    for idx in (torch.tensor([[0, 5, 5], [2, 5, 0]]), torch.tensor([[0, 5, 5], [2, 5, 0]], dtype=torch.int32)):
        check(torch.ops.aten.embedding_dense_backward, g, idx, 7, -1, False)
        check(torch.ops.aten.embedding_dense_backward, g, idx, 7, 5, True)
    check(torch.ops.aten.embedding_dense_backward, make((0, 4), torch.float32), torch.zeros(0, dtype=torch.long),
          3, -1, False)


# --- batch_norm, instance_norm, group_norm ---

BN_DTYPES = [torch.float32, torch.bfloat16, torch.float64]


def check_mutating(fn, *args, **tol):
    """Like check, for fn that updates its arguments in place: each run gets fresh copies."""
    fresh = lambda: [a.clone() if isinstance(a, torch.Tensor) else a for a in args]  # noqa: E731
    expect = fn(*fresh())
    got = fn(*to_tpu(fresh()))
    for g, e in zip(got, expect):
        assert g.device.type == "tpu"
        torch.testing.assert_close(g.cpu(), e, **tol)


def bn_run(dev, dtype, shape, training, affine, track, momentum=0.1, channels_last=False, seed=0):
    """One BatchNorm forward + backward on `dev`: output, grads, updated running stats."""
    c = shape[1]
    torch.manual_seed(seed)
    m = {2: torch.nn.BatchNorm1d, 3: torch.nn.BatchNorm1d, 4: torch.nn.BatchNorm2d, 5: torch.nn.BatchNorm3d}[len(shape)](
        c, affine=affine, track_running_stats=track, momentum=momentum)
    if affine:
        with torch.no_grad():
            m.weight.copy_(make((c,), torch.float32, seed=seed + 1))
            m.bias.copy_(make((c,), torch.float32, seed=seed + 2))
    if track:
        m.running_mean.copy_(make((c,), torch.float32, seed=seed + 3))
        m.running_var.copy_(make((c,), torch.float32, low=0.5, high=2.0, seed=seed + 4))
    m = m.to(dev, dtype)
    m.train(training)
    x = make(shape, dtype, seed=seed)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last if len(shape) == 4 else torch.channels_last_3d)
    x = to_tpu(x) if dev == "tpu" else x
    x = x.detach().requires_grad_()
    y = m(x)
    y.backward(make(y.shape, dtype, seed=seed + 5).to(dev))
    r = [y.detach(), x.grad]
    if affine:
        r += [m.weight.grad, m.bias.grad]
    if track:
        r += [m.running_mean, m.running_var, m.num_batches_tracked]
    return [t.detach().cpu() for t in r]


@pytest.mark.parametrize(*pairwise("dtype", BN_DTYPES, "shape", [(4, 3), (3, 2, 5), (2, 3, 4, 5), (2, 2, 3, 2, 3)],
                                  "training", [True, False],
                                  "affine,track", [(True, True), (False, True), (True, False)]))
def test_batch_norm_module(dtype, shape, training, affine, track):
    if not training and not track:
        training = True  # eval without running stats uses batch statistics anyway
    got = bn_run("tpu", dtype, shape, training, affine, track)
    expect = bn_run("cpu", dtype, shape, training, affine, track)
    # Half types: the CPU sums statistics and grads in its own order and
    # rounds per step; allow a few bf16 ulps.
    tol = {"atol": 4e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {}
    for g, e in zip(got, expect):
        torch.testing.assert_close(g, e, **tol)


def test_batch_norm_layouts_and_momentum():
    for shape in ((2, 3, 4, 5), (1, 2, 3, 2, 3)):
        got = bn_run("tpu", torch.float32, shape, True, True, True, channels_last=True)
        expect = bn_run("cpu", torch.float32, shape, True, True, True, channels_last=True)
        for g, e in zip(got, expect):
            torch.testing.assert_close(g, e)
    # momentum=None: cumulative average over num_batches_tracked, two steps.
    def two_steps(dev):
        m = torch.nn.BatchNorm1d(3, momentum=None).to(dev)
        for s in range(2):
            m(make((5, 3), torch.float32, seed=s).to(dev))
        return [m.running_mean.cpu(), m.running_var.cpu(), m.num_batches_tracked.cpu()]

    for g, e in zip(two_steps("tpu"), two_steps("cpu")):
        torch.testing.assert_close(g, e)
    # Non-contiguous input through the functional form, training stats.
    x = make((4, 3, 6), torch.float32, noncontiguous=True)
    check_mutating(lambda t, rm, rv: (F.batch_norm(t, rm, rv, training=True), rm, rv), x, torch.zeros(3),
                   torch.ones(3))


def test_batch_norm_mixed_dtype():
    # bf16 activations, f32 parameters and running stats (autocast-style).
    def run(dev):
        m = torch.nn.BatchNorm2d(3).to(dev)
        x = make((2, 3, 4, 4), torch.bfloat16).to(dev).requires_grad_()
        y = m(x)
        y.float().sum().backward()
        return [t.detach().cpu() for t in (y, x.grad, m.weight.grad, m.running_mean, m.running_var)]

    for g, e in zip(run("tpu"), run("cpu")):
        torch.testing.assert_close(g, e, atol=4e-2, rtol=2e-2)


F32, F64, BF16 = torch.float32, torch.float64, torch.bfloat16
NORM_PARAM_DTYPES = [(F64, F32, F32), (F32, F64, F64), (F32, F32, F64), (BF16, F32, F64), (BF16, None, F64),
                     (F32, None, F64), (BF16, F64, F64), (BF16, BF16, F32), (BF16, F32, F32), (torch.float16, F32, None)]
NORMS = {
    "layer_norm": lambda x, w, b: F.layer_norm(x.transpose(1, 2), (4,), w, b),
    "group_norm": lambda x, w, b: F.group_norm(x, 2, w, b),
    "batch_norm": lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
    "batch_norm eval": lambda x, w, b: F.batch_norm(
        x, torch.zeros(4, dtype=(w if w is not None else b).dtype, device=x.device),
        torch.ones(4, dtype=(w if w is not None else b).dtype, device=x.device), w, b),
}


@pytest.mark.parametrize("norm", list(NORMS))
@pytest.mark.parametrize("dtypes", NORM_PARAM_DTYPES, ids=str)
def test_norm_parameter_dtypes_like_cpu(dtypes, norm):
    """The CPU's mixed-dtype rule for affine parameters: when the first one
    given differs from the input, all must be float32 and the input bfloat16
    or half ("mixed dtype (CPU): ..."); otherwise each must be the input's.
    tpu computed every combination (layer/group norm, batch norm without
    running statistics); it now raises with the CPU's message, and computes
    what the CPU computes."""
    xdt, wdt, bdt = dtypes
    fn = NORMS[norm]
    x = make((2, 4, 3), xdt)
    w = make((4,), wdt, seed=1) if wdt else None
    b = make((4,), bdt, seed=2) if bdt else None
    try:
        want = fn(x, w, b)
    except RuntimeError as cpu:
        e = check_raises_like_cpu(fn, x, w, b)
        assert str(e).splitlines()[0] == str(cpu).splitlines()[0]
        return
    torch.testing.assert_close(fn(*to_tpu([x, w, b])).cpu(), want, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_half_statistics_like_cpu(dtype, training):
    # The CPU keeps save_mean/save_invstd in the input's dtype (float32 for a
    # mixed call) and, training, normalizes with those rounded statistics.
    x = make((5, 4, 6), dtype)
    w, b = make((4,), dtype, seed=1), make((4,), dtype, seed=2)
    rm, rv = make((4,), dtype, seed=3), make((4,), dtype, low=0.5, high=2, seed=4)
    check(lambda t, ww, bb, m, v: torch.native_batch_norm(t, ww, bb, m.clone(), v.clone(), training, 0.1, 1e-5),
          x, w, b, rm, rv)
    mixed = [p.float() for p in (w, b, rm, rv)]
    check(lambda t, ww, bb, m, v: torch.native_batch_norm(t, ww, bb, m.clone(), v.clone(), training, 0.1, 1e-5)[1:],
          x, *mixed)


def test_batch_norm_aten_ops():
    x, w, b = make((3, 4, 5), torch.float32), make((4,), torch.float32, seed=1), make((4,), torch.float32, seed=2)
    rm, rv = make((4,), torch.float32, seed=3), make((4,), torch.float32, low=0.5, high=2, seed=4)
    for training in (True, False):
        # In eval the CPU returns empty saved stats where the meta kernel gives [C]: not compared.
        keep = 3 if training else 1
        check_mutating(lambda *a: torch.ops.aten._native_batch_norm_legit(*a, training, 0.2, 1e-3)[:keep] + (a[3], a[4]),
                       x, w, b, rm, rv)
        check(lambda *a: torch.ops.aten.native_batch_norm(*a, False, 0.2, 1e-3)[0], x, w, b, rm, rv)
    check(lambda *a: torch.ops.aten._native_batch_norm_legit.no_stats(*a, True, 0.1, 1e-5), x, w, b)
    check(lambda *a: torch.ops.aten.native_batch_norm(*a, None, None, True, 0.1, 1e-5), x, w, b)
    check(lambda *a: torch.ops.aten._native_batch_norm_legit_no_training(*a, 0.1, 1e-5)[0], x, w, b, rm, rv)
    check_mutating(lambda *a: torch.ops.aten._batch_norm_with_update(*a, 0.1, 1e-5)[:3] + (a[3], a[4]),
                   x, w, b, rm, rv)
    check_mutating(lambda *a: torch.ops.aten._native_batch_norm_legit_functional(*a, True, 0.1, 1e-5),
                   x, w, b, rm, rv)
    g = make((3, 4, 5), torch.float32, seed=6)
    for train in (True, False):
        _, sm, si = torch.ops.aten.native_batch_norm(x, w, b, rm, rv, train, 0.1, 1e-5)
        check(lambda *a: torch.ops.aten.native_batch_norm_backward(*a, train, 1e-5, [True, True, True]),
              g, x, w, rm, rv, sm, si)


def test_batch_norm_bad_input():
    check_raises_like_cpu(lambda t: F.batch_norm(t, None, None, training=True), make((1, 3), torch.float32))
    check_raises_like_cpu(lambda t, rm, rv: F.batch_norm(t, rm, rv), make((2, 3), torch.float32),
                          torch.zeros(4), torch.ones(4))


@pytest.mark.parametrize(*pairwise("dtype", BN_DTYPES, "shape", [(2, 3, 5), (2, 3, 4, 5), (1, 2, 3, 2, 3)],
                                  "affine", [False, True]))
def test_instance_norm(dtype, shape, affine):
    c = shape[1]
    w = make((c,), dtype, seed=1) if affine else None
    b = make((c,), dtype, seed=2) if affine else None
    tol = {"atol": 4e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {}
    fn = lambda t, ww, bb: F.instance_norm(t, weight=ww, bias=bb)  # noqa: E731
    check(fn, make(shape, dtype), w, b, **tol)
    if dtype != torch.bfloat16:
        check_grads(fn, make(shape, dtype), w, b)
    # With running stats: updated in place with the mean over the batch.
    rm, rv = torch.zeros(c, dtype=dtype), torch.ones(c, dtype=dtype)
    check_mutating(lambda t, m, v: (F.instance_norm(t, m, v, use_input_stats=True, momentum=0.3), m, v),
                   make(shape, dtype), rm, rv, **tol)


@pytest.mark.parametrize(*pairwise("dtype", BN_DTYPES, "shape,groups", [((2, 6, 5), 3), ((2, 4, 3, 5), 2), ((3, 6), 2),
                                                                      ((1, 4, 2, 3, 2), 1), ((0, 4, 3), 2)],
                                  "affine", [False, True]))
def test_group_norm(dtype, shape, groups, affine):
    c = shape[1]
    w = make((c,), dtype, seed=1) if affine else None
    b = make((c,), dtype, seed=2) if affine else None
    fn = lambda t, ww, bb: F.group_norm(t, groups, ww, bb, eps=1e-4)  # noqa: E731
    x = make(shape, dtype)
    # Half types: statistics and grads are sums rounded once here, per step on the CPU.
    tol = {"atol": 4e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {}
    check(fn, x, w, b, **tol)
    if x.numel():
        check_grads(fn, x, w, b, **tol)


def test_group_norm_layouts_and_stats():
    x = make((2, 4, 3, 5), torch.float32)
    w, b = make((4,), torch.float32, seed=1), make((4,), torch.float32, seed=2)
    check(lambda t: F.group_norm(t, 2), x.contiguous(memory_format=torch.channels_last))
    check_grads(lambda t, ww, bb: F.group_norm(t, 2, ww, bb), x.transpose(2, 3), w, b)
    check(lambda t: F.group_norm(t, 2), make((2, 4, 6), torch.float32, noncontiguous=True))
    check(lambda *a: torch.ops.aten.native_group_norm(*a, 2, 4, 15, 2, 1e-5), x, w, b)
    check_raises_like_cpu(lambda t: F.group_norm(t, 3), x)


# --- edge cases the cache-order property test found ---

_BN_X = torch.randn(3, 2, 4, generator=torch.Generator().manual_seed(0))
_BN_ARGS = [torch.randn(2, generator=torch.Generator().manual_seed(i)) for i in range(3)] + [torch.rand(2) + 0.5]


@pytest.mark.parametrize("op", ["native_batch_norm", "_native_batch_norm_legit"])
@pytest.mark.parametrize("momentum,eps", [(-1.2, 1e-5), (-1.2, 2.0), (2.0, 1e-5)])
def test_batch_norm_eval_saves_empty_stats_like_cpu(op, momentum, eps):
    # In evaluation the CPU returns save_mean/save_invstd of shape [0]; the meta kernel says [C].
    w, b, rm, rv = _BN_ARGS
    fn = lambda *a: getattr(torch.ops.aten, op)(*a, False, momentum, eps)  # noqa: E731
    check(fn, _BN_X, w, b, rm.clone(), rv.clone())


@pytest.mark.parametrize("op", ["native_batch_norm", "_native_batch_norm_legit", "_batch_norm_with_update"])
@pytest.mark.parametrize("which", ["weight", "bias"])
@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_0d_affine_raises_like_batch_norm(op, which, training):
    # The CPU's kernel reads a 0-d weight/bias as if it had C elements (past
    # its end: an undefined result); torch.batch_norm refuses it with the
    # RuntimeError below, and so does every batch norm op on tpu.
    if op == "_batch_norm_with_update" and not training:
        pytest.skip("_batch_norm_with_update always trains")
    w, b, rm, rv = _BN_ARGS
    p = torch.tensor(1.5)
    ww, bb = (p, b) if which == "weight" else (w, p)
    with pytest.raises(RuntimeError, match=f"{which} should contain 2 elements not 1") as cpu:
        torch.batch_norm(_BN_X, ww, bb, rm.clone(), rv.clone(), training, -1.2, 1e-5, False)
    ext = [] if op == "_batch_norm_with_update" else [training]
    with pytest.raises(RuntimeError, match=f"{which} should contain 2 elements not 1"):
        getattr(torch.ops.aten, op)(*to_tpu([_BN_X, ww, bb, rm.clone(), rv.clone()]), *ext, -1.2, 1e-5)


@pytest.mark.parametrize("op", ["native_batch_norm", "_native_batch_norm_legit", "_batch_norm_with_update"])
@pytest.mark.parametrize("shape,dtype", [((), torch.float32), ((), torch.float64), ((2,), torch.float32)], ids=str)
def test_batch_norm_low_rank_input_raises_like_cpu(op, shape, dtype):
    # 0-d: the CPU raises ValueError, 1-d: IndexError (the meta kernel: IndexError, or a result).
    w, b, rm, rv = _BN_ARGS
    ext = [] if op == "_batch_norm_with_update" else [True]
    check_raises_like_cpu(lambda *a: getattr(torch.ops.aten, op)(*a, *ext, -1.2, 1e-5),
                          torch.ones(shape, dtype=dtype), w, b, rm.clone(), rv.clone())


@pytest.mark.parametrize("which", ["weight", "bias"])
@pytest.mark.parametrize("pdtype", [torch.float32, torch.float64], ids=str)
def test_group_norm_0d_affine_raises_like_cpu(which, pdtype):
    x, p, full = torch.randn(1, 6, 3), torch.tensor(1.5, dtype=pdtype), torch.randn(6)
    args = (x, p, full) if which == "weight" else (x, full, p)
    check_raises_like_cpu(lambda *a: torch.ops.aten.native_group_norm(*a, 1, 6, 3, 2, 0.5), *args)
