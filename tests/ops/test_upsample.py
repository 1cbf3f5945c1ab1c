"""F.interpolate (upsample_* forward and backward) against the CPU."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_grads, make
from tiers import pairwise

DTYPES = [torch.float32, torch.bfloat16, torch.float64]


SHAPES = {1: (2, 3, 7), 2: (2, 3, 5, 7), 3: (1, 2, 3, 4, 5)}
# (size, scale_factor) pairs: up, down, non-integer ratios, identity, x2.
RESIZES = [
    ("size", {1: 11, 2: (9, 4), 3: (5, 3, 8)}),
    ("size", {1: 14, 2: (10, 14), 3: (6, 8, 10)}),
    ("size", {1: 7, 2: (5, 7), 3: (3, 4, 5)}),
    ("scale", {1: 1.7, 2: (2.3, 0.6), 3: (1.5, 0.7, 2.0)}),
    ("scale", {1: 0.5, 2: 3.0, 3: 2.0}),
]


def interp(nd, kind, arg, mode, align=None, recompute=None):
    kw = {"size": arg[nd]} if kind == "size" else {"scale_factor": arg[nd]}
    if recompute is not None:
        kw["recompute_scale_factor"] = recompute
    if align is not None:
        kw["align_corners"] = align
    return lambda t: F.interpolate(t, mode=mode, **kw)


@pytest.mark.parametrize(*pairwise("dtype", DTYPES, "nd", [1, 2, 3], "resize", range(len(RESIZES)),
                                  "mode", ["nearest", "nearest-exact"]))
def test_nearest(dtype, nd, resize, mode):
    fn = interp(nd, *RESIZES[resize], mode)
    x = make(SHAPES[nd], dtype)
    check(fn, x)
    check_grads(fn, x)


@pytest.mark.parametrize(*pairwise("dtype", DTYPES, "nd,mode", [(1, "linear"), (2, "bilinear"), (3, "trilinear"), (2, "bicubic")],
                                  "resize", range(len(RESIZES)), "align", [False, True]))
def test_linear(dtype, nd, mode, resize, align):
    kind, arg = RESIZES[resize]
    fn = interp(nd, kind, arg, mode, align)
    x = make(SHAPES[nd], dtype)
    check(fn, x)
    check_grads(fn, x)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
def test_recompute_scale_factor(mode):
    # The scale given to the kernel (not the size-derived ratio) sets the mapping.
    align = None if mode == "nearest" else False
    for recompute in (False, True):
        fn = interp(2, "scale", {2: (1.3, 2.7)}, mode, align, recompute)
        check(fn, make((1, 2, 6, 5), torch.float32))


def test_nearest_uint8_and_layouts():
    check(lambda t: F.interpolate(t, scale_factor=1.5, mode="nearest"), make((1, 3, 4, 5), torch.uint8))
    x = make((2, 3, 6, 5), torch.float32)
    check(lambda t: F.interpolate(t, size=(8, 9), mode="bilinear"), x.contiguous(memory_format=torch.channels_last))
    check(lambda t: F.interpolate(t, size=(8, 9), mode="nearest"), make((2, 3, 6, 5), torch.float32, noncontiguous=True))
    check(lambda t: F.interpolate(t, size=(3, 4), mode="bilinear", align_corners=True), x.transpose(2, 3))
    check_grads(lambda t: F.interpolate(t, size=(7, 3), mode="bilinear"), x.transpose(2, 3))


@pytest.mark.parametrize(*pairwise("mode", ["bilinear", "bicubic"], "channels", [3, 5], "resize", range(len(RESIZES)),
                                  "align", [False, True]))
def test_uint8_fixed_point(mode, channels, resize, align):
    """uint8 bilinear/bicubic: the CPU's int16 fixed-point weights, bit for bit
    (full-range pixels, so rounding and the bicubic overshoot clamp show)."""
    kind, arg = RESIZES[resize]
    g = torch.Generator().manual_seed(resize * 7 + channels)
    x = torch.randint(0, 256, (2, channels, 9, 13), dtype=torch.uint8, generator=g)
    check(interp(2, kind, arg, mode, align), x)
    check(interp(2, kind, arg, mode, align), x.contiguous(memory_format=torch.channels_last))
    check(interp(2, kind, arg, mode, align), x[:, :, ::2, 1:])  # a strided view


def test_uint8_downscale_and_bad_ranks():
    x = torch.randint(0, 256, (1, 3, 270, 270), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    check(lambda t: F.interpolate(t, size=(130, 61), mode="bilinear"), x)
    check(lambda t: F.interpolate(t, size=(4, 300), mode="bicubic", align_corners=True), x)
    check(lambda t: F.interpolate(t, size=(270, 100), mode="bilinear"), x)   # one dimension unchanged
    check(lambda t: F.interpolate(t, size=(3, 5), mode="bilinear"), x[:0])   # an empty batch
    # 1-d and 3-d linear take no uint8 on the CPU: the same NotImplementedError.
    for shape, mode in (((1, 2, 6), "linear"), ((1, 2, 3, 4, 5), "trilinear")):
        t = torch.zeros(shape, dtype=torch.uint8)
        with pytest.raises(NotImplementedError):
            F.interpolate(t, scale_factor=2.0, mode=mode)
        with pytest.raises(NotImplementedError, match="not implemented for 'Byte'"):
            F.interpolate(t.to("tpu"), scale_factor=2.0, mode=mode).cpu()


def test_empty_and_single_pixel():
    check(lambda t: F.interpolate(t, size=(4, 4), mode="bilinear"), make((0, 3, 2, 2), torch.float32))
    check(lambda t: F.interpolate(t, size=(5, 3), mode="bilinear", align_corners=True), make((1, 2, 1, 1), torch.float32))
    check(lambda t: F.interpolate(t, size=(1, 1), mode="bilinear", align_corners=True), make((1, 2, 4, 3), torch.float32))
    check_grads(lambda t: F.interpolate(t, size=(1, 5), mode="bicubic", align_corners=True),
                make((1, 2, 4, 3), torch.float32))


def test_upsample_module_and_nan():
    x = make((1, 2, 3, 3), torch.float32)
    x[0, 0, 1, 1] = float("nan")
    check(lambda t: torch.nn.Upsample(scale_factor=2, mode="bilinear")(t), x)
    check(lambda t: torch.nn.Upsample(scale_factor=2, mode="nearest")(t), x)


@pytest.mark.parametrize("mode,shape", [("nearest", (1, 2, 5)), ("linear", (1, 2, 5)), ("nearest-exact", (1, 2, 5)),
                                        ("bilinear", (1, 2, 5, 4)), ("bicubic", (1, 2, 5, 4)),
                                        ("nearest", (1, 2, 5, 4)), ("trilinear", (1, 2, 5, 4, 3)),
                                        ("nearest", (1, 2, 5, 4, 3))], ids=str)
@pytest.mark.parametrize("scale", [0.0, 0.1])
def test_an_output_size_zero_raises_like_the_cpu(mode, shape, scale):
    # PyTorch's Python meta kernels skip the CPU's size check: linear modes
    # returned an empty tensor (scale 0.1) or raised ZeroDivisionError (0)
    with pytest.raises(RuntimeError) as cpu:
        F.interpolate(torch.ones(shape), scale_factor=scale, mode=mode)
    with pytest.raises(RuntimeError) as tpu:
        F.interpolate(torch.ones(shape, device="tpu"), scale_factor=scale, mode=mode)
    assert str(cpu.value) == str(tpu.value)
