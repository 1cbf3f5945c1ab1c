"""Convolutions (conv1d/2d/3d, conv_transpose1d/2d/3d), forward and backward,
against the CPU. Eager calls reach convolution_overrideable and
convolution_backward_overrideable."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_raises_like_cpu, make, to_tpu
from tiers import pairwise

DTYPES = [torch.float32, torch.bfloat16]
CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def mk(shape, dtype, seed=0, noncontiguous=False):
    """Small integers: products and sums are exact in float32 (and products in
    bfloat16), so results match the CPU whatever order either side sums in."""
    t = make(shape, torch.int64, seed=seed, low=-3, high=3).to(dtype)
    if noncontiguous:
        wide = torch.zeros(*t.shape[:-1], t.shape[-1] * 2, dtype=dtype)
        wide[..., ::2] = t
        t = wide[..., ::2]
    return t


def run_grads(fn, inputs, seed=7):
    """fn(*inputs) and the gradients of every floating input under a fixed upstream gradient."""
    leaves = [t.detach().clone().requires_grad_() if isinstance(t, torch.Tensor) and t.is_floating_point() else t
              for t in inputs]
    out = fn(*leaves)
    out.backward(mk(out.shape, out.dtype, seed=seed).to(out.device))
    return [out.detach()] + [t.grad for t in leaves if isinstance(t, torch.Tensor) and t.requires_grad]


def check_grads(fn, *inputs):
    expect = run_grads(fn, inputs)
    got = run_grads(fn, to_tpu(list(inputs)))
    assert len(got) == len(expect)
    for g, e in zip(got, expect):
        assert g.device.type == "tpu"
        torch.testing.assert_close(g.cpu(), e)


def spatial(n, size):
    return (size,) * n if isinstance(size, int) else size[:n]


# (stride, padding, dilation, groups, bias)
FORWARD_CASES = [
    (1, 0, 1, 1, True),
    (2, 1, 1, 1, False),
    (1, 2, 2, 1, True),
    (2, 1, 1, 2, True),
    (3, 0, 2, 1, False),
]


@pytest.mark.parametrize(*pairwise("dtype", DTYPES, "n", [1, 2, 3], "stride,padding,dilation,groups,bias", FORWARD_CASES))
def test_conv(dtype, n, stride, padding, dilation, groups, bias):
    x = mk((2, 4) + spatial(n, (7, 6, 5)), dtype)
    w = mk((6, 4 // groups) + spatial(n, 3), dtype, seed=1)
    b = mk((6,), dtype, seed=2) if bias else None
    fn = lambda x, w, b: CONV[n](x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)  # noqa: E731
    check(fn, x, w, b)
    check_grads(fn, x, w, b)


# (stride, padding, output_padding, dilation, groups)
TRANSPOSED_CASES = [
    (1, 0, 0, 1, 1),
    (2, 1, 1, 1, 1),
    (3, 2, 2, 1, 2),
    (2, 0, 1, 2, 1),
    (1, 3, 0, 1, 1),  # padding beyond the kernel: output shrinks
]


@pytest.mark.parametrize(*pairwise("dtype", DTYPES, "n", [1, 2, 3],
                                  "stride,padding,output_padding,dilation,groups", TRANSPOSED_CASES))
def test_conv_transpose(dtype, n, stride, padding, output_padding, dilation, groups):
    x = mk((2, 4) + spatial(n, (6, 5, 5)), dtype)
    w = mk((4, 6 // groups) + spatial(n, 3), dtype, seed=1)
    b = mk((6,), dtype, seed=2)
    fn = lambda x, w, b: CONV_T[n](x, w, b, stride=stride, padding=padding,  # noqa: E731
                                   output_padding=output_padding, groups=groups, dilation=dilation)
    check(fn, x, w, b)
    check_grads(fn, x, w, b)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_depthwise_and_asymmetric(dtype):
    # Depthwise (groups == channels, channel multiplier 2), per-dim stride/padding/dilation.
    fn = lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=(2, 1), dilation=(2, 1), groups=3)  # noqa: E731
    check_grads(fn, mk((2, 3, 9, 8), dtype), mk((6, 1, 3, 2), dtype, seed=1), mk((6,), dtype, seed=2))
    # Kernel as large as the padded input; 1x1 kernel with stride.
    check_grads(lambda x, w: F.conv2d(x, w, padding=1), mk((1, 2, 3, 4), dtype), mk((3, 2, 5, 6), dtype, seed=1))
    check_grads(lambda x, w: F.conv2d(x, w, stride=2), mk((1, 2, 5, 5), dtype), mk((3, 2, 1, 1), dtype, seed=1))
    fn = lambda x, w: F.conv_transpose2d(x, w, stride=(2, 3), padding=(0, 1), output_padding=(1, 2),  # noqa: E731
                                         groups=2, dilation=(1, 2))
    check_grads(fn, mk((2, 4, 3, 4), dtype), mk((4, 3, 2, 3), dtype, seed=1))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_padding_modes(dtype, n):
    x = mk((2, 3) + spatial(n, (8, 7, 6)), dtype)
    for k, d in [(3, 1), (4, 1), (2, 3)]:  # even kernels make 'same' pad asymmetrically
        w = mk((4, 3) + spatial(n, k), dtype, seed=1)
        check_grads(lambda x, w: CONV[n](x, w, padding="same", dilation=d), x, w)
    check_grads(lambda x, w: CONV[n](x, w, padding="valid"), x, mk((4, 3) + spatial(n, 3), dtype, seed=1))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_unbatched(n):
    x = mk((3,) + spatial(n, (6, 5, 4)), torch.float32)
    w = mk((2, 3) + spatial(n, 2), torch.float32, seed=1)
    check_grads(lambda x, w, b: CONV[n](x, w, b, padding=1), x, w, mk((2,), torch.float32, seed=2))
    wt = mk((3, 2) + spatial(n, 2), torch.float32, seed=1)
    check_grads(lambda x, w: CONV_T[n](x, w, stride=2), x, wt)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_empty_batch(dtype):
    x = mk((0, 3, 5, 5), dtype)
    w = mk((4, 3, 3, 3), dtype, seed=1)
    b = mk((4,), dtype, seed=2)
    check(lambda x, w, b: F.conv2d(x, w, b, padding=1), x, w, b)
    check_grads(lambda x, w, b: F.conv2d(x, w, b, padding=1), x, w, b)
    check(lambda x, w: F.conv_transpose2d(x, w, stride=2), x, mk((3, 4, 2, 2), dtype, seed=1))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_noncontiguous_and_channels_last(dtype):
    x = mk((2, 3, 6, 5), dtype)
    w = mk((4, 3, 3, 3), dtype, seed=1)
    b = mk((4,), dtype, seed=2)
    fn = lambda x, w, b: F.conv2d(x, w, b, padding=1, stride=(2, 1))  # noqa: E731
    check_grads(fn, x.to(memory_format=torch.channels_last), w.to(memory_format=torch.channels_last), b)
    check_grads(fn, mk((2, 3, 6, 5), dtype, noncontiguous=True), mk((4, 3, 3, 3), dtype, seed=1,
                                                                          noncontiguous=True), b)
    check_grads(fn, mk((2, 3, 5, 6), dtype).transpose(2, 3), w, b)
    check(lambda x, w: F.conv_transpose2d(x, w, stride=2), x.to(memory_format=torch.channels_last),
          mk((3, 2, 3, 3), dtype, seed=1))


def test_only_some_grads():
    # output_mask with some entries off: only the wanted gradients.
    x = mk((2, 3, 5, 5), torch.float32)
    w = mk((4, 3, 3, 3), torch.float32, seed=1)
    b = mk((4,), torch.float32, seed=2)
    for need in [(True, False, False), (False, True, False), (False, False, True), (False, True, True)]:
        def fn(x, w, b):
            leaves = [t.detach().clone().requires_grad_(r) for t, r in zip((x, w, b), need)]
            out = F.conv2d(*leaves, padding=1)
            out.backward(mk(out.shape, out.dtype, seed=3).to(out.device))
            return [t.grad for t in leaves if t.requires_grad]
        check(fn, x, w, b)


def test_underscore_convolution():
    # torch._convolution (what traced models call) takes the same rule.
    fn = lambda x, w, b: torch._convolution(x, w, b, [2, 1], [1, 0], [1, 2], False, [0, 0], 1,  # noqa: E731
                                            False, False, True, True)
    check_grads(fn, mk((2, 3, 6, 7), torch.float32), mk((4, 3, 3, 2), torch.float32, seed=1),
                mk((4,), torch.float32, seed=2))


def test_module_training_step():
    def run(dev):
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.ConvTranspose2d(4, 2, 2, stride=2)).to(dev)
        x = mk((2, 3, 6, 6), torch.float32).to(dev)
        opt = torch.optim.SGD(m.parameters(), lr=0.01)
        for _ in range(2):
            opt.zero_grad()
            m(x).square().mean().backward()
            opt.step()
        return [p.detach().cpu() for p in m.parameters()]

    for g, e in zip(run("tpu"), run("cpu")):
        torch.testing.assert_close(g, e)


def test_errors_like_cpu():
    x = mk((2, 3, 5, 5), torch.float32)
    check_raises_like_cpu(F.conv2d, x, mk((4, 2, 3, 3), torch.float32))  # channel mismatch
    check_raises_like_cpu(F.conv2d, x, mk((4, 3, 7, 7), torch.float32))  # kernel larger than input
    check_raises_like_cpu(lambda x, w: F.conv2d(x, w, groups=2), x, mk((4, 3, 3, 3), torch.float32))
    check_raises_like_cpu(lambda x, w: F.conv2d(x, w, padding=-1), x, mk((4, 3, 3, 3), torch.float32))
    check_raises_like_cpu(lambda x, w: F.conv_transpose2d(x, w, stride=2, output_padding=2), x,
                          mk((3, 4, 3, 3), torch.float32))



# PyTorch's meta kernel divided by the stride before checking it (a stride of
# 0 was a ZeroDivisionError); the CPU checks groups, padding and stride first.
@pytest.mark.parametrize("conv,kwargs", [
    (F.conv2d, {"stride": 0}), (F.conv2d, {"stride": (1, 0)}), (F.conv2d, {"stride": -1}),
    (F.conv2d, {"padding": -1}), (F.conv2d, {"groups": 0}), (F.conv_transpose2d, {"stride": 0}),
    (F.conv_transpose2d, {"stride": 2, "output_padding": -1})], ids=lambda v: getattr(v, "__name__", str(v)))
def test_bad_stride_padding_groups_error_like_cpu(conv, kwargs):
    e = check_raises_like_cpu(lambda x, w: conv(x, w, **kwargs), mk((2, 3, 5, 5), torch.float32),
                              mk((3, 3, 3, 3), torch.float32))
    assert "not supported" in str(e), e


OPINFO_NAMES = ["nn.functional.conv1d", "nn.functional.conv2d", "nn.functional.conv3d",
                "nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d", "nn.functional.conv_transpose3d"]


@pytest.mark.parametrize("name", OPINFO_NAMES)
def test_opinfo_samples(name):
    import expecttest  # noqa: F401  (torch's OpInfo database needs it; scripts/setup.sh installs it)
    from torch.testing._internal.common_methods_invocations import op_db

    ops = [o for o in op_db if o.name == name]
    assert ops, f"no OpInfo for {name}"
    ran = 0
    for op in ops:
        for s in op.sample_inputs("cpu", torch.float32, requires_grad=False):
            # Rounded to integers (exact sums, as in mk) from OpInfo's values.
            args = [a.round() if isinstance(a, torch.Tensor) else a for a in [s.input, *s.args]]
            check(lambda *a: op(*a, **s.kwargs), *args)
            check_grads(lambda *a: op(*a, **s.kwargs), *args)
            ran += 1
    assert ran > 0


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8, torch.float64], ids=str)
def test_other_dtypes(dtype):
    x, w, b = mk((2, 4, 6, 5), dtype), mk((6, 2, 3, 3), dtype, seed=1), mk((6,), dtype, seed=2)
    check(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2), x, w, b)
    if dtype in (torch.int64, torch.float64):  # the CPU's transposed and dilated kernels have no int32/int8
        check(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, output_padding=1, groups=2), x,
              mk((4, 3, 3, 3), dtype, seed=1), b)
        check(lambda x, w: F.conv1d(x, w, dilation=2), mk((2, 4, 9), dtype), mk((3, 4, 2), dtype, seed=1))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fractional_values(dtype):
    # Positive fractional values (no cancellation): summation order moves
    # results by less than the default tolerances.
    x = make((2, 3, 6, 5), dtype, low=0, high=1)
    w = make((4, 3, 3, 3), dtype, seed=1, low=0, high=1)
    check(lambda x, w: F.conv2d(x, w, padding=1), x, w)
    check(lambda x, w: F.conv_transpose2d(x, w.transpose(0, 1), stride=2), x, w)


# A weight under 3 dims: the CPU's RuntimeError (the meta kernel raised IndexError).
@pytest.mark.parametrize("wdtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("case", ["conv1d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv2d_1d_w"])
def test_conv_low_rank_weight_raises_like_cpu(case, wdtype):
    w = torch.tensor(1.5, dtype=wdtype)
    if case == "conv1d":
        check_raises_like_cpu(lambda x, ww, b: F.conv1d(x, ww, b, stride=(2,), padding=2), torch.randn(1, 3, 4), w,
                              torch.randn(3))
    elif case == "conv_transpose1d":
        check_raises_like_cpu(lambda x, ww, b: F.conv_transpose1d(x, ww, b, stride=(2,), padding=2,
                                                                  output_padding=(1,)), torch.randn(1, 3, 4), w,
                              torch.randn(3))
    elif case == "conv_transpose2d":
        check_raises_like_cpu(lambda x, ww, b: F.conv_transpose2d(x, ww, b, stride=2, padding=1, output_padding=1,
                                                                  dilation=(2, 3)), torch.randn(1, 1, 4, 5), w,
                              torch.randn(1))
    elif case == "conv_transpose3d":
        check_raises_like_cpu(lambda x, ww, b: F.conv_transpose3d(x, ww, b, stride=2, padding=1, output_padding=1,
                                                                  dilation=(2, 3, 2)), torch.randn(1, 1, 4, 5, 2), w,
                              torch.randn(1))
    else:
        check_raises_like_cpu(lambda x, ww: F.conv2d(x, ww), torch.randn(1, 1, 4, 5), torch.randn(3, dtype=wdtype))


@pytest.mark.parametrize("transposed", [False, True])
def test_float16_rounds_once_from_the_exact_value(transposed):
    """float16 convolution, forward and backward, is the exact result rounded
    once (float32 accumulation of exact half products). The CPU's own float16
    result depends on its ISA (oneDNN's AVX-512 kernels can be an ulp off), so
    this compares with float64 on the CPU, rounded."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 3, 6, 7, generator=g).half()
    w = torch.randn(3, 3, 3, 3, generator=g).half()
    conv = torch.nn.functional.conv_transpose2d if transposed else torch.nn.functional.conv2d

    def run(dev, dt):
        xx = x.to(dev, dt).requires_grad_()
        out = conv(xx, w.to(dev, dt), stride=2, padding=1)
        out.backward(torch.full(out.shape, 0.37).half().to(dev, dt))  # the same half values
        return out.detach().cpu(), xx.grad.cpu()

    exact = [t.half() for t in run("cpu", torch.float64)]
    got = run("tpu", torch.float16)
    for a, e in zip(got, exact):
        torch.testing.assert_close(a, e, atol=0, rtol=0)


MIXED = [(torch.float32, torch.float64, None), (torch.float64, torch.float32, None), (torch.float32, torch.bfloat16, None),
         (torch.float32, torch.float32, torch.float64), (torch.float16, torch.float16, torch.float32),
         (torch.float64, torch.float64, torch.float32), (torch.int64, torch.float32, None),
         (torch.bfloat16, torch.float32, None), (torch.bfloat16, torch.bfloat16, torch.float32)]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtypes", MIXED, ids=str)
def test_mixed_dtypes_like_cpu(dtypes, transposed, n):
    """A weight or bias of another dtype than the input is the CPU's
    RuntimeError (tpu computed a promoted result); its transposed 1-d and 2-d
    kernels alone take any bias, and so does tpu, rounding to the input's
    dtype. The messages are the CPU's, but for bfloat16 inputs, where it
    names its oneDNN tensor types."""
    xdt, wdt, bdt = dtypes
    x = mk((1, 2) + (5,) * n, xdt)
    w = mk((2, 3) + (2,) * n if transposed else (3, 2) + (2,) * n, wdt, seed=1)
    b = mk((3,), bdt, seed=2) if bdt else None
    conv = (CONV_T if transposed else CONV)[n]
    try:
        conv(x, w, b)
    except RuntimeError:
        e = check_raises_like_cpu(conv, x, w, b)
        if xdt != torch.bfloat16:
            with pytest.raises(RuntimeError) as cpu:
                conv(x, w, b)
            assert str(e).splitlines()[0] == str(cpu.value).splitlines()[0]
        return
    assert transposed and n < 3 and wdt == xdt and bdt is not None and xdt != torch.bfloat16
    check(conv, x, w, b)
