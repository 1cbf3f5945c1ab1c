"""grid_sampler_2d / grid_sampler_3d (F.grid_sample) forward and backward against the CPU."""
import itertools

import pytest
import torch
import torch.nn.functional as F

from harness import check, check_grads, check_raises_like_cpu, make
from tiers import pairwise

MODES = {2: ["bilinear", "nearest", "bicubic"], 3: ["bilinear", "nearest"]}
PADS = ["zeros", "border", "reflection"]
ND_MODES = [(nd, m) for nd in (2, 3) for m in MODES[nd]]


def inputs(nd, dtype, seed=0, noncontiguous=False):
    shape = (2, 3, 5, 6) if nd == 2 else (2, 3, 4, 5, 6)
    gshape = (2, 4, 3, 2) if nd == 2 else (2, 3, 4, 2, 3)
    x = make(shape, dtype, seed=seed, noncontiguous=noncontiguous)
    # Points beyond [-1, 1] exercise padding (and several reflections).
    g = make(gshape, dtype, seed=seed + 1, low=-2.5, high=2.5)
    return x, g


def sample(mode, pad, align):
    return lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=align)


@pytest.mark.parametrize(*pairwise("nd,mode", ND_MODES, "pad", PADS, "align", [False, True]))
def test_forward_and_backward(nd, mode, pad, align):
    fn = sample(mode, pad, align)
    check(fn, *inputs(nd, torch.float32))
    check_grads(fn, *inputs(nd, torch.float64, seed=3))
    if mode != "bicubic":  # (bicubic's float32 grid gradient sums 16 taps x channels in another order than the CPU)
        check_grads(fn, *inputs(nd, torch.float32, seed=3))


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_types_run_natively(nd, dtype):
    # Known difference: the CPU rounds every step (coordinates included) in the
    # half type; this computes in f32 and rounds once, so it is compared with
    # the f32 result instead of the CPU's half one.
    x, g = inputs(nd, dtype)
    expect = sample("bilinear", "reflection", False)(x.float(), g.float())
    got = sample("bilinear", "reflection", False)(x.to("tpu"), g.to("tpu"))
    assert got.dtype == dtype
    torch.testing.assert_close(got.cpu(), expect.to(dtype))


@pytest.mark.parametrize("nd", [2, 3])
def test_noncontiguous_input(nd):
    x, g = inputs(nd, torch.float32, noncontiguous=True)
    check(sample("bilinear", "zeros", False), x, g)
    check(sample("nearest", "reflection", True), x, g.transpose(1, 2))


@pytest.mark.parametrize("nd", [2, 3])
def test_empty(nd):
    x = make((0, 3) + (4,) * nd, torch.float32)
    g = make((0,) + (2,) * nd + (nd,), torch.float32)
    check(sample("bilinear", "zeros", False), x, g)
    check_grads(sample("bilinear", "border", True), x, g)
    x = make((2, 3) + (4,) * nd, torch.float32)
    check(sample("bilinear", "zeros", False), x, make((2, 0) + (2,) * (nd - 1) + (nd,), torch.float32))


def test_input_grad_only_and_grid_grad_only():
    x, g = inputs(2, torch.float64)
    check_grads(lambda x: F.grid_sample(x, g.to(x.device), align_corners=False), x)
    check_grads(lambda g: F.grid_sample(x.to(g.device), g, mode="bicubic", align_corners=True), g)


@pytest.mark.parametrize("nd", [2, 3])
def test_affine_grid(nd):
    theta = torch.tensor([[0.9, -0.3, 0.1], [0.2, 1.1, -0.2]], dtype=torch.float64)
    if nd == 3:
        theta = torch.tensor([[0.9, -0.3, 0.1, 0.1], [0.2, 1.1, -0.2, 0.0], [0.0, 0.1, 1.2, 0.3]], dtype=torch.float64)
    theta = theta.expand(2, *theta.shape).contiguous()
    size = (2, 3, 6, 7) if nd == 2 else (2, 3, 4, 5, 6)
    x = make(size, torch.float64)

    def fn(x, theta):
        grid = F.affine_grid(theta, list(size), align_corners=False)
        return F.grid_sample(x, grid, padding_mode="reflection", align_corners=False)

    check(fn, x, theta)
    check_grads(fn, x, theta)


def test_special_values():
    x = make((1, 2, 4, 5), torch.float32)
    g = torch.tensor([[[[float("nan"), 0.3], [float("inf"), -float("inf")], [1e30, -1e30]]]])
    for mode, pad in itertools.product(["bilinear", "nearest"], PADS):
        check(sample(mode, pad, False), x, g)


def test_errors():
    x, g = inputs(2, torch.float32)
    check_raises_like_cpu(lambda x, g: torch.grid_sampler_2d(x, g, 0, 0, False), x.long(), g.long())
    check_raises_like_cpu(lambda x, g: torch.grid_sampler_2d(x, g, 0, 0, False), x, g.double())
    x3, g3 = inputs(3, torch.float32)
    check_raises_like_cpu(lambda x, g: F.grid_sample(x, g, mode="bicubic"), x3, g3)
