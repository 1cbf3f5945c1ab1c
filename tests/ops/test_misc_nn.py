"""angle, trace, bitwise shifts, renorm, unfold_backward, max_unpool2d/3d,
nonzero_static and normal with tensor mean/std, against the CPU."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_inplace, check_raises_like_cpu, make, to_tpu
from tiers import pairwise

FLOATS = [torch.float32, torch.bfloat16]
INTS = [torch.int8, torch.int32, torch.int64, torch.uint8]


def check_grads(fn, *inputs):
    """fn(*inputs) and the gradients of its floating inputs under a fixed upstream gradient, tpu vs CPU."""
    def run(args):
        leaves = [t.detach().clone().requires_grad_() if t.is_floating_point() else t for t in args]
        out = fn(*leaves)
        out.backward(make(out.shape, out.dtype, seed=7).to(out.device))
        return [out.detach()] + [t.grad for t in leaves if t.requires_grad]
    expect, got = run(inputs), run(to_tpu(list(inputs)))
    for g, e in zip(got, expect):
        assert g.device.type == "tpu"
        torch.testing.assert_close(g.cpu(), e)


# --- angle -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool], ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5)], ids=str)
def test_angle(dtype, shape):
    check(torch.angle, make(shape, dtype))
    if len(shape) == 2:
        check(torch.angle, make(shape, dtype, noncontiguous=True))


def test_angle_special_values():
    x = torch.tensor([-1.0, -0.0, 0.0, float("nan"), float("-inf"), float("inf"), -1e-30])
    check(torch.angle, x)
    check(torch.angle, x.bfloat16())


# --- trace -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
@pytest.mark.parametrize("shape", [(4, 4), (3, 6), (6, 2), (0, 3), (1, 1)], ids=str)
def test_trace(dtype, shape):
    check(torch.trace, make(shape, dtype))
    check(torch.trace, make(shape, dtype, noncontiguous=True))
    check(torch.trace, make(shape[::-1], dtype).t())


def test_trace_grad_and_errors():
    check_grads(torch.trace, make((4, 5), torch.float32))
    check_raises_like_cpu(torch.trace, make((2, 2), torch.bool))
    check_raises_like_cpu(torch.trace, make((2, 2, 2), torch.float32))


# --- bitwise shifts ------------------------------------------------------------

SHIFTS = [torch.bitwise_left_shift, torch.bitwise_right_shift]


@pytest.mark.parametrize("fn", SHIFTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", INTS + [torch.int16], ids=str)
def test_shift_counts_out_of_range(fn, dtype):
    bits = torch.iinfo(dtype).bits
    x = make((12,), dtype, seed=1)
    n = torch.tensor([0, 1, 3, bits - 1, bits, bits + 1, 2 * bits, -1, -bits, 5, 2, 100], dtype=torch.int64)
    n = n.to(dtype) if dtype != torch.uint8 else n.clamp(0, 255).to(dtype)
    check(fn, x, n)


@pytest.mark.parametrize("fn", SHIFTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(), (0,), (3, 4)], ids=str)
def test_shift_shapes_and_broadcast(fn, shape):
    x = make(shape, torch.int64, seed=2)
    n = make(shape, torch.int64, seed=3, low=0, high=70)
    check(fn, x, n)
    check(fn, x, torch.tensor(3))
    if len(shape) == 2:
        check(fn, make(shape, torch.int32, noncontiguous=True), make((4,), torch.int64, low=0, high=40))


def test_shift_operators_and_scalars():
    x = make((5,), torch.int64, seed=4)
    check(lambda t: t << 3, x)
    check(lambda t: t >> 70, x)
    check(lambda t: torch.bitwise_left_shift(t, 65), x)
    check(lambda t: torch.bitwise_right_shift(-100, t), make((5,), torch.int64, low=0, high=10))
    check_inplace(lambda t, n: t.bitwise_left_shift_(n), x, torch.tensor([1, 2, 3, 64, -1]))
    check_inplace(lambda t, n: t.bitwise_right_shift_(n), x, torch.tensor([1, 2, 63, 64, -1]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bool], ids=str)
def test_shift_rejects_like_cpu(dtype):
    check_raises_like_cpu(torch.bitwise_left_shift, make((3,), dtype), make((3,), dtype))
    check_raises_like_cpu(torch.bitwise_right_shift, make((3,), dtype), make((3,), dtype))


# --- renorm ------------------------------------------------------------------

@pytest.mark.parametrize(*pairwise("dtype", FLOATS, "p", [1, 2, 1.5, 3, float("inf")],
                                  "shape,dim", [((4, 5), 0), ((4, 5), 1), ((2, 3, 4), -1), ((0, 3), 0), ((3, 0), 1)]))
def test_renorm(dtype, p, shape, dim):
    x = make(shape, dtype)
    if p == float("inf") and 0 in shape[:dim] + shape[dim + 1:]:  # the CPU's inf norm over nothing raises
        check_raises_like_cpu(lambda t: torch.renorm(t, p, dim, 4.0), x)
        return
    check(lambda t: torch.renorm(t, p, dim, 4.0), x)
    if len(shape) > 1:
        check(lambda t: torch.renorm(t, p, dim, 4.0), make(shape, dtype, noncontiguous=True))


def test_renorm_grad_and_errors():
    check_grads(lambda t: torch.renorm(t, 2, 0, 3.0), make((4, 5), torch.float32))
    check_raises_like_cpu(lambda t: torch.renorm(t, -1, 0, 1.0), make((3, 3), torch.float32))
    check_raises_like_cpu(lambda t: torch.renorm(t, 2, 0, -1.0), make((3, 3), torch.float32))
    check_raises_like_cpu(lambda t: torch.renorm(t, 2, 0, 1.0), make((5,), torch.float32))


# --- unfold_backward -----------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,dim,size,step", [((10,), 0, 3, 2), ((10,), 0, 3, 1), ((2, 9, 3), 1, 4, 3),
                                                  ((3, 8), -1, 2, 5), ((4, 5), 0, 4, 1), ((0, 5), 1, 2, 1),
                                                  ((), 0, 1, 1)], ids=str)
def test_unfold_backward(dtype, shape, dim, size, step):
    x = make(shape, dtype)
    check_grads(lambda t: t.unfold(dim, size, step), x)
    # Long overlapping windows: many bf16 additions per element, in the CPU's order.
    n = x.unfold(dim, size, step).shape
    check(lambda g: torch.ops.aten.unfold_backward(g, list(shape), dim, size, step), make(n, dtype, seed=3))


def test_unfold_backward_many_overlaps():
    g = make((40, 8), torch.bfloat16, seed=4)
    check(lambda t: torch.ops.aten.unfold_backward(t, [47], 0, 8, 1), g)
    check(lambda t: torch.ops.aten.unfold_backward(t, [47], 0, 8, 1), make((40, 8), torch.bfloat16, noncontiguous=True))


# --- max_unpool ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,k,s", [((2, 3, 8, 8), 2, 2), ((3, 7, 9), 3, 2), ((1, 2, 5, 6), 3, 1)], ids=str)
def test_max_unpool2d(dtype, shape, k, s):
    x = make(shape, dtype)
    p, i = F.max_pool2d(x, k, s, return_indices=True)
    size = shape[-2:]
    check(lambda t, idx: F.max_unpool2d(t, idx, k, s, output_size=size), p, i)
    check_grads(lambda t: F.max_unpool2d(t, i.to(t.device), k, s, output_size=size), p)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_max_unpool3d_and_1d(dtype):
    x = make((2, 2, 4, 6, 5), dtype)
    p, i = F.max_pool3d(x, 2, 2, return_indices=True)
    check(lambda t, idx: F.max_unpool3d(t, idx, 2, 2, output_size=x.shape[-3:]), p, i)
    check_grads(lambda t: F.max_unpool3d(t, i.to(t.device), 2, 2, output_size=x.shape[-3:]), p)
    y = make((2, 3, 10), dtype)
    p1, i1 = F.max_pool1d(y, 3, 2, return_indices=True)
    check(lambda t, idx: F.max_unpool1d(t, idx, 3, 2), p1, i1)


def test_max_unpool_duplicates_last_wins_and_noncontiguous():
    # Every value targets index 0 or 1 of its plane: the CPU keeps the last write.
    x = make((2, 3, 4), torch.float32)
    idx = torch.tensor([0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0, 1]).reshape(3, 4).expand(2, 3, 4).contiguous()
    check(lambda t, i: F.max_unpool2d(t.unsqueeze(1), i.unsqueeze(1), (1, 2)), x, idx)
    xn = make((2, 3, 4), torch.float32, noncontiguous=True)
    check(lambda t, i: F.max_unpool2d(t.unsqueeze(1), i.unsqueeze(1), (1, 2)), xn, idx)
    e = torch.zeros(0, 2, 2, 2)
    check(lambda t, i: F.max_unpool2d(t, i, 2), e, e.long())


def test_max_unpool_bad_index_raises():
    x = make((1, 1, 2, 2), torch.float32)
    check_raises_like_cpu(lambda t, i: F.max_unpool2d(t, i, 2), x, torch.full((1, 1, 2, 2), 99))


# --- nonzero_static ------------------------------------------------------------

@pytest.mark.parametrize(*pairwise("dtype", FLOATS + [torch.int64, torch.bool],
                                  "shape", [(), (0,), (7,), (3, 4), (2, 0, 3), (2, 3, 2)], "size", [0, 3, 30]))
def test_nonzero_static(dtype, shape, size):
    x = make(shape, dtype, low=-1, high=1) if dtype != torch.bool else make(shape, dtype)
    check(lambda t: torch.nonzero_static(t, size=size), x)
    check(lambda t: torch.nonzero_static(t, size=size, fill_value=-9), x)
    if len(shape) >= 2:
        check(lambda t: torch.nonzero_static(t, size=size), make(shape, dtype, noncontiguous=True))


# --- normal with tensor mean / std (random: statistics, shape, dtype) ------------

@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_normal_tensor_overloads(dtype):
    torch.manual_seed(0)
    mean = torch.full((50, 100), 3.0, dtype=dtype, device="tpu")
    std = torch.full((50, 100), 0.5, dtype=dtype, device="tpu")
    for r, m, s in [(torch.normal(mean, 2.0), 3.0, 2.0), (torch.normal(mean, std), 3.0, 0.5),
                    (torch.normal(-1.0, std), -1.0, 0.5)]:
        assert r.device.type == "tpu" and r.dtype == dtype and r.shape == mean.shape
        r = r.float().cpu()
        assert abs(r.mean().item() - m) < 0.05 * s * 4 and abs(r.std().item() / s - 1) < 0.05
    # Broadcast mean against std, empty, and reproducibility under a seed.
    assert torch.normal(mean[:1], std).shape == (50, 100)
    assert torch.normal(torch.zeros(0, device="tpu"), 1.0).shape == (0,)
    torch.manual_seed(3)
    a = torch.normal(mean, std).cpu()
    torch.manual_seed(3)
    assert torch.equal(a, torch.normal(mean, std).cpu())


def test_normal_negative_std_raises():
    check_raises_like_cpu(lambda s: torch.normal(torch.zeros(3), s), torch.tensor([1.0, -1.0, 1.0]))


# --- repeat_interleave with tensor repeats (data-dependent length) -------------

@pytest.mark.parametrize("dtype", [torch.int64, torch.int32], ids=str)
@pytest.mark.parametrize("reps", [[2, 0, 3, 1], [0, 0], [], [5], [1] * 9], ids=str)
def test_repeat_interleave_tensor(dtype, reps):
    r = torch.tensor(reps, dtype=dtype)
    check(torch.repeat_interleave, r)
    check(lambda t: torch.repeat_interleave(t, output_size=sum(reps)), r)
    x = make((len(reps), 3), torch.float32)
    check(lambda a, t: torch.repeat_interleave(a, t, dim=0), x, r)
    check(lambda a, t: a.repeat_interleave(t, dim=0), make((len(reps), 3), torch.bfloat16, noncontiguous=True), r)


def test_repeat_interleave_views_and_errors():
    r = torch.tensor([3, 9, 1, 0, 2, 7])
    check(torch.repeat_interleave, r[::2])
    check(lambda a, t: torch.repeat_interleave(a, t, dim=1), make((2, 6), torch.int64), r)
    check(lambda a, t: torch.repeat_interleave(a, t), make((), torch.float32), torch.tensor([4]))
    check_raises_like_cpu(torch.repeat_interleave, torch.tensor([1, -1, 2]))
    check_raises_like_cpu(torch.repeat_interleave, torch.tensor([[1, 2]]))
    check_raises_like_cpu(torch.repeat_interleave, torch.tensor([1.0, 2.0]))
    check_raises_like_cpu(lambda t: torch.repeat_interleave(t, output_size=4), torch.tensor([1, 2]))


# --- unique / unique_consecutive (data-dependent length) -------------------------

UNIQUE_DTYPES = [torch.float32, torch.bfloat16, torch.int64, torch.int32, torch.bool]


def small_values(shape, dtype, seed=0):
    # Few distinct values so that runs and repeats occur.
    return make(shape, dtype, seed=seed, low=-2, high=2).round() if dtype.is_floating_point else \
        make(shape, dtype, seed=seed, low=-2, high=2)


@pytest.mark.parametrize(*pairwise("dtype", UNIQUE_DTYPES, "shape", [(), (0,), (1,), (9,), (3, 4), (2, 0, 3)],
                                  "inverse,counts", [(False, False), (True, False), (False, True), (True, True)]))
def test_unique(dtype, shape, inverse, counts):
    x = small_values(shape, dtype)
    for s in (True, False):
        check(lambda t: torch._unique2(t, sorted=s, return_inverse=inverse, return_counts=counts), x)
    check(lambda t: torch._unique(t, sorted=True, return_inverse=inverse), x)
    check(lambda t: torch.unique_consecutive(t, return_inverse=inverse, return_counts=counts), x)
    if len(shape) == 1:
        check(lambda t: torch.unique_consecutive(t, return_inverse=inverse, return_counts=counts, dim=0), x)
    if len(shape) == 2:
        xn = small_values(shape, dtype, seed=1)
        check(lambda t: torch.unique(t, return_inverse=inverse, return_counts=counts),
              make(shape, dtype, noncontiguous=True).round() if dtype.is_floating_point else xn)
        check(lambda t: torch.unique_consecutive(t.t(), return_inverse=inverse, return_counts=counts), xn)


def test_unique_nan_and_signed_zero():
    x = torch.tensor([3.0, float("nan"), 1.0, -0.0, 0.0, float("nan"), 1.0, float("-inf")])
    for dt in (torch.float32, torch.bfloat16):
        check(lambda t: torch.unique(t, return_inverse=True, return_counts=True), x.to(dt))
        check(lambda t: torch.unique_consecutive(t, return_inverse=True, return_counts=True), x.to(dt))


def test_unique_consecutive_dim_of_matrix_falls_back_only_there():
    x = small_values((4, 3), torch.int64)
    with pytest.raises(NotImplementedError, match="unique_consecutive"):
        torch.unique_consecutive(to_tpu(x), dim=0)  # TORCH_TPU_FALLBACK=error in this suite
