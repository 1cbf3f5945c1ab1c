"""torch.autocast("tpu"): CUDA's op lists (the ones PyTorch publishes for
backends to reuse), a bf16 training loop that matches the CPU's autocast, and
GradScaler with float16 stepping and skipping like the CPU's GradScaler."""
import pytest
import torch
import torch.nn.functional as F

BF16, F16, F32 = torch.bfloat16, torch.float16, torch.float32


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")


def test_supported_dtypes_and_availability():
    assert torch.amp.is_autocast_available("tpu")
    assert torch.tpu.is_bf16_supported()
    assert BF16 in torch.tpu.get_amp_supported_dtype() and F16 in torch.tpu.get_amp_supported_dtype()


LOWER_PRECISION = {  # outputs in the autocast dtype on the CPU and on tpu (CUDA) alike
    "matmul": lambda x, w, img, k: x @ w,
    "mm": lambda x, w, img, k: torch.mm(x, w),
    "bmm": lambda x, w, img, k: torch.bmm(x[None], w[None]),
    "linear": lambda x, w, img, k: F.linear(x, w.t(), w[0]),
    "addmm": lambda x, w, img, k: torch.addmm(w[0], x, w),
    "conv2d": lambda x, w, img, k: F.conv2d(img, k),
    "baddbmm": lambda x, w, img, k: torch.baddbmm(x[None], x[None], w[None]),
    "sdpa": lambda x, w, img, k: F.scaled_dot_product_attention(x[None, None], x[None, None], x[None, None]),
}
FLOAT32 = {  # CUDA's float32 lists: outputs in float32 from a bf16 input
    "softmax": lambda h: torch.softmax(h, -1),
    "log_softmax": lambda h: torch.log_softmax(h, -1),
    "layer_norm": lambda h: F.layer_norm(h, h.shape[-1:]),
    "sum": lambda h: h.sum(),
    "exp": lambda h: h.exp(),
    "nll_loss": lambda h: F.nll_loss(h, torch.zeros(h.shape[0], dtype=torch.long, device=h.device)),
    "mse_loss": lambda h: F.mse_loss(h, torch.zeros_like(h)),
}


def _inputs(device):
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(6, 6, generator=g), torch.randn(6, 6, generator=g)
    img, k = torch.randn(1, 2, 5, 5, generator=g), torch.randn(3, 2, 3, 3, generator=g)
    return [t.to(device) for t in (x, w, img, k)]


@pytest.mark.parametrize("dtype", [BF16, F16])
@pytest.mark.parametrize("name", sorted(LOWER_PRECISION))
def test_lower_precision_ops_like_cpu_autocast(name, dtype):
    fn = LOWER_PRECISION[name]
    with torch.autocast("cpu", dtype=dtype):
        want = fn(*_inputs("cpu"))
    with torch.autocast("tpu", dtype=dtype):
        got = fn(*_inputs("tpu"))
    assert got.dtype == want.dtype == dtype
    torch.testing.assert_close(got.cpu(), want, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("name", sorted(FLOAT32))
def test_float32_ops_run_in_float32(name):
    x = _inputs("tpu")[0]
    with torch.autocast("tpu", dtype=BF16):
        h = x @ x            # bf16
        assert h.dtype == BF16
        got = FLOAT32[name](h)
    assert got.dtype == F32
    # the same as running the op in float32 on the bf16 values
    torch.testing.assert_close(got.cpu(), FLOAT32[name](h.cpu().float()), rtol=1e-5, atol=1e-5)


def test_cross_entropy_follows_cuda_lists():
    # Not in CUDA's lists: its decomposition runs log_softmax at the input's
    # dtype (passed explicitly), then nll_loss in float32 (CPU autocast instead
    # casts the logits to float32 first).
    h16 = (_inputs("cpu")[0] * 3).to(BF16)
    target = torch.tensor([0, 2, 1, 5, 4, 3])
    with torch.autocast("tpu", dtype=BF16):
        got = F.cross_entropy(h16.to("tpu"), target.to("tpu"))
    assert got.dtype == F32
    want = F.nll_loss(torch.log_softmax(h16, 1).float(), target)
    torch.testing.assert_close(got.cpu(), want)


def test_other_ops_fall_through_with_normal_promotion():
    x = _inputs("tpu")[0]
    with torch.autocast("tpu", dtype=BF16):
        h = x @ x
        assert (h + x).dtype == F32          # ordinary type promotion
        assert torch.relu(h).dtype == BF16
        assert torch.ones(2, device="tpu").dtype == F32
        assert torch.randn(2, device="tpu").dtype == F32
    assert (x @ x).dtype == F32              # outside the region: no cast
    with torch.autocast("tpu", enabled=False):
        assert (x @ x).dtype == F32


def test_binary_cross_entropy_is_refused_like_cuda():
    p = torch.rand(4, device="tpu")
    with torch.autocast("tpu", dtype=BF16):
        with pytest.raises(RuntimeError, match="binary_cross_entropy_with_logits"):
            F.binary_cross_entropy(p, p)
        F.binary_cross_entropy_with_logits(p, p)  # the safe form runs


class Block(torch.nn.Module):
    """A pre-norm transformer block with a token embedding and a head."""

    def __init__(self, vocab=32, d=32, heads=4):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        self.norm1, self.norm2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.attn = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, ids):
        h = self.emb(ids)
        a = self.norm1(h)
        mask = torch.triu(torch.ones(ids.shape[1], ids.shape[1], dtype=torch.bool, device=ids.device), 1)
        h = h + self.attn(a, a, a, attn_mask=mask, need_weights=False)[0]
        h = h + self.mlp(self.norm2(h))
        return self.head(h)


