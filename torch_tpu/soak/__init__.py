"""Long runs that must hold steady: eager and compiled training loops and a
static-cache generation, with host RSS, tpu memory, live device buffers and
compiled programs sampled as they go. After warm-up nothing may grow.

    python -m torch_tpu.soak --steps 5000 --tokens 2000

tests/reliability/test_soak.py runs the same workloads with fewer steps.
"""
from __future__ import annotations

import os

import torch

import torch_tpu


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def sample(step: int) -> dict:
    torch.tpu.synchronize()  # retired buffers are released once queued work is done
    m = torch_tpu.metrics()
    return dict(step=step, rss=rss_bytes(), tpu_bytes=torch.tpu.memory_allocated(),
                live_buffers=m["live_device_buffers"], programs=m["compiles"] + m["graph_compiles"])


class _Block(torch.nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.attn = torch.nn.MultiheadAttention(d, 4, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.norm(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm(x))


def train(steps: int, compiled: bool, every: int) -> list[dict]:
    """A transformer block trained with AdamW on random batches."""
    torch.manual_seed(0)
    model = _Block().to("tpu")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    forward = torch.compile(model, backend="tpu") if compiled else model
    samples = []
    for step in range(1, steps + 1):
        x = torch.randn(4, 16, 64).to("tpu")
        loss = forward(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % every == 0:
            loss.item()
            samples.append(sample(step))
    return samples


def generate(tokens: int, every: int) -> list[dict]:
    """Greedy decoding with a StaticCache, one token per call, as generate's loop does."""
    from transformers import Qwen3Config, Qwen3ForCausalLM, StaticCache

    torch.manual_seed(0)
    config = Qwen3Config(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                         max_position_embeddings=tokens + 16)
    model = Qwen3ForCausalLM(config).to("tpu").eval()
    cache = StaticCache(config=config, max_cache_len=tokens + 8)
    ids = torch.tensor([[1, 5, 9, 11]], device="tpu")
    samples = []
    with torch.no_grad():
        pos = torch.arange(ids.shape[1], device="tpu")
        logits = model(ids, past_key_values=cache, cache_position=pos, use_cache=True).logits
        for t in range(1, tokens + 1):
            nxt = logits[:, -1:].argmax(-1)
            pos = pos[-1:] + 1
            logits = model(nxt, past_key_values=cache, cache_position=pos, use_cache=True).logits
            if t % every == 0:
                samples.append(sample(t))
    return samples


def growth(samples: list[dict], key: str, start_step: int) -> float:
    """Relative growth of `key` from the first sample at or after start_step to the last."""
    base = next(s for s in samples if s["step"] >= start_step)[key]
    last = samples[-1][key]
    return (last - base) / base if base else float(last - base)
