"""Random numbers on tpu: seeded reproducibility and statistics (the streams
are Philox, not the CPU's Mersenne Twister, so values are not compared with
the CPU's)."""
import math

import pytest
import torch

import torch_tpu
from helpers import raises_like_the_cpu


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")


def draws():
    x = torch.ones(64, 64, device="tpu")
    return [torch.randn(1000, device="tpu").cpu(), torch.rand(7, 3, device="tpu").cpu(),
            torch.randint(0, 100, (50,), device="tpu").cpu(),
            torch.nn.functional.dropout(x, 0.3).cpu(), torch.randperm(20, device="tpu").cpu(),
            torch.bernoulli(torch.full((100,), 0.5, device="tpu")).cpu()]


def test_manual_seed_reproduces_every_draw():
    torch.manual_seed(0)
    a = draws()
    torch.manual_seed(0)
    b = draws()
    for x, y in zip(a, b):
        assert torch.equal(x, y)
    torch.manual_seed(1)
    c = draws()
    assert not torch.equal(a[0], c[0])


def test_successive_draws_differ():
    torch.manual_seed(0)
    assert not torch.equal(torch.rand(100, device="tpu").cpu(), torch.rand(100, device="tpu").cpu())


def test_rng_state_round_trip():
    torch.tpu.manual_seed(3)
    torch.rand(10, device="tpu")
    state = torch.tpu.get_rng_state()
    a = torch.randn(50, device="tpu").cpu()
    torch.tpu.set_rng_state(state)
    assert torch.equal(torch.randn(50, device="tpu").cpu(), a)


def test_explicit_generator():
    g1 = torch.Generator(device="tpu").manual_seed(42)
    g2 = torch.Generator(device="tpu").manual_seed(42)
    a = torch.rand(30, device="tpu", generator=g1).cpu()
    b = torch.rand(30, device="tpu", generator=g2).cpu()
    assert torch.equal(a, b)
    torch.manual_seed(42)
    # the default generator is independent of explicit ones
    torch.rand(30, device="tpu")
    assert torch.equal(torch.rand(30, device="tpu", generator=g1).cpu(), torch.rand(30, device="tpu", generator=g2).cpu())


def test_new_draws_do_not_recompile():
    torch.rand(256, device="tpu")
    before = torch_tpu.metrics()["compiles"]
    for _ in range(10):
        torch.rand(256, device="tpu")
    assert torch_tpu.metrics()["compiles"] == before


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16], ids=str)
def test_uniform_statistics(dtype):
    n = 200_000
    u = torch.empty(n, dtype=dtype, device="tpu").uniform_(-2, 3).cpu().double()
    assert u.min() >= -2 and u.max() < 3
    # mean of U(-2, 3) is 0.5, std 5/sqrt(12); 6-sigma bounds for the mean
    assert abs(u.mean().item() - 0.5) < 6 * (5 / math.sqrt(12)) / math.sqrt(n)
    assert abs(u.std().item() - 5 / math.sqrt(12)) < 0.01
    hist = torch.histc(u, bins=10, min=-2, max=3)
    assert (hist / n - 0.1).abs().max() < 0.01


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
def test_normal_statistics(dtype):
    n = 200_000
    z = torch.empty(n, dtype=dtype, device="tpu").normal_(1.5, 2.0).cpu().double()
    assert abs(z.mean().item() - 1.5) < 6 * 2.0 / math.sqrt(n)
    assert abs(z.std().item() - 2.0) < 0.02
    frac_within_1sd = ((z - 1.5).abs() < 2.0).double().mean().item()
    assert abs(frac_within_1sd - 0.6827) < 0.01


def test_bernoulli_statistics():
    n = 100_000
    for p in (0.1, 0.5, 0.9):
        x = torch.empty(n, device="tpu").bernoulli_(p).cpu()
        assert set(x.unique().tolist()) <= {0.0, 1.0}
        assert abs(x.mean().item() - p) < 6 * math.sqrt(p * (1 - p) / n)
    probs = torch.linspace(0, 1, 11).repeat(10_000).to("tpu")
    y = torch.bernoulli(probs).cpu().view(10_000, 11).mean(0)
    assert (y - torch.linspace(0, 1, 11)).abs().max() < 0.03


def test_dropout_mask_and_scale():
    x = torch.ones(1000, 100, device="tpu")
    y = torch.nn.functional.dropout(x, 0.25).cpu()
    kept = y != 0
    assert torch.all(y[kept] == 1 / 0.75)
    assert abs(kept.double().mean().item() - 0.75) < 0.01
    assert torch.equal(torch.nn.functional.dropout(x, 0.25, training=False).cpu(), x.cpu())


