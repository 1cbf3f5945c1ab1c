"""The ops of Transformers' mixture-of-experts routing and generate's token
checks: histc (tokens per expert), _grouped_mm (expert products), isin."""
import pytest
import torch

from harness import check, check_raises_like_cpu, make
from tiers import pairwise


@pytest.mark.parametrize(*pairwise("dtype", [torch.float32, torch.bfloat16],
                                  "kw", [dict(bins=4, min=0, max=3), dict(bins=10), dict(bins=7, min=-1, max=0.7),
                                         dict(bins=1, min=-2, max=2)],
                                  "shape", [(1000,), (5, 7), (), (2,)]))
def test_histc_matches_cpu(dtype, kw, shape):
    if dtype == torch.bfloat16 and shape == (1000,):
        # The CPU counts in bfloat16 one element at a time, so counts stop
        # growing at 256; tpu sums exactly. Keep bfloat16 counts below 256.
        shape = (200,)
    check(lambda t: torch.histc(t, **kw), make(shape, dtype, seed=1, low=-1.5, high=1.5))


def test_histc_edges_nan_and_views():
    # Values on the bin edges land where the CPU's linspace edges say.
    check(lambda t: torch.histc(t, bins=10, min=0, max=1), torch.linspace(0, 1, 101))
    check(lambda t: torch.histc(t, bins=3, min=0, max=3), torch.tensor([1.0, float("nan"), 2.0, 5.0, -1.0]))
    check(lambda t: torch.histc(t, bins=4), torch.tensor([3.0, 3.0]))  # empty range widens by 1
    check(lambda t: torch.histc(t, bins=3), torch.empty(0))
    check(lambda t: torch.histc(t.t(), bins=6), make((6, 5), torch.float32, noncontiguous=True))


@pytest.mark.parametrize("bins", [4, 100])
def test_histc_of_values_near_the_float32_maximum(bins):
    # (x - min) * bins overflows to inf there: the float32 CPU kernel then
    # puts everything in bin 0 (a PyTorch bug) and ours dropped the elements.
    # Each element lands in its bin as the float64 CPU's histc counts it.
    x = torch.tensor([3e38, -3.0, 2e38, 1e37, 0.5])
    got = torch.histc(x.to("tpu"), bins).cpu()
    torch.testing.assert_close(got, torch.histc(x.double(), bins).float(), rtol=0, atol=0)


def test_histc_errors_like_cpu():
    check_raises_like_cpu(lambda t: torch.histc(t, bins=3, min=2, max=1), torch.ones(4))
    check_raises_like_cpu(lambda t: torch.histc(t, bins=3), torch.tensor([1.0, float("nan")]))


def test_histc_of_integers_counts_like_cuda():
    # CUDA (and tpu) take integer input, which Transformers' MoE passes on
    # accelerators; the CPU takes only floats, so compare with float counts.
    ids = torch.tensor([0, 0, 1, 3, 3, 3, 2, 7, -1], dtype=torch.int32)
    got = torch.histc(ids.to("tpu"), bins=4, min=0, max=3).cpu()
    assert got.dtype == torch.int32
    assert got.tolist() == torch.histc(ids.float(), bins=4, min=0, max=3).int().tolist()


OFFS = torch.tensor([2, 2, 5, 8], dtype=torch.int32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_grouped_mm_rows_grouped(dtype):
    x, w = make((8, 16), dtype, seed=1), make((4, 16, 8), dtype, seed=2)
    check(lambda a, b, o: torch._grouped_mm(a, b, offs=o), x, w, OFFS)


def test_grouped_mm_rows_past_the_last_offset_are_zero():
    x, w = make((10, 16), torch.float32, seed=1), make((4, 16, 8), torch.float32, seed=2)
    got = torch._grouped_mm(x.to("tpu"), w.to("tpu"), offs=OFFS.to("tpu")).cpu()
    expect = torch._grouped_mm(x, w, offs=OFFS)
    torch.testing.assert_close(got[:8], expect[:8])
    assert got[8:].eq(0).all()  # the CPU leaves these rows uninitialized


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_grouped_mm_other_layouts(dtype):
    offs = torch.tensor([8, 8, 24], dtype=torch.int32)
    check(lambda a, b, o: torch._grouped_mm(a, b, offs=o), make((3, 4, 16), dtype), make((16, 24), dtype, seed=1),
          offs)  # columns of mat2 grouped
    check(lambda a, b, o: torch._grouped_mm(a, b, offs=o), make((4, 24), dtype), make((24, 8), dtype, seed=1),
          offs)  # the contracted dimension grouped
    check(torch._grouped_mm, make((3, 4, 16), dtype), make((3, 16, 8), dtype, seed=1))  # batched


def test_grouped_mm_errors():
    with pytest.raises(RuntimeError, match="offs"):
        torch._grouped_mm(torch.ones(4, 8, device="tpu"), torch.ones(2, 8, 8, device="tpu"))
    with pytest.raises(RuntimeError, match="contraction"):
        torch._grouped_mm(torch.ones(4, 8, device="tpu"), torch.ones(2, 16, 8, device="tpu"), offs=OFFS[:2].to("tpu"))


@pytest.mark.parametrize("dtype", [torch.int64, torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("invert", [False, True])
def test_isin(dtype, invert):
    elements = make((4, 5), dtype, seed=1, low=-5, high=5)
    test = make((6,), dtype, seed=2, low=-5, high=5)
    check(lambda e, t: torch.isin(e, t, invert=invert), elements, test)
    check(lambda e: torch.isin(e, 3, invert=invert), elements)
    check(lambda t: torch.isin(2, t, invert=invert), test)
    check(lambda e, t: torch.isin(e, t), elements[:, ::2], test[:0])  # views, no test elements
    check(lambda e, t: torch.isin(e, t), torch.tensor([1, 2, 3]), torch.tensor([2.0, 3.5]))  # promotion
