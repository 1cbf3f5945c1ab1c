"""Antialiased bilinear / bicubic resizing (_upsample_bilinear2d_aa, _upsample_bicubic2d_aa and backward) against
the CPU kernel: down- and upsampling, align_corners, given scales, uint8 bit for bit, backward, bad input."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_raises_like_cpu, make, to_cpu, to_tpu
from tiers import pairwise

SIZES = [((2, 3, 10, 12), (4, 5)), ((1, 2, 7, 9), (13, 4)), ((1, 1, 32, 20), (5, 7)), ((2, 4, 6, 6), (6, 3)),
         ((1, 3, 5, 8), (5, 8)), ((1, 2, 40, 3), (3, 9))]


def resize(mode, size=None, scale=None, align=False):
    return lambda t: F.interpolate(t, size=size, scale_factor=scale, mode=mode, antialias=True, align_corners=align)


@pytest.mark.parametrize(*pairwise("mode", ["bilinear", "bicubic"], "dtype", [torch.float32, torch.float64],
                                  "shape,size", SIZES, "align", [False, True]))
def test_forward_backward(mode, dtype, shape, size, align):
    x = make(shape, dtype, seed=1)
    check(resize(mode, size=size, align=align), x)
    xc = x.clone().requires_grad_()
    xt = to_tpu(x).requires_grad_()
    out = resize(mode, size=size, align=align)(xc)
    g = make(out.shape, dtype, seed=2)
    out.backward(g)
    resize(mode, size=size, align=align)(xt).backward(to_tpu(g))
    torch.testing.assert_close(to_cpu(xt.grad), xc.grad)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("scale", [0.3, 0.5, 1.7, (0.45, 2.2)], ids=str)
def test_scale_factor(mode, scale):
    x = make((2, 3, 17, 11), torch.float32, seed=3)
    check(resize(mode, scale=scale), x)
    check(lambda t: F.interpolate(t, scale_factor=scale, mode=mode, antialias=True, recompute_scale_factor=True), x)


# channels <= 4 takes the CPU's AVX kernel, more the generic one
@pytest.mark.parametrize(*pairwise("mode", ["bilinear", "bicubic"], "channels", [1, 3, 4, 6],
                                  "size", [(5, 7), (31, 9), (16, 40)]))
def test_uint8_exact(mode, channels, size):
    x = make((2, channels, 16, 20), torch.uint8, seed=4, low=0, high=255)
    expect = resize(mode, size=size)(x)
    got = to_cpu(resize(mode, size=size)(to_tpu(x)))
    assert torch.equal(got, expect)
    xc = x.contiguous(memory_format=torch.channels_last)
    assert torch.equal(to_cpu(resize(mode, size=size)(to_tpu(xc))), resize(mode, size=size)(xc))


def test_direct_ops_and_views():
    x = make((2, 3, 12, 10), torch.float32, seed=5, noncontiguous=True)
    check(lambda t: torch.ops.aten._upsample_bilinear2d_aa(t, [5, 4], False, 0.4, None), x)
    check(lambda t: torch.ops.aten._upsample_bicubic2d_aa(t, [5, 4], True, None, 0.4), x)
    check(lambda t: torch.ops.aten._upsample_bilinear2d_aa(t[:, 1:, 2:, ::2], [3, 7], False, None, None), x)
    g = make((2, 3, 5, 4), torch.float64, seed=6)
    check(lambda t: torch.ops.aten._upsample_bilinear2d_aa_backward(t, [5, 4], [2, 3, 12, 10], False, None, None), g)
    check(lambda t: torch.ops.aten._upsample_bicubic2d_aa_backward(t, [5, 4], [2, 3, 12, 10], False, 0.5, 0.3), g)


def test_empty_batch():
    x = make((0, 3, 8, 8), torch.float32, seed=7)
    check(resize("bilinear", size=(4, 4)), x)


def test_bad_input():
    x = torch.rand(1, 2, 6, 6)
    check_raises_like_cpu(lambda t: torch.ops.aten._upsample_bilinear2d_aa(t, [0, 3], False, None, None), x)
    check_raises_like_cpu(lambda t: torch.ops.aten._upsample_bilinear2d_aa(t[0], [3, 3], False, None, None), x)
    check_raises_like_cpu(lambda t: torch.ops.aten._upsample_bilinear2d_aa_backward(t, [3, 3], [1, 2, 6, 6], False,
                                                                                    None, None), x)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("shape,size", [((1, 2, 3, 3), (4, 1)), ((2, 3, 8, 8), (3, 1)), ((1, 1, 5, 4), (9, 1))],
                         ids=str)
def test_width_one_output_where_the_cpu_is_wrong(mode, shape, size):
    """An output one column wide whose height changes: torch 2.13's CPU forward kernel repeats the first row's
    value down every row ([1, 2, 4] resized to 4x1 gives [1, 1, 1, 1]; the same input two columns wide gives
    [1, 1.625, 2.75, 4]). The reference is then the CPU on the transposed problem (output 1 row high), which
    computes the same resampling; the backward, right on the CPU, is compared as usual."""
    x = make(shape, torch.float64, seed=8)
    f = resize(mode, size=size)
    reference = F.interpolate(x.transpose(2, 3), size=size[::-1], mode=mode, antialias=True).transpose(2, 3)
    assert not torch.allclose(f(x), reference), "the CPU kernel is right here now: compare with it directly"
    torch.testing.assert_close(to_cpu(f(to_tpu(x))), reference)
    xc, xt = x.clone().requires_grad_(), to_tpu(x).requires_grad_()
    g = make(reference.shape, torch.float64, seed=9)
    f(xc).backward(g)
    f(xt).backward(to_tpu(g))
    torch.testing.assert_close(to_cpu(xt.grad), xc.grad)
