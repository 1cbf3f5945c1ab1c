"""embedding_bag (_embedding_bag, _embedding_bag_forward_only and their backward ops) against the CPU kernel
(EmbeddingBag.cpp): outputs, the auxiliary outputs offset2bag / bag_size / max_indices, gradients, errors."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_raises_like_cpu, make, to_cpu, to_tpu
from tiers import pairwise

aten = torch.ops.aten
DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
MODES = {"sum": 0, "mean": 1, "max": 2}


def weight(dtype, v=10, d=3, seed=0, noncontiguous=False):
    return make((v, d), dtype, seed=seed, low=-2, high=2, noncontiguous=noncontiguous)


INDICES = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 7, 7])
CASES = [  # (offsets, include_last_offset)
    (torch.tensor([0, 4, 4, 6]), False),          # an empty bag
    (torch.tensor([0, 2, 5, 10]), True),
    (torch.tensor([0, 2, 5]), True),              # the last offset short of N
    (torch.tensor([0]), False),
    (torch.tensor([0, 10]), False),               # a trailing empty bag
]


@pytest.mark.parametrize(*pairwise("dtype", DTYPES, "mode", list(MODES), "padding_idx", [-1, 4, 7],
                                  "case", range(len(CASES)), "op", ["_embedding_bag", "_embedding_bag_forward_only"]))
def test_forward_aux_outputs(dtype, mode, padding_idx, case, op):
    offsets, ilo = CASES[case]
    fn = getattr(aten, op)
    check(lambda w, i, o: tuple(fn(w, i, o, False, MODES[mode], False, None, ilo, padding_idx)),
          weight(dtype), INDICES, offsets)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("padding_idx", [-1, 2])
def test_per_sample_weights_forward(dtype, padding_idx):
    psw = make((10,), dtype, seed=3, low=-1, high=1)
    check(lambda w, i, o, p: tuple(aten._embedding_bag(w, i, o, False, 0, False, p, False, padding_idx)),
          weight(dtype), INDICES, torch.tensor([0, 3, 3, 7]), psw)


def test_index_dtypes_and_views():
    w = weight(torch.float32, noncontiguous=True)  # a column stride != 1: the CPU's slow path (offset2bag kept)
    check(lambda w, i, o: tuple(aten._embedding_bag(w, i, o, False, 0, False, None, False, -1)),
          w, INDICES.int(), torch.tensor([0, 5]))
    check(lambda w, i, o: tuple(aten._embedding_bag(w, i, o, False, 1, False, None, False, -1)),
          weight(torch.float32), INDICES, torch.tensor([0, 5], dtype=torch.int32))
    big = weight(torch.float32, v=12, d=6)
    check(lambda w, i, o: tuple(aten._embedding_bag(w[1:11, ::2], i, o, False, 2, False, None, False, -1)),
          big, INDICES, torch.tensor([0, 5]))


def test_max_nan_and_ties():
    w = torch.tensor([[float("nan"), 1.0], [2.0, float("nan")], [3.0, 0.0], [3.0, -0.0]])
    check(lambda w, i, o: tuple(aten._embedding_bag(w, i, o, False, 2, False, None, False, -1)),
          w, torch.tensor([0, 1, 2, 1, 0, 2, 3, 3, 2]), torch.tensor([0, 3, 6]))


@pytest.mark.parametrize("n", [0, 1])
def test_empty(n):
    for mode in range(3):
        check(lambda w, i, o: tuple(aten._embedding_bag(w, i, o, False, mode, False, None, False, -1)),
              weight(torch.float32), INDICES[:n], torch.tensor([0, 0])[: 2 - n])
        # zero columns: float64 (the CPU's fbgemm fast path fails on them, depending on its thread split)
        check(lambda w, i, o: tuple(aten._embedding_bag(w, i, o, False, mode, False, None, False, -1)),
              weight(torch.float64, d=0), INDICES, torch.tensor([0, 4]))


def _functional_grads(dtype, mode, per_sample=False, padding_idx=None, scale_grad_by_freq=False, two_d=False):
    w = weight(dtype, seed=1)
    psw = make((10,), dtype, seed=2, low=-1, high=1) if per_sample else None
    if two_d:
        idx, offsets = INDICES.view(2, 5), None
    else:
        idx, offsets = INDICES, torch.tensor([0, 3, 3, 8])
    if psw is not None and two_d:
        psw = psw.view(2, 5)

    def run(w, psw, idx, offsets, device):
        w = w.detach().clone().requires_grad_()
        leaves = [w]
        if psw is not None:
            psw = psw.detach().clone().requires_grad_()
            leaves.append(psw)
        out = F.embedding_bag(idx, w, offsets, mode=mode, per_sample_weights=psw, padding_idx=padding_idx,
                              scale_grad_by_freq=scale_grad_by_freq)
        g = make(out.shape, dtype, seed=7).to(device)
        grads = torch.autograd.grad(out, leaves, g)
        return [out.detach()] + list(grads)

    expect = run(w, psw, idx, offsets, "cpu")
    got = run(*to_tpu([w, psw, idx, offsets]), "tpu")
    for g, e in zip(got, expect):
        assert g.device.type == "tpu"
        torch.testing.assert_close(g.cpu(), e)


@pytest.mark.parametrize(*pairwise("dtype", DTYPES, "mode", list(MODES), "padding_idx", [None, 4],
                                  "two_d", [False, True]))
def test_backward(dtype, mode, padding_idx, two_d):
    _functional_grads(dtype, mode, padding_idx=padding_idx, two_d=two_d)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("padding_idx", [None, 7])
def test_backward_per_sample_weights(dtype, padding_idx):
    _functional_grads(dtype, "sum", per_sample=True, padding_idx=padding_idx)
    _functional_grads(dtype, "sum", per_sample=True, padding_idx=padding_idx, two_d=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_backward_scale_grad_by_freq(dtype, mode):
    # the CPU divides by the count at the rank of the index among the sorted indices; kept as is
    _functional_grads(dtype, mode, scale_grad_by_freq=True)


def test_backward_ops_directly():
    g = make((3, 3), torch.float32, seed=4)
    idx = INDICES.clone()
    o2b = torch.tensor([0, 0, 0, 1, 1, 1, 1, 1, 2, 2])
    bag_size = torch.tensor([3, 5, 2])
    check(lambda g, i, o, ob, bs: aten._embedding_bag_backward(g, i, o, ob, bs, bs, 10, True, 1, False, None, -1),
          g, idx, torch.tensor([0, 3, 8]), o2b, bag_size)
    # an empty offset2bag (the forward's fast path) is recomputed from the offsets
    check(lambda g, i, o, ob, bs: aten._embedding_bag_backward(g, i, o, ob, bs, bs, 10, False, 0, False, None, -1),
          g, idx, torch.tensor([0, 3, 8]), torch.empty(0, dtype=torch.long), bag_size)
    check(lambda g, i, ob, bs: aten._embedding_bag_dense_backward(g, i, ob, bs, bs, 10, False, 0, None, 2),
          g, idx, o2b, bag_size)
    check(lambda g, w, i, o, ob: aten._embedding_bag_per_sample_weights_backward(g, w, i, o, ob, 0, 4),
          g, weight(torch.float32), idx, torch.tensor([0, 3, 8]), o2b)


def test_errors():
    w = weight(torch.float32)
    call = lambda w, i, o: aten._embedding_bag(w, i, o, False, 0, False, None, False, -1)  # noqa: E731
    e = check_raises_like_cpu(call, w, torch.tensor([1, 10]), torch.tensor([0]))  # index out of range
    assert "embedding_bag" in str(e)
    check_raises_like_cpu(call, w, torch.tensor([1, -1]), torch.tensor([0]))
    check_raises_like_cpu(lambda w, i, o: aten._embedding_bag(w, i, o, False, 2, False, None, False, 3),
                          w.double(), torch.tensor([3, 12]), torch.tensor([0]))
    check_raises_like_cpu(call, w, INDICES, torch.tensor([1, 2]))   # offsets[0] != 0
    check_raises_like_cpu(call, w, INDICES, torch.tensor([0, 11]))  # offsets[-1] > N
    check_raises_like_cpu(lambda w, i, o: F.embedding_bag(i, w, o, mode="mean", per_sample_weights=torch.ones(10)),
                          w, INDICES, torch.tensor([0]))
    check_raises_like_cpu(lambda w, i, o: aten._embedding_bag_backward(w, i, o, o, o, o, 10, False, 0, False, None, -1),
                          w, INDICES.to(torch.int8), torch.tensor([0], dtype=torch.int8))
