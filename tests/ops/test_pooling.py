"""Max, average and adaptive pooling (1-d, 2-d, 3-d), forward and backward,
against the CPU; max-pool indices must equal the CPU's (first maximum)."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_raises_like_cpu, make, to_tpu
from tiers import pairwise

DTYPES = [torch.float32, torch.bfloat16]
MAX = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
AVG = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}
ADAPTIVE_AVG = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}
ADAPTIVE_MAX = {1: F.adaptive_max_pool1d, 2: F.adaptive_max_pool2d, 3: F.adaptive_max_pool3d}


def run_grads(fn, x, seed=7):
    """fn(x) (a tensor or a tuple whose first entry is differentiable) and x's gradient."""
    leaf = x.detach().clone().requires_grad_()
    out = fn(leaf)
    first = out[0] if isinstance(out, tuple) else out
    # bfloat16: the CPU adds gradients into bfloat16 one at a time, tpu sums
    # in float32 and rounds once; with mixed signs the CPU's rounding of a
    # cancelling sum is arbitrary, so the upstream gradient is positive there.
    low = 0.25 if first.dtype == torch.bfloat16 else None
    first.backward(make(first.shape, first.dtype, seed=seed, low=low).to(first.device))
    rest = [t.detach() for t in out] if isinstance(out, tuple) else [out.detach()]
    return rest + [leaf.grad]


def check_grads(fn, x):
    expect = run_grads(fn, x)
    got = run_grads(fn, to_tpu(x))
    assert len(got) == len(expect)
    for g, e in zip(got, expect):
        assert g.device.type == "tpu"
        torch.testing.assert_close(g.cpu(), e)


def shape(n, batch=(2, 3), sizes=(9, 8, 7)):
    return tuple(batch) + tuple(sizes[:n])


def ties(shape, dtype):
    """Few distinct values (with -inf), so windows hold equal maxima."""
    g = torch.Generator().manual_seed(3)
    t = torch.randint(-2, 2, shape, generator=g).to(dtype)
    return t.masked_fill(t == -2, float("-inf"))


# (kernel, stride, padding, dilation, ceil_mode)
MAX_CASES = [
    (2, None, 0, 1, False),
    (3, 2, 1, 1, False),
    (3, 2, 1, 1, True),
    (3, 1, 1, 2, False),
    (2, 3, 1, 1, True),
    (4, 3, 2, 1, True),
]


@pytest.mark.parametrize(*pairwise("dtype", DTYPES, "n", [1, 2, 3],
                                  "kernel,stride,padding,dilation,ceil_mode", MAX_CASES))
def test_max_pool(dtype, n, kernel, stride, padding, dilation, ceil_mode):
    def fn(x):
        return MAX[n](x, kernel, stride, padding, dilation, ceil_mode=ceil_mode, return_indices=True)

    check_grads(fn, make(shape(n), dtype))
    check_grads(fn, ties(shape(n), dtype))  # first maximum wins, overlapping windows accumulate
    check_grads(fn, make(shape(n, batch=(3,)), dtype))  # unbatched


def test_max_pool_nan_and_inf():
    x = make((1, 2, 6, 6), torch.float32)
    x[0, 0, 1, 1] = float("nan")
    x[0, 0, 1, 2] = float("nan")
    x[0, 1] = float("-inf")
    check(lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True), x)
    check(lambda t: F.max_pool2d(t, 2, return_indices=True), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_max_pool_layouts(dtype):
    fn = lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True)  # noqa: E731
    check_grads(fn, make((2, 3, 7, 6), dtype).to(memory_format=torch.channels_last))
    check_grads(fn, make((2, 3, 7, 6), dtype, noncontiguous=True))
    check_grads(fn, make((2, 3, 6, 7), dtype).transpose(2, 3))
    check_grads(lambda t: F.max_pool2d(t, 2), make((1, 1, 5, 5), dtype))  # batch 1, odd size, no indices
    check(fn, make((0, 3, 7, 6), dtype))  # empty batch
    check_grads(lambda t: F.max_pool3d(t, 2, return_indices=True),
                make((2, 3, 4, 5, 6), dtype).to(memory_format=torch.channels_last_3d))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8, torch.uint8, torch.float64], ids=str)
