"""ctc_loss (_ctc_loss, _ctc_loss_backward; int[] and Tensor lengths) against the CPU kernel (LossCTC.cpp):
losses, gradients, the defined part of log_alpha, errors."""
import pytest
import torch
import torch.nn.functional as F

from harness import check_raises_like_cpu, make, to_tpu
from tiers import pairwise

aten = torch.ops.aten


def log_probs(T, B, C, dtype, seed=0, noncontiguous=False):
    x = make((T, B, C), dtype, seed=seed, low=-3, high=3, noncontiguous=noncontiguous)
    return x.log_softmax(2)


def targets_for(B, S, C, blank, seed=1, repeats=False):
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(0, C - 1, (B, S), generator=g)
    t = t + (t >= blank).long()  # never the blank
    if repeats and S > 1:
        t[:, 1] = t[:, 0]  # a repeated label: the s-2 skip is closed there
    return t


def run(lp, tg, il, tl, device, **kw):
    lp = lp.detach().clone().to(device).requires_grad_()
    loss = F.ctc_loss(lp, tg.to(device), il.to(device) if isinstance(il, torch.Tensor) else il,
                      tl.to(device) if isinstance(tl, torch.Tensor) else tl, **kw)
    g = make(loss.shape, loss.dtype, seed=9).to(device)
    (grad,) = torch.autograd.grad(loss, lp, g)
    return loss.detach().cpu(), grad.cpu()


def compare(lp, tg, il, tl, **kw):
    expect = run(lp, tg, il, tl, "cpu", **kw)
    got = run(lp, tg, il, tl, "tpu", **kw)
    torch.testing.assert_close(got, expect, equal_nan=True)


LENGTHS = [  # (T, input_lengths, target_lengths, S)
    (12, [12, 12, 12], [4, 5, 3], 5),
    (12, [12, 7, 1], [4, 3, 0], 5),     # shorter inputs, an empty target
    (6, [6, 5, 6], [5, 2, 6], 6),       # targets too long for the input: an infinite loss
    (5, [0, 5, 3], [0, 2, 1], 3),       # an empty input with an empty target (loss 0)
]


@pytest.mark.parametrize(*pairwise("dtype", [torch.float32, torch.float64], "case", range(len(LENGTHS)),
                                  "layout", ["padded", "concatenated"], "reduction", ["none", "mean", "sum"],
                                  "zero_infinity", [False, True]))
def test_ctc_loss(dtype, case, layout, reduction, zero_infinity):
    T, il, tl, S = LENGTHS[case]
    B, C, blank = len(il), 6, 0
    lp = log_probs(T, B, C, dtype, seed=case)
    tg = targets_for(B, S, C, blank, repeats=case == 0)
    if layout == "concatenated":
        tg = torch.cat([tg[b, : tl[b]] for b in range(B)])
    kw = dict(blank=blank, reduction=reduction, zero_infinity=zero_infinity)
    compare(lp, tg, il, tl, **kw)
    compare(lp, tg, torch.tensor(il), torch.tensor(tl), **kw)


@pytest.mark.parametrize("blank", [2, 5])
def test_blank_and_views(blank):
    T, B, C = 9, 2, 6
    lp = log_probs(T, B, C, torch.float32, seed=3, noncontiguous=True)
    tg = targets_for(B, 4, C, blank, repeats=True)
    compare(lp, tg, [9, 8], [4, 3], blank=blank, reduction="none")
    wide = targets_for(B, 8, C, blank)
    compare(lp, wide[:, ::2], [9, 8], [4, 2], blank=blank, reduction="sum")  # strided targets
    compare(lp.transpose(0, 1).contiguous().transpose(0, 1), tg.int(), [9, 9], [4, 4], blank=blank)


def test_unbatched():
    lp = log_probs(7, 1, 5, torch.float64, seed=4)[:, 0]
    compare(lp, torch.tensor([1, 2, 2]), [7], [3], reduction="none")


@pytest.mark.parametrize("lengths", ["int", "tensor"])
def test_direct_ops(lengths):
    T, B, C = 8, 3, 5
    lp = log_probs(T, B, C, torch.float64, seed=5)
    tg = targets_for(B, 4, C, 0)
    il, tl = [8, 6, 3], [4, 1, 2]
    if lengths == "tensor":
        il, tl = torch.tensor(il), torch.tensor(tl)
    nll, la = aten._ctc_loss(lp, tg, il, tl, 0, False)
    nll_t, la_t = aten._ctc_loss(*to_tpu([lp, tg, il, tl]), 0, False)
    torch.testing.assert_close(nll_t.cpu(), nll)
    assert la_t.shape == la.shape and la_t.dtype == la.dtype
    ilv, tlv = [int(x) for x in il], [int(x) for x in tl]
    for b in range(B):  # the CPU leaves the rest of log_alpha uninitialized
        torch.testing.assert_close(la_t.cpu()[b, : ilv[b], : 2 * tlv[b] + 1], la[b, : ilv[b], : 2 * tlv[b] + 1])
    g = make((B,), torch.float64, seed=6)
    expect = aten._ctc_loss_backward(g, lp, tg, il, tl, nll, la, 0, False)
    got = aten._ctc_loss_backward(*to_tpu([g, lp, tg, il, tl, nll, la]), 0, False)
    torch.testing.assert_close(got.cpu(), expect)


def test_errors():
    lp = log_probs(5, 2, 4, torch.float32)
    tg = targets_for(2, 3, 4, 0)
    check_raises_like_cpu(lambda lp, t: F.ctc_loss(lp, t, [5, 5], [3, 3], blank=4), lp, tg)  # blank out of range
    check_raises_like_cpu(lambda lp, t: F.ctc_loss(lp, t, [6, 5], [3, 3]), lp, tg)  # input longer than log_probs
    check_raises_like_cpu(lambda lp, t: F.ctc_loss(lp, t, [5, 5], [4, 3]), lp, tg)  # target longer than targets
    check_raises_like_cpu(lambda lp, t: F.ctc_loss(lp, t, [5, 5], [-1, 3]), lp, tg)
    check_raises_like_cpu(lambda lp, t: F.ctc_loss(lp, t, [5, 5], [3, 3]), lp.half(), tg)  # no half kernel
    check_raises_like_cpu(lambda lp, t, il: F.ctc_loss(lp, t, il, torch.tensor([3, 3])), lp, tg,
                          torch.tensor([5.0, 5.0]))  # lengths must be integral
