"""Training on tpu matches the CPU step for step, with nothing falling back."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_tpu


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")


class MLP(nn.Module):
    def __init__(self, d=16, h=32, classes=5):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, h), nn.Linear(h, classes)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    """A pre-norm transformer block: causal self-attention + SiLU MLP + RMSNorm."""

    def __init__(self, d=32, heads=4, vocab=50):
        super().__init__()
        self.heads = heads
        self.emb = nn.Embedding(vocab, d)
        self.norm1, self.norm2, self.norm_out = nn.RMSNorm(d), nn.RMSNorm(d), nn.RMSNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        self.up, self.gate, self.down = nn.Linear(d, 2 * d), nn.Linear(d, 2 * d), nn.Linear(2 * d, d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.drop = nn.Dropout(0.0)

    def forward(self, tokens):
        x = self.emb(tokens)
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.drop(self.proj(a.transpose(1, 2).reshape(b, t, d)))
        h = self.norm2(x)
        x = x + self.down(F.silu(self.gate(h)) * self.up(h))
        return self.head(self.norm_out(x))


def train(model, data, device, opt_name, steps=20, foreach=False):
    model = model.to(device)
    if opt_name == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01, foreach=foreach)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=foreach)
    losses = []
    for step in range(steps):
        x, y = (t.to(device) for t in data[step % len(data)])
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=foreach)
        opt.step()
        losses.append(loss.item())
    return losses, {k: v.detach().cpu() for k, v in model.state_dict().items()}


def compare(make_model, data, opt_name, foreach):
    torch.manual_seed(0)
    cpu_model = make_model()
    tpu_model = make_model()
    tpu_model.load_state_dict(cpu_model.state_dict())
    cpu_losses, cpu_state = train(cpu_model, data, "cpu", opt_name, foreach=foreach)
    torch_tpu.reset_metrics()
    tpu_losses, tpu_state = train(tpu_model, data, "tpu", opt_name, foreach=foreach)
    assert torch_tpu.metrics()["fallbacks"] == 0
    torch.testing.assert_close(torch.tensor(tpu_losses), torch.tensor(cpu_losses), rtol=1e-4, atol=1e-5)
    for k in cpu_state:
        torch.testing.assert_close(tpu_state[k], cpu_state[k], rtol=1e-3, atol=1e-4)
    assert cpu_losses[-1] < cpu_losses[0]  # it did learn


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("opt_name", ["adamw", "sgd"])
def test_mlp_trains_like_cpu(opt_name, foreach):
    g = torch.Generator().manual_seed(1)
    data = [(torch.randn(8, 16, generator=g), torch.randint(0, 5, (8,), generator=g)) for _ in range(4)]
    compare(MLP, data, opt_name, foreach)


@pytest.mark.parametrize("foreach", [False, True])
def test_transformer_block_trains_like_cpu(foreach):
    g = torch.Generator().manual_seed(2)
    data = []
    for _ in range(4):
        tokens = torch.randint(0, 50, (2, 12), generator=g)
        data.append((tokens, tokens.roll(-1, dims=1)))
    compare(Block, data, "adamw", foreach)


def test_steady_state_training_does_not_recompile():
    torch.manual_seed(0)
    model = MLP().to("tpu")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(8, 16).to("tpu"), torch.randint(0, 5, (8,)).to("tpu")

    def step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()
    for _ in range(3):  # AdamW's first steps take their own paths (step counts, lazy state)
        step()
    before = torch_tpu.metrics()["compiles"]
    for _ in range(5):
        step()
    assert torch_tpu.metrics()["compiles"] == before, torch_tpu.metrics()["compiles_by_op"]