def test_max_pool_other_dtypes(dtype):
    for x in [make((2, 3, 7, 6), dtype), ties((2, 3, 7, 6), torch.float64).clamp(min=-1).to(dtype)]:
        check(lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True), x)
        check(lambda t: F.max_pool3d(t, 2, return_indices=True, ceil_mode=True), x)
    # The type's lowest value everywhere: the first position in the window wins.
    low = torch.iinfo(dtype).min if not dtype.is_floating_point else float("-inf")
    check(lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True), torch.full((1, 2, 5, 5), low, dtype=dtype))


def test_avg_pool_int64():
    # Integer sum, then division truncating toward zero, like the CPU.
    x = make((2, 3, 7, 6), torch.int64)
    check(lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True, count_include_pad=False), x)
    check(lambda t: F.avg_pool2d(t, 2, divisor_override=3), x)
    check(lambda t: F.avg_pool3d(t, 2), x)


# (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVG_CASES = [
    (2, None, 0, False, True, None),
    (3, 2, 1, False, True, None),
    (3, 2, 1, False, False, None),
    (3, 2, 1, True, True, None),
    (3, 2, 1, True, False, None),
    (2, 3, 1, True, True, None),
    (4, 3, 2, True, False, None),
    (3, 1, 1, False, True, 5),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("kernel,stride,padding,ceil_mode,count_include_pad,divisor", AVG_CASES, ids=str)
