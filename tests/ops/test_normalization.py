"""layer_norm, rms_norm and embedding (forward and backward) against the CPU."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_raises_like_cpu, make, to_tpu

FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


def run_grads(fn, inputs, seed=5):
    """fn(*inputs) and the gradients of every floating input, under a fixed upstream gradient."""
    leaves = [t.detach().clone().requires_grad_() if t is not None and t.is_floating_point() else t
              for t in inputs]
    out = fn(*leaves)
    out.backward(make(out.shape, out.dtype, seed=seed).to(out.device))
    return [out.detach()] + [t.grad for t in leaves if t is not None and t.requires_grad]


def check_grads(fn, *inputs, **tol):
    expect = run_grads(fn, inputs)
    got = run_grads(fn, to_tpu(list(inputs)))
    assert len(got) == len(expect)
    for g, e in zip(got, expect):
        assert g.device.type == "tpu"
        torch.testing.assert_close(g.cpu(), e, **tol)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,norm", [((5,), (5,)), ((3, 4), (4,)), ((2, 3, 4), (3, 4)), ((0, 4), (4,)),
                                        ((2, 0, 3), (3,))], ids=str)
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_layer_norm_forward(dtype, shape, norm, affine):
    x = make(shape, dtype)
    w = make(norm, dtype, seed=1) if affine != "none" else None
    bias = make(norm, dtype, seed=2) if affine == "both" else None
    check(lambda t, ww, bb: F.layer_norm(t, norm, ww, bb, eps=1e-5), x, w, bias)
    # The saved statistics too. For half inputs PyTorch's meta kernel (which
    # fixes our output dtypes, as on CUDA) makes mean/rstd f32, where the CPU
    # kernel keeps them in the parameters' dtype: compare them as that dtype.
    fn = lambda t, ww, bb: torch.native_layer_norm(t, norm, ww, bb, 1e-3)  # noqa: E731
    expect = fn(x, w, bias)
    got = fn(*to_tpu([x, w, bias]))
    torch.testing.assert_close(got[0].cpu(), expect[0])
    for g, e in zip(got[1:], expect[1:]):
        assert g.dtype == (torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype)
        torch.testing.assert_close(g.cpu().to(e.dtype), e)


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


def test_layer_norm_mixed_and_noncontiguous():
    # bf16 activations with f32 parameters (autocast-style).
    x = make((3, 8), torch.bfloat16)
    check(lambda t, w, b: F.layer_norm(t, (8,), w, b), x, make((8,), torch.float32, seed=1),
          make((8,), torch.float32, seed=2))
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


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
@pytest.mark.parametrize("scale", [False, True])
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