def _train(device, steps=20):
    torch.manual_seed(0)
    model = Block().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 32, (4, 12), generator=g).to(device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        with torch.autocast(device, dtype=BF16):
            logits = model(ids[:, :-1])
            assert logits.dtype == BF16
            loss = F.cross_entropy(logits.reshape(-1, 32), ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.dtype == F32 and p.grad.dtype == F32 for p in model.parameters())
    return losses


def test_bf16_training_loop_matches_cpu_autocast():
    cpu, tpu = _train("cpu"), _train("tpu")
    assert tpu[-1] < tpu[0] * 0.7, tpu   # it learns
    torch.testing.assert_close(torch.tensor(tpu), torch.tensor(cpu), rtol=1e-2, atol=0)


def _scaled_steps(device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler(device, init_scale=2.0 ** 14, growth_interval=2)
    x = torch.randn(16, 8).to(device)
    scales, weights = [], []
    for step in range(8):
        opt.zero_grad()
        with torch.autocast(device, dtype=F16):
            out = model(x * (1e6 if step == 4 else 1.0))   # step 4 overflows float16
            loss = out.float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        weights.append(model[0].weight.detach().cpu().clone())
    return scales, weights


def test_grad_scaler_float16_steps_and_skips_on_inf_like_cpu():
    cpu_scales, cpu_w = _scaled_steps("cpu")
    tpu_scales, tpu_w = _scaled_steps("tpu")
    assert tpu_scales == cpu_scales
    assert tpu_scales[4] == tpu_scales[3] / 2            # backed off at the overflow
    assert torch.equal(tpu_w[4], tpu_w[3])               # and the step was skipped
    assert not torch.equal(tpu_w[3], tpu_w[2])           # other steps update
    for a, b in zip(tpu_w, cpu_w):
        torch.testing.assert_close(a, b, rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("dtype", [F32, F16])
def test_unscale_and_update_scale_ops_like_cpu(dtype):
    out = {}
    for dev in ("cpu", "tpu"):
        grads = [torch.tensor([1.0, -2.0, 3.0]), torch.tensor([[0.5, float("inf")]]), torch.tensor(4.0),
                 torch.empty(0), torch.tensor([float("nan"), 1.0, 2.0, 3.0])[::2]]
        grads = [g.to(dev, dtype) for g in grads]
        found, inv = torch.zeros(1, device=dev), torch.full((1,), 0.25, device=dev)
        torch._amp_foreach_non_finite_check_and_unscale_(grads[:1], found, inv)
        first = found.item()
        torch._amp_foreach_non_finite_check_and_unscale_(grads[2:4], found, inv)
        second = found.item()
        torch._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)
        scale, tracker = torch.full((1,), 8.0, device=dev), torch.zeros(1, dtype=torch.int32, device=dev)
        history = []
        for f in [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]:
            torch._amp_update_scale_(scale, tracker, torch.full((1,), f, device=dev), 2.0, 0.5, 2)
            history.append((scale.item(), tracker.item()))
        big = torch.full((1,), 3e38, device=dev)
        torch._amp_update_scale_(big, torch.ones(1, dtype=torch.int32, device=dev), torch.zeros(1, device=dev),
                                 2.0, 0.5, 2)   # a grown scale that overflows is not taken
        out[dev] = ([g.cpu() for g in grads], first, second, found.item(), history, big.item())
    (tg, *trest), (cg, *crest) = out["tpu"], out["cpu"]
    assert trest == crest
    for a, b in zip(tg, cg):
        torch.testing.assert_close(a, b, equal_nan=True)