@pytest.mark.parametrize("p", [0.3, 0.5, 1.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64], ids=str)
def test_dropped_nan_and_inf_stay_nan_like_the_cpu(dtype, p):
    """The CPU (and CUDA) take input * mask * scale: a dropped NaN or infinity
    is NaN (and a dropped negative number -0). tpu selected 0, hiding a NaN
    in training activations; p = 1 scales by 0, as the CPU's native_dropout."""
    x = torch.tensor([1.5, float("inf"), float("nan"), -float("inf"), -2.0, 0.0] * 40).to(dtype)
    out, mask = torch.native_dropout(x.to("tpu"), p, True)
    want = x.mul(mask.cpu()).mul_(0.0 if p == 1 else 1 / (1 - p))
    out = out.cpu()
    torch.testing.assert_close(out, want, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(out.signbit()[~want.isnan()], want.signbit()[~want.isnan()])  # -0 for a dropped negative
    assert (out.isnan() & x.isinf()).any()  # some infinity was dropped (all, for p = 1)
    # F.dropout: the same product (for p = 1 the CPU's x * 0 itself).
    y = torch.nn.functional.dropout(x.to("tpu"), p).cpu()
    dropped_inf = x.isinf() & ~y.isinf()
    assert y[dropped_inf].isnan().all() and dropped_inf.any()
    if p == 1:
        torch.testing.assert_close(y, x * 0, rtol=0, atol=0, equal_nan=True)
        assert torch.equal(y.signbit()[x.isfinite()], (x * 0).signbit()[x.isfinite()])


def test_dropout_backward_uses_the_same_mask():
    x = torch.randn(50, 40).to("tpu").requires_grad_()
    y = torch.nn.functional.dropout(x, 0.5)
    y.sum().backward()
    kept = (y.detach().cpu() != 0)
    assert torch.equal(x.grad.cpu() != 0, kept)
    assert torch.all(x.grad.cpu()[kept] == 2.0)


@pytest.mark.parametrize("grad_dtype,mask_dtype", [(torch.float32, torch.bool), (torch.bfloat16, torch.bool),
                                                     (torch.float32, torch.uint8), (torch.bfloat16, torch.uint8),
                                                     (torch.int16, torch.uint8), (torch.int8, torch.uint8),
                                                     (torch.int64, torch.bool)])
def test_dropout_backward_is_grad_times_mask_times_scale_like_the_cpu(grad_dtype, mask_dtype):
    # The CPU's grad * mask * scale, left to right: grad times mask in their
    # promoted dtype (an int16 grad wraps at 32767 * 2), then the scale.
    g = torch.tensor([[1, 7, 32767], [-32767, 3, -2]]).to(grad_dtype)
    m = torch.tensor([[0, 255, 1], [254, 1, 2]]).to(mask_dtype)
    # (g, m[1, 0]): a 0-d mask does not widen grad's dtype (int8 * 0-d uint8 stays int8).
    for grad, mask in [(g, m), (g.t(), m.t()), (g[0, 2], m[0, 2]), (g[:, :0], m[:, :0]), (g, m[1, 0]),
                       (g[1, 0], m)]:
        want = torch.ops.aten.native_dropout_backward(grad, mask, 2.0)
        got = torch.ops.aten.native_dropout_backward(grad.to("tpu"), mask.to("tpu"), 2.0).cpu()
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_integer_draws_cover_the_range():
    r = torch.randint(3, 9, (60_000,), device="tpu").cpu()
    assert r.dtype == torch.int64 and r.min() == 3 and r.max() == 8
    counts = torch.bincount(r - 3, minlength=6).double() / r.numel()
    assert (counts - 1 / 6).abs().max() < 0.01
    b = torch.randint(0, 2, (1000,), dtype=torch.bool, device="tpu").cpu()
    assert 0.4 < b.double().mean() < 0.6


def test_randperm_is_a_permutation():
    for n in (0, 1, 17, 1000):
        p = torch.randperm(n, device="tpu").cpu()
        assert torch.equal(p.sort().values, torch.arange(n))


def test_multinomial_frequencies():
    probs = torch.tensor([0.1, 0.0, 0.6, 0.3])
    s = torch.multinomial(probs.to("tpu"), 40_000, replacement=True).cpu()
    freq = torch.bincount(s, minlength=4).double() / s.numel()
    assert freq[1] == 0
    assert (freq - probs.double()).abs().max() < 0.015
    w = torch.multinomial(torch.tensor([[1.0, 2.0, 3.0, 0.0]] * 500).to("tpu"), 3).cpu()
    assert all(sorted(row.tolist()) == [0, 1, 2] for row in w)  # without replacement: distinct, never p=0


def test_exponential_statistics():
    e = torch.empty(100_000, device="tpu").exponential_(2.0).cpu().double()
    assert e.min() >= 0
    assert abs(e.mean().item() - 0.5) < 0.01


# The CPU kernels check the probabilities' values (a negative, NaN or infinite
# entry, a row summing to 0; bernoulli's p outside [0, 1]); tpu sampled from
# them. Values are known on the device only, so tpu raises the same
# RuntimeError at the next synchronization, with the CPU's message.
BAD_PROBABILITIES = {
    "bernoulli p 2": lambda d: torch.bernoulli(torch.tensor([0.5, 2.0], device=d)),
    "bernoulli p NaN": lambda d: torch.bernoulli(torch.tensor([float("nan")], device=d)),
    "bernoulli p < 0, bfloat16": lambda d: torch.bernoulli(torch.tensor([-0.5, 0.3], device=d).bfloat16()),
    "bernoulli_ of a tensor p": lambda d: torch.ones(2, 3, device=d).bernoulli_(torch.tensor([0.5, 2.0, 0.5], device=d)),
    "multinomial < 0": lambda d: torch.multinomial(torch.tensor([-1.0, 1.0], device=d), 1),
    "multinomial NaN": lambda d: torch.multinomial(torch.tensor([float("nan"), 1.0], device=d), 1),
    "multinomial a zero row": lambda d: torch.multinomial(torch.tensor([[1.0, 1.0], [0.0, 0.0]], device=d), 1),
    "multinomial < 0, replacement": lambda d: torch.multinomial(torch.tensor([-1.0, 1.0], device=d), 3, True),
    "multinomial inf, replacement": lambda d: torch.multinomial(torch.tensor([float("inf"), 1.0], device=d), 3, True),
    "multinomial zeros, replacement": lambda d: torch.multinomial(torch.zeros(2, device=d), 3, True),
    "normal with a NaN std tensor": lambda d: torch.normal(torch.zeros(2, device=d), torch.tensor([1.0, float("nan")],
                                                                                                 device=d)),
    "normal with a negative std tensor": lambda d: torch.normal(0.0, torch.tensor([-1.0], device=d)),
}


@pytest.mark.parametrize("name", list(BAD_PROBABILITIES))
def test_bad_probabilities_raise_like_the_cpu(name):
    cpu, tpu = raises_like_the_cpu(BAD_PROBABILITIES[name])
    assert isinstance(cpu, RuntimeError) and str(cpu) in str(tpu), (cpu, tpu)


def test_good_probabilities_still_sample():
    torch.manual_seed(0)
    p = torch.tensor([[0.0, 0.0, 1e-30], [1.0, 2.0, 3.0]], device="tpu")
    assert torch.multinomial(p, 1).cpu()[0, 0] == 2
    assert torch.multinomial(p, 4, True).cpu().shape == (2, 4)
    assert torch.bernoulli(torch.tensor([0.0, 1.0], device="tpu")).cpu().tolist() == [0.0, 1.0]
    assert torch.ones(0, device="tpu").bernoulli_(torch.tensor(0.5, device="tpu")).cpu().shape == (0,)


# Draws into a tensor of a type the CPU's kernel has no case for: its
# NotImplementedError, naming the kernel (tpu raised RuntimeErrors).
NO_KERNEL_DRAWS = {
    "uniform_ int64": lambda d: torch.ones(3, dtype=torch.int64, device=d).uniform_(),
    "uniform_ bool": lambda d: torch.ones(3, dtype=torch.bool, device=d).uniform_(),
    "rand int64": lambda d: torch.rand(3, dtype=torch.int64, device=d),
    "normal_ int32": lambda d: torch.ones(3, dtype=torch.int32, device=d).normal_(),
    "randn int64": lambda d: torch.randn(3, dtype=torch.int64, device=d),
    "log_normal_ int64": lambda d: torch.ones(3, dtype=torch.int64, device=d).log_normal_(),
    "bernoulli of int probabilities": lambda d: torch.bernoulli(torch.ones(3, dtype=torch.int64, device=d)),
    "bernoulli_ with int probabilities": lambda d: torch.zeros(3, device=d).bernoulli_(
        torch.ones(3, dtype=torch.int64, device=d)),
}


@pytest.mark.parametrize("name", list(NO_KERNEL_DRAWS))
def test_draws_the_cpu_has_no_kernel_for_raise_like_the_cpu(name):
    cpu, tpu = raises_like_the_cpu(NO_KERNEL_DRAWS[name])
    assert isinstance(cpu, NotImplementedError) and str(tpu).endswith(str(cpu).splitlines()[0]), (cpu, tpu)
