"""scaled_dot_product_attention against the CPU. On tpu it takes PyTorch's math
path (_scaled_dot_product_attention_math: matmul, softmax, masking ops)."""
import pytest
import torch
import torch.nn.functional as F

from harness import make, to_tpu


def run(q, k, v, mask=None, seed=9, **kw):
    """Output and q/k/v gradients of SDPA under a fixed upstream gradient."""
    q, k, v = (t.detach().clone().requires_grad_() for t in (q, k, v))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw)
    out.backward(make(out.shape, out.dtype, seed=seed).to(out.device))
    return [out.detach(), q.grad, k.grad, v.grad]


def check_sdpa(q, k, v, mask=None, **kw):
    expect = run(q, k, v, mask, **kw)
    got = run(*to_tpu([q, k, v, mask]), **kw)
    # bf16: matmuls and softmax accumulate in f32 on tpu but round between
    # steps on the CPU; gradients (magnitude ~1) differ by up to 2 bf16 ulps.
    tol = {"atol": 2 ** -6, "rtol": 1.6e-2} if q.dtype == torch.bfloat16 else {}
    for g, e in zip(got, expect):
        assert g.device.type == "tpu"
        torch.testing.assert_close(g.cpu(), e, equal_nan=True, **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa(dtype, causal):
    q, k, v = (make((2, 3, 5, 8), dtype, low=-1, high=1, seed=s) for s in (1, 2, 3))
    check_sdpa(q, k, v, is_causal=causal)
    # Fewer keys than queries, and an explicit scale.
    k2, v2 = make((2, 3, 7, 8), dtype, low=-1, high=1, seed=4), make((2, 3, 7, 4), dtype, low=-1, high=1, seed=5)
    check_sdpa(q, k2, v2, is_causal=causal, scale=0.3)


@pytest.mark.parametrize("mask_kind", ["bool", "float", "bool_broadcast"])
def test_sdpa_masks(mask_kind):
    q, k, v = (make((2, 3, 5, 8), torch.float32, low=-1, high=1, seed=s) for s in (1, 2, 3))
    if mask_kind == "float":
        mask = make((5, 5), torch.float32, seed=6)
    elif mask_kind == "bool":
        mask = make((2, 3, 5, 5), torch.bool, seed=6)
        mask[..., 0] = True  # no fully masked rows (those are NaN on every backend)
    else:
        mask = torch.ones(2, 1, 1, 5, dtype=torch.bool)
        mask[0, ..., 3:] = False
    check_sdpa(q, k, v, mask)


def test_sdpa_gqa_and_3d():
    q = make((2, 4, 5, 8), torch.float32, low=-1, high=1, seed=1)
    k, v = (make((2, 2, 5, 8), torch.float32, low=-1, high=1, seed=s) for s in (2, 3))
    check_sdpa(q, k, v, is_causal=True, enable_gqa=True)
    q3, k3, v3 = (make((3, 6, 8), torch.float32, low=-1, high=1, seed=s) for s in (1, 2, 3))
    check_sdpa(q3, k3, v3)


def test_sdpa_noncontiguous():
    # (B, L, H, E) transposed to (B, H, L, E), as attention layers do.
    q, k, v = (make((2, 5, 3, 8), torch.float32, low=-1, high=1, seed=s).transpose(1, 2) for s in (1, 2, 3))
    check_sdpa(q, k, v, is_causal=True)