def test_avg_pool(dtype, n, kernel, stride, padding, ceil_mode, count_include_pad, divisor):
    if n == 1 and divisor is not None:
        pytest.skip("avg_pool1d has no divisor_override")
    kw = {} if divisor is None else {"divisor_override": divisor}

    def fn(x):
        return AVG[n](x, kernel, stride, padding, ceil_mode=ceil_mode, count_include_pad=count_include_pad, **kw)

    for x in (make(shape(n), dtype), make(shape(n, batch=(3,)), dtype)):  # batched, unbatched
        if n == 3 and dtype == torch.bfloat16:
            # The CPU has no bfloat16 avg_pool3d (NotImplementedError); tpu
            # computes it (a TPU's own dtype): against the CPU's float32 on the
            # same bfloat16 values, rounded to bfloat16, forward and backward.
            expect = run_grads(lambda t: fn(t.float()).to(dtype), x)
            got = run_grads(fn, to_tpu(x))
            for g, e in zip(got, expect, strict=True):
                assert g.device.type == "tpu" and g.dtype == e.dtype == dtype
                torch.testing.assert_close(g.cpu(), e)
        else:
            check_grads(fn, x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("kernel,stride,padding,ceil_mode,count_include_pad,divisor", AVG_CASES + [
    ((2, 3), 1, 0, False, False, None), ((1, 4), (2, 1), (0, 1), True, True, None)], ids=str)
def test_avg_pool2d_backward_half_sums_like_the_cpu(dtype, kernel, stride, padding, ceil_mode, count_include_pad,
                                                    divisor):
    # The CPU adds each output's rounded grad / divisor into grad_input in the
    # half type, output by output; a float32 sum rounded once differed from it
    # by up to 7 units in the last place where the terms cancel. Bit for bit.
    x = make((2, 3, 7, 6), dtype)
    args = (kernel, stride if stride is not None else kernel, padding, ceil_mode, count_include_pad, divisor)
    for xx in (x, x.to(memory_format=torch.channels_last), x.transpose(2, 3)):
        g = make(tuple(F.avg_pool2d(xx.float(), *args[:5], divisor_override=divisor).shape), dtype, seed=1) * 3
        expected = torch.ops.aten.avg_pool2d_backward(g, xx, *args)
        got = torch.ops.aten.avg_pool2d_backward(g.to("tpu"), xx.to("tpu"), *args)
        torch.testing.assert_close(got.cpu(), expected, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_avg_pool_layouts(dtype):
    fn = lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True, count_include_pad=False)  # noqa: E731
    check_grads(fn, make((2, 3, 7, 6), dtype).to(memory_format=torch.channels_last))
    check_grads(fn, make((2, 3, 7, 6), dtype, noncontiguous=True))
    check_grads(fn, make((1, 1, 5, 5), dtype))
    check(fn, make((0, 3, 7, 6), dtype))


@pytest.mark.parametrize(*pairwise("dtype", DTYPES, "n", [1, 2, 3], "out", [1, 3, 4, 7, 10]))
def test_adaptive_avg_pool(dtype, n, out):
    # The CPU's bfloat16 adaptive_avg_pool3d sums in bfloat16 (rounding at
    # every step; tpu sums in float32): positive values keep its error small.
    low = 0.25 if (n, dtype) == (3, torch.bfloat16) else None
    x = make(shape(n, sizes=(7, 9, 6)), dtype, low=low)
    check_grads(lambda t: ADAPTIVE_AVG[n](t, out), x)
    check_grads(lambda t: ADAPTIVE_AVG[n](t, out), make(shape(n, batch=(3,), sizes=(7, 9, 6)), dtype, low=low))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("sizes", [((7, 5), (3, 2)), ((9, 9), (4, 4)), ((5, 7), (4, 6)), ((3, 4), (5, 7)),
                                   ((6, 8), (3, 4)), ((7, 5, 4), (3, 2, 3))], ids=str)
def test_adaptive_avg_pool_backward_half_sums_like_the_cpu(dtype, sizes):
    # The CPU adds each output's grad / kh / kw (rounded to the dtype) into
    # grad_input output by output, rounding every partial sum; tpu summed the
    # overlapping windows in float32. Bit for bit, both layouts.
    ins, outs = sizes
    x = make((2, 3) + ins, dtype)
    g = make((2, 3) + outs, dtype, seed=1) * 3
    op = torch.ops.aten._adaptive_avg_pool2d_backward if len(ins) == 2 else torch.ops.aten._adaptive_avg_pool3d_backward
    layouts = (x, x.to(memory_format=torch.channels_last)) if len(ins) == 2 else (x,)
    for xx in layouts:
        expected = op(g, xx)
        torch.testing.assert_close(op(g.to("tpu"), xx.to("tpu")).cpu(), expected, rtol=0, atol=0)


@pytest.mark.parametrize(*pairwise("dtype", DTYPES, "n", [1, 2, 3], "out", [1, 3, 4, 7, 10]))
def test_adaptive_max_pool(dtype, n, out):
    fn = lambda t: ADAPTIVE_MAX[n](t, out, return_indices=True)  # noqa: E731
    check_grads(fn, make(shape(n, sizes=(7, 9, 6)), dtype))
    check_grads(fn, ties(shape(n, sizes=(7, 9, 6)), dtype))
    check_grads(fn, make(shape(n, batch=(3,), sizes=(7, 9, 6)), dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_adaptive_layouts(dtype):
    x = make((2, 3, 8, 6), dtype)
    check_grads(lambda t: F.adaptive_avg_pool2d(t, (3, 4)), x.to(memory_format=torch.channels_last))
    check_grads(lambda t: F.adaptive_avg_pool2d(t, (5, None)), make((2, 3, 8, 6), dtype, noncontiguous=True))
    check_grads(lambda t: F.adaptive_max_pool2d(t, (3, 4), return_indices=True),
                x.to(memory_format=torch.channels_last))
    check(lambda t: F.adaptive_avg_pool2d(t, (3, 4)), make((0, 3, 8, 6), dtype))


def test_module_forward_backward():
    def run(dev):
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.MaxPool2d(2),
                                torch.nn.AvgPool2d(2, ceil_mode=True), torch.nn.AdaptiveAvgPool2d((2, 2))).to(dev)
        x = make((2, 3, 10, 10), torch.float32).to(dev)
        m(x).square().sum().backward()
        return [p.grad.cpu() for p in m.parameters()]

    for g, e in zip(run("tpu"), run("cpu")):
        torch.testing.assert_close(g, e)


def test_errors_like_cpu():
    x = make((2, 3, 5, 5), torch.float32)
    check_raises_like_cpu(lambda t: F.max_pool2d(t, 2, padding=2), x)  # padding above half the kernel
    check_raises_like_cpu(lambda t: F.max_pool2d(t, 7), x)  # output would be empty
    check_raises_like_cpu(lambda t: F.avg_pool2d(t, 2, divisor_override=0), x)
    check_raises_like_cpu(lambda t: F.adaptive_avg_pool2d(t, (2, 2)), make((2, 3, 0, 5), torch.float32))
    check_raises_like_cpu(lambda t: F.adaptive_max_pool2d(t, (2, 2)), make((2, 0, 4, 5), torch.float32))
    check_raises_like_cpu(lambda t: F.adaptive_avg_pool3d(t, 2), make((2, 0, 4, 5, 3), torch.float32))
    # What the CPU allows empty: channels of 2-d average pooling, the first dim of an unbatched 3-d input.
    check(lambda t: F.adaptive_avg_pool2d(t, 2), make((2, 0, 4, 5), torch.float32))
    check(lambda t: F.adaptive_avg_pool3d(t, 2), make((0, 4, 5, 3), torch.float32))


OPINFO_NAMES = ["nn.functional.max_pool1d", "nn.functional.max_pool2d", "nn.functional.max_pool3d",
                "nn.functional.avg_pool1d", "nn.functional.avg_pool2d", "nn.functional.avg_pool3d",
                "nn.functional.adaptive_avg_pool1d", "nn.functional.adaptive_avg_pool2d",
                "nn.functional.adaptive_avg_pool3d", "nn.functional.adaptive_max_pool1d",
                "nn.functional.adaptive_max_pool2d", "nn.functional.adaptive_max_pool3d"]


@pytest.mark.parametrize("name", OPINFO_NAMES)
def test_opinfo_samples(name):
    import expecttest  # noqa: F401  (torch's OpInfo database needs it; scripts/setup.sh installs it)
    from torch.testing._internal.common_methods_invocations import op_db

    ops = [o for o in op_db if o.name == name]
    assert ops, f"no OpInfo for {name}"
    ran = 0
    for op in ops:
        samples = list(op.sample_inputs("cpu", torch.float32, requires_grad=False))
        # max_pool's samples are a full product of options (hundreds, a
        # program each): every 8th keeps the suite short. All passed in full.
        for s in samples[::8] if "max_pool" in name and "adaptive" not in name else samples:
            fn = lambda t: op(t, *s.args, **s.kwargs)  # noqa: E731
            check(fn, s.input)
            if s.input.numel():
                check_grads(fn, s.input)
            ran += 1
    assert ran > 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("batched", [True, False])
def test_fractional_max_pool(dtype, nd, batched):
    # Given the same random samples the windows, values, indices and gradients
    # equal the CPU's (the samples' arithmetic runs in the input dtype there too).
    pool = F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d
    shape = (2, 3) + (9, 11, 7)[:nd] if batched else (3,) + (9, 11, 7)[:nd]
    x = make(shape, dtype, seed=5)
    x.view(-1)[7] = float("nan")
    x.view(-1)[20] = x.view(-1)[21]  # a tie
    samples = make((2 if batched else 1, 3, nd), dtype, seed=6, low=0, high=1)
    kernel, out = (2, 3, 2)[:nd], (4, 5, 3)[:nd]
    fn = lambda t, s: pool(t, kernel, output_size=out, return_indices=True, _random_samples=s)  # noqa: E731
    check(fn, x, samples)
    grads = []
    for dev in ("cpu", "tpu"):
        t = x.clone().to(dev).requires_grad_()
        y, _ = fn(t, samples.to(dev))
        y.backward(torch.ones_like(y))
        grads.append(t.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0])
