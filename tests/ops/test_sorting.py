"""sort / argsort / topk / kthvalue / median against the CPU, NaN order included."""
import pytest
import torch

from harness import check, check_raises_like_cpu, make, to_tpu

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.uint8,
          torch.int8, torch.bool]


def distinct(shape, dtype, seed=0):
    """Values without ties (where the dtype allows), so every index result is unique."""
    n = int(torch.tensor(shape).prod()) if shape else 1
    if dtype == torch.bool:
        return make(shape, dtype, seed)
    hi = {torch.uint8: 255, torch.int8: 127}.get(dtype, 2000)
    g = torch.Generator().manual_seed(seed)
    vals = torch.randperm(hi, generator=g)[:n] - (hi // 2 if dtype != torch.uint8 else 0)
    if dtype.is_floating_point:
        vals = vals.double() / 8  # exact in bfloat16 for |v| < 32
    return vals.reshape(shape).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_dtypes(dtype, descending):
    x = make((4, 7), dtype)  # ties included: every sort here is stable, like the CPU's
    check(lambda t: torch.sort(t, descending=descending), x)
    check(lambda t: torch.sort(t, dim=0, descending=descending, stable=True), x)
    check(lambda t: torch.argsort(t, dim=0, descending=descending), x)
    check(lambda t: torch.sort(t, descending=descending, stable=False), distinct((4, 7), dtype))


@pytest.mark.parametrize("shape,dim", [((), 0), ((0,), 0), ((9,), -1), ((2, 0, 3), 1), ((2, 3, 5), 1), ((3, 1), 1)],
                         ids=str)
def test_sort_shapes(shape, dim):
    x = make(shape, torch.float32)
    check(lambda t: torch.sort(t, dim), x)
    check(lambda t: torch.sort(t, dim, descending=True), x)


def test_sort_nan_inf_and_signed_zero():
    x = torch.tensor([3.0, float("nan"), -float("inf"), 0.0, float("inf"), -0.0, float("nan"), -1.0, 3.0])
    for dtype in (torch.float32, torch.bfloat16, torch.float64):
        for descending in (False, True):
            check(lambda t: torch.sort(t, descending=descending, stable=True), x.to(dtype))
            check(lambda t: torch.topk(t, 4, largest=not descending), x.to(dtype))


def test_sort_variants():
    x = make((5, 6), torch.float32, noncontiguous=True)
    check(lambda t: torch.sort(t.t(), 1), x)
    check(lambda t, v, i: torch.sort(t, out=(v, i)), x, torch.empty(0), torch.empty(0, dtype=torch.int64))
    check(lambda t: t.msort(), x)
    check_raises_like_cpu(lambda t: torch.sort(t, 2), x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.uint8], ids=str)
@pytest.mark.parametrize("k,dim", [(1, -1), (3, -1), (7, 1), (0, 1), (2, 0)])
def test_topk(dtype, k, dim):
    x = distinct((4, 7), dtype)
    check(lambda t: torch.topk(t, k, dim), x)
    check(lambda t: torch.topk(t, k, dim, largest=False), x)
    # sorted=False leaves the order open: compare as sets (sorted).
    vals, idx = torch.topk(to_tpu(x), k, dim, sorted=False)
    ev, _ = torch.topk(x, k, dim)
    torch.testing.assert_close(vals.cpu().sort(dim, descending=True)[0], ev)
    torch.testing.assert_close(x.gather(dim, idx.cpu()).sort(dim, descending=True)[0], ev)


def check_topk_with_ties(t, k, dim, largest=True):
    """Among equal values the CPU's topk picks any (its index order is not
    stable), so: the values equal the CPU's topk, and the indices are the CPU's
    stable sort's first k, the order tpu promises."""
    vals, idx = torch.topk(to_tpu(t), k, dim, largest=largest)
    torch.testing.assert_close(vals.cpu(), torch.topk(t, k, dim, largest=largest)[0], equal_nan=True)
    stable = torch.sort(t, stable=True, dim=dim, descending=largest)[1].narrow(dim, 0, k)
    assert torch.equal(idx.cpu(), stable), (k, dim, largest)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_nan_signs_zeros_and_ties(dtype, largest):
    # Float topk runs on XLA's TopK, which orders by IEEE total order; the CPU's
    # order has every NaN largest whatever its sign bit and -0.0 equal to 0.0.
    nan = float("nan")
    row = torch.tensor([3.0, nan, -float("inf"), 0.0, float("inf"), -0.0, nan, -1.0, 3.0, -0.0, 2.0])
    row[6] = -row[6]  # a NaN with the sign bit set, as x86's 0/0 makes
    assert torch.signbit(row[6]) and not torch.signbit(row[1])
    x = torch.stack([row, row.flip(0), row.roll(3)]).to(dtype)
    for k in (1, 4, 11):
        check_topk_with_ties(x, k, 1, largest)
        check_topk_with_ties(x.t(), k, 0, largest)


