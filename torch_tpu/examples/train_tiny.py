"""Trains the small Qwen3 of tiny_checkpoint on the shipped corpus, on `tpu`,
with a plain PyTorch loop: random windows of the tokenized text, AdamW,
gradient clipping, warmup then cosine decay. The corpus is small, so the
model learns it by heart in a minute or two; its greedy continuation of a
sentence from the corpus then reproduces the corpus, which shows (more
visibly than a loss figure) that the forward, backward and optimizer steps
computed the right thing on the device.

    python -m torch_tpu.examples.train_tiny [--steps N] [--out FOLDER]
"""
import argparse
import math
import time

import torch

import torch_tpu

from . import tiny_checkpoint

DEFAULT_STEPS = 100
# Sized for a 2-core CPU host (about a minute): 16 x 64 tokens per step is
# about two passes over the corpus, and the loss is near 0.1 by step 40.
RECIPE = dict(seq_len=64, batch_size=16, lr=3e-3, warmup=10)


def lr_lambda(warmup: int, steps: int):
    """Linear warmup, then cosine decay to a tenth: the last steps settle the
    memorized text instead of bouncing around it at the peak rate."""
    def f(step):
        if step < warmup:
            return (step + 1) / warmup
        t = (step - warmup) / max(1, steps - warmup)
        return 0.1 + 0.45 * (1 + math.cos(math.pi * t))
    return f


def progress(step, steps, loss, tokens_per_s, seconds, width=20):
    done = round(width * step / steps)
    return (f"step {step:>4}/{steps} [{'#' * done}{'.' * (width - done)}] loss {loss:7.4f}  "
            f"{tokens_per_s:8.0f} tokens/s  {seconds:6.1f} s")


def train(model, ids, steps, seq_len=64, batch_size=16, lr=3e-3, warmup=10, device="tpu",
          log_every=10, seed=0, out=print):
    """Trains `model` (moved to `device`) on random windows of the 1-d token
    tensor `ids`; returns the loss of every step as floats."""
    model.to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda(warmup, steps))
    gen = torch.Generator().manual_seed(seed)  # batches drawn on the CPU: the same on every device
    pending, losses = [], []  # losses stay on the device until a progress line reads them
    t0 = t_log = time.perf_counter()
    for step in range(1, steps + 1):
        starts = torch.randint(0, len(ids) - seq_len, (batch_size,), generator=gen).tolist()
        x = torch.stack([ids[s:s + seq_len] for s in starts]).to(device)
        loss = model(input_ids=x, labels=x).loss  # labels are shifted inside the model
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        pending.append(loss.detach())
        if step == 1 or step % log_every == 0 or step == steps:
            losses += [v.item() for v in pending]  # .item() waits for the device
            now = time.perf_counter()
            out(progress(step, steps, losses[-1], len(pending) * x.numel() / (now - t_log), now - t0)
                + ("  (first step: compiles each op once)" if step == 1 else ""))
            pending, t_log = [], now
    return losses


def train_checkpoint(folder, steps=DEFAULT_STEPS, config=None, device="tpu", log_every=10, seed=0,
                     out=print, **recipe):
    """Builds tokenizer and model, trains on `device`, saves both with
    save_pretrained (atomically) plus train_log.json; returns the log."""
    recipe = {**RECIPE, **recipe}
    text = tiny_checkpoint.corpus_text()
    config = config or tiny_checkpoint.CONFIG
    tokenizer = tiny_checkpoint.build_tokenizer(config["vocab_size"], text)
    model = tiny_checkpoint.new_model(tokenizer, config, seed=seed)
    ids = torch.tensor(tokenizer(text)["input_ids"])
    n_params = sum(p.numel() for p in model.parameters())
    out(f"training {n_params / 1e6:.1f}M parameters on {device} for {steps} steps: corpus {len(text)} "
        f"characters = {len(ids)} tokens, {recipe['batch_size']} x {recipe['seq_len']} tokens per step, "
        f"AdamW lr {recipe['lr']}")
    torch_tpu.reset_metrics()
    t0 = time.perf_counter()
    losses = train(model, ids, steps, device=device, log_every=log_every, seed=seed, out=out, **recipe)
    seconds = time.perf_counter() - t0
    out(f"trained in {seconds:.1f} s: loss {losses[0]:.3f} -> {losses[-1]:.3f} "
        f"({losses[0] / losses[-1]:.0f}x lower)")
    m = torch_tpu.metrics()
    out(f"metrics (training): compiles {m['compiles']}, cache hits {m['cache_hits']}, fallbacks {m['fallbacks']}")
    log = dict(steps=steps, device=str(device), seconds=round(seconds, 2), losses=losses,
               recipe=recipe, seed=seed)
    # save_pretrained from the device: safetensors gets CPU copies of the weights.
    tiny_checkpoint.save_atomically(folder, model, tokenizer, extra={"train_log.json": log})
    return log


def read_log(folder):
    import json
    import os

    path = os.path.join(folder, "train_log.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def longest_corpus_overlap(text: str, corpus: str | None = None) -> str:
    """The longest substring of `text` that occurs in the corpus."""
    corpus = tiny_checkpoint.corpus_text() if corpus is None else corpus
    best = ""
    for i in range(len(text)):
        n = len(best) + 1  # only longer matches matter; a longer one contains a shorter one
        while i + n <= len(text) and text[i:i + n] in corpus:
            best = text[i:i + n]
            n += 1
    return best


def main(argv=None):
    p = argparse.ArgumentParser(description="Train the tiny Qwen3 on the shipped corpus, on tpu.")
    p.add_argument("--steps", type=int, default=DEFAULT_STEPS)
    p.add_argument("--out", help="checkpoint folder (default: the main job's cache folder; retrains)")
    p.add_argument("--device", default="tpu")
    args = p.parse_args(argv)
    folder = args.out or tiny_checkpoint.default_folder(args.steps)
    train_checkpoint(folder, steps=args.steps, device=args.device)
    print(f"saved: {folder}")


if __name__ == "__main__":
    main()
