"""The bench/peers.py workloads in PyTorch, for any device: the same code runs
PyTorch CPU and torch_tpu (eager and compiled) in peers.py's process and
torch_xla (lazy and eager) in bench/peers_xla_worker.py, another torch."""
import functools
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "compile"))
from models import Block  # noqa: E402

# name: (description, calls per timed sample)
WORKLOADS = {
    "add16": ("(a) add, 16 float32 elements", 100),
    "matmul1024": ("(b) matmul 1024x1024 float32", 3),
    "qwen3_fwd_b1": ("(c) Qwen3 tiny forward, batch 1 seq 128", 3),
    "qwen3_fwd_b8": ("(c) Qwen3 tiny forward, batch 8 seq 128", 1),
    "decode64": ("(d) greedy decode 64 tokens, static cache (batch 1, prompt 32)", 1),
    "train_block": ("(e) train step, Block d=256 h=8 vocab 2000, batch 4 seq 128 (AdamW)", 2),
}
PROMPT, NEW_TOKENS = 32, 64
BLOCK = dict(d=256, heads=8, vocab=2000)
ADAMW = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)


def make_inputs(checkpoint):
    """Every workload's inputs and the Block's weights, saved once so that the
    torch_xla worker (another torch) gets the same values."""
    g = torch.Generator().manual_seed(0)
    vocab = json.load(open(os.path.join(checkpoint, "config.json")))["vocab_size"]
    torch.manual_seed(0)
    block = Block(BLOCK["d"], BLOCK["heads"], BLOCK["vocab"])
    return {
        "add": [torch.randn(16, generator=g) for _ in range(2)],
        "matmul": [torch.randn(1024, 1024, generator=g) for _ in range(2)],
        "ids_b1": torch.randint(3, vocab, (1, 128), generator=g),
        "ids_b8": torch.randint(3, vocab, (8, 128), generator=g),
        "prompt": torch.randint(3, vocab, (1, PROMPT), generator=g),
        "tokens": torch.randint(0, BLOCK["vocab"], (4, 128), generator=g),
        "targets": torch.randint(0, BLOCK["vocab"], (4, 128), generator=g),
        "block": block.state_dict(),
    }


def load_qwen3(checkpoint, device):
    from transformers import AutoModelForCausalLM
    return AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).eval().to(device)


def build_torch(name, inputs, checkpoint, device, compiled, step_end):
    """run() for one call of workload `name` on `device`; it returns the call's
    result (left on the device). step_end() ends each step (torch_xla.sync()
    for lazy tensors). compiled: False, True (backend "tpu") or another backend."""
    backend = "tpu" if compiled is True else compiled
    comp = functools.partial(torch.compile, backend=backend, dynamic=False, fullgraph=True) if compiled else None
    if name in ("add16", "matmul1024"):
        a, b = (t.to(device) for t in inputs["add" if name == "add16" else "matmul"])
        f = (lambda a, b: a + b) if name == "add16" else (lambda a, b: a @ b)
        f = comp(f) if comp else f

        def run():
            out = f(a, b)
            step_end()
            return out
        return run
    if name.startswith("qwen3_fwd"):
        model = load_qwen3(checkpoint, device)
        ids = inputs["ids_b1" if name.endswith("b1") else "ids_b8"].to(device)
        if comp:
            model.forward = comp(model.forward)

        def run():
            with torch.no_grad():
                out = model(ids, use_cache=False).logits
            step_end()
            return out
        return run
    if name == "decode64":
        from transformers import StaticCache
        model = load_qwen3(checkpoint, device)
        prompt = inputs["prompt"].to(device)
        cache = StaticCache(config=model.config, max_cache_len=PROMPT + NEW_TOKENS)

        # One decoding step: the forward, the greedy pick and the next position,
        # the work JAX's jitted step does (peers_jax.qwen3_decode); compiled, it
        # is one graph per step (two shapes: the prompt and one token).
        def step(tokens, position):
            logits = model(tokens, past_key_values=cache, cache_position=position, use_cache=True).logits
            return logits[:, -1].argmax(-1, keepdim=True), position[-1:] + 1

        step = comp(step) if comp else step

        def run():
            with torch.no_grad():
                cache.reset()  # as generate() does: the static cache counts its own length
                token, position = step(prompt, torch.arange(PROMPT, device=device))
                tokens = [token]
                step_end()
                for _ in range(NEW_TOKENS - 1):
                    token, position = step(tokens[-1], position)
                    tokens.append(token)
                    step_end()
                out = torch.cat(tokens, 1)
            step_end()
            return out
        return run
    if name == "train_block":
        model = Block(BLOCK["d"], BLOCK["heads"], BLOCK["vocab"])
        model.load_state_dict(inputs["block"])
        model.to(device)
        opt = torch.optim.AdamW(model.parameters(), **ADAMW)
        # The optimizer step breaks its graph on purpose (Dynamo), so no fullgraph there.
        step = torch.compile(opt.step, backend="tpu", dynamic=False) if comp else opt.step
        forward = comp(model) if comp else model
        x, y = inputs["tokens"].to(device), inputs["targets"].to(device)

        def run():
            opt.zero_grad()
            out = forward(x)
            loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
            loss.backward()
            step()
            step_end()
            return loss.detach()
        return run
    raise ValueError(f"unknown workload {name}")


class TorchSystem:
    """A PyTorch device (and mode) measured in this process."""

    def __init__(self, name, device, compiled=False, sync=lambda: None, step_end=lambda: None,
                 compiles=lambda: None, eager_mode=None):
        self.name, self.device, self.compiled = name, device, compiled
        self.sync, self.step_end, self.compiles = sync, step_end, compiles
        self.eager_mode = eager_mode  # torch_tpu's eager mode for this system's calls ("fused")
        self.runs = {}

    def _mode(self):
        import contextlib
        return torch.tpu.set_eager_mode(self.eager_mode) if self.eager_mode else contextlib.nullcontext()

    def build(self, w, inputs, checkpoint):
        with self._mode():
            self.runs[w] = build_torch(w, inputs, checkpoint, self.device, self.compiled, self.step_end)
            self.step_end()
        self.sync()

    def call(self, w):
        with self._mode():  # leaving it runs the pending window (a mode change flushes)
            return self.runs[w]()


def first_call(system, w, *build_args):
    """Builds workload w (inputs and weights on the device, not timed), then
    times its first call; returns (seconds, compilations, result)."""
    system.build(w, *build_args)
    c0 = system.compiles()
    t0 = time.perf_counter()
    out = system.call(w)
    system.sync()
    s = time.perf_counter() - t0
    return s, None if c0 is None else system.compiles() - c0, out


def timed_calls(system, w, iters):
    """Seconds per call over `iters` calls and the wait for them; compilations."""
    c0 = system.compiles()
    t0 = time.perf_counter()
    for _ in range(iters):
        system.call(w)
    system.sync()
    s = (time.perf_counter() - t0) / iters
    return s, None if c0 is None else system.compiles() - c0