def test_topk_keeps_signed_zero_and_nan_values():
    x = torch.tensor([[-0.0, 1.0, -2.0], [float("nan"), -0.0, 0.0]])
    vals, idx = torch.topk(to_tpu(x), 2)
    ev, ei = torch.topk(x, 2)
    assert torch.equal(idx.cpu(), ei)
    torch.testing.assert_close(vals.cpu(), ev, equal_nan=True)
    assert torch.equal(torch.signbit(vals.cpu()), torch.signbit(ev))


@pytest.mark.parametrize("shape,dim", [((64, 64), -1), ((2, 5, 9), 1), ((7, 3, 4), 0), ((50,), 0)], ids=str)
def test_topk_float_shapes_and_views(shape, dim):
    # A MoE router's top-8 of 64 experts, and k along a middle or first dimension.
    x = make(shape, torch.float32, noncontiguous=True)
    k = min(8, x.shape[dim])
    check(lambda t: torch.topk(t, k, dim), x)
    check(lambda t: torch.topk(t.softmax(dim), k, dim, largest=False), x)
    check_topk_with_ties(x.to(torch.bfloat16), k, dim)  # bfloat16 rounding makes ties


def test_float_topk_is_not_a_full_sort(tmp_path):
    # A full sort with a comparator region costs ~20x XLA's TopK on the CPU
    # backend (a [64, 64] router: ~0.5 ms against ~25 us).
    import torch_tpu
    torch_tpu._C._set_program_dump_dir(str(tmp_path))
    try:
        with torch.tpu.set_eager_mode("strict"):
            torch.topk(to_tpu(make((64, 64), torch.float32)), 8)[0].cpu()
    finally:
        torch_tpu._C._set_program_dump_dir("")
    (text,) = [p.read_text() for p in tmp_path.glob("*.mlir") if "top_k" in p.read_text()]
    assert "chlo.top_k" in text and "stablehlo.sort" not in text


def test_topk_edges():
    check(lambda t: torch.topk(t, 1), make((), torch.float32))
    check(lambda t: torch.topk(t, 0), make((0,), torch.float32))
    check_raises_like_cpu(lambda t: torch.topk(t, 8), make((4, 7), torch.float32))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int64], ids=str)
def test_kthvalue_median(dtype):
    x = distinct((5, 6), dtype)
    for k in (1, 3, 6):
        check(lambda t: torch.kthvalue(t, k), x)
        check(lambda t: torch.kthvalue(t, k, 0 if k < 6 else 1, keepdim=True), x)
    check(torch.median, x)
    check(lambda t: torch.median(t, 0), x)
    check(lambda t: torch.median(t, 1, keepdim=True), x)
    check(torch.median, distinct((7,), dtype))


def test_median_nan_and_edges():
    x = torch.tensor([[1.0, float("nan"), 3.0, float("nan")], [4.0, 2.0, 5.0, 0.0], [2.0, 1.0, 9.0, float("nan")]])
    check(lambda t: torch.median(t, 1), x)
    check(torch.median, x)
    check(lambda t: torch.median(t, 0), x)
    check(lambda t: torch.kthvalue(t, 2, 1), torch.tensor([[3.0, float("nan"), 1.0]]))
    check(lambda t: torch.median(t, 0), make((), torch.float32))
    check(torch.median, make((0,), torch.float32))
    check_raises_like_cpu(lambda t: torch.kthvalue(t, 7), make((5, 6), torch.float32))


def test_sort_backward():
    x = distinct((4, 5), torch.float32)

    def run(t):
        t = t.clone().requires_grad_()
        v, _ = torch.sort(t, 1)
        v2, _ = torch.topk(t, 2, 0)
        v.backward(torch.arange(20.0).reshape(4, 5).to(t.device), retain_graph=True)
        v2.backward(torch.ones(2, 5).to(t.device))
        return t.grad

    check(run, x)


@pytest.mark.parametrize("call", [lambda t: t.median(), lambda t: t.median(0), lambda t: t.nanmedian(),
                                  lambda t: t.nanmedian(0)], ids=["median", "median.dim", "nanmedian", "nanmedian.dim"])
def test_median_of_bool_raises_like_cpu(call):
    """The CPU's median kernels take no bool: its NotImplementedError naming the
    kernel (tpu computed a median)."""
    e = check_raises_like_cpu(call, torch.tensor([True, False, True]))
    with pytest.raises(NotImplementedError) as cpu:
        call(torch.tensor([True, False, True]))
    assert str(e).endswith(str(cpu.value).splitlines()[0])


@pytest.mark.parametrize("call", [torch.unique, torch.unique_consecutive,
                                  lambda t: torch.unique(t, return_inverse=True, return_counts=True)],
                         ids=["unique", "unique_consecutive", "unique counts"])
def test_unique_of_complex_raises_like_cpu(call):
    z = torch.tensor([1 + 1j, 2 - 1j, 1 + 1j], dtype=torch.complex64)
    e = check_raises_like_cpu(call, z)
    assert str(e) == "\"unique\" not implemented for 'ComplexFloat'"
