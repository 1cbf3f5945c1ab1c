"""FSDP2 training on tpu, one process per device:

    torchrun --nproc-per-node 4 -m torch_tpu.examples.train_fsdp [--steps N]

Each rank builds the same small Qwen3 (tiny_checkpoint, fixed seed) and the
tokenizer of the shipped corpus, shards every decoder layer and the model with
``fully_shard`` over the "tpu_dist" process group, and trains on its own
windows of the corpus (the global batch is split over the ranks): AdamW,
gradient clipping on the sharded gradients. Rank 0 prints the loss (averaged
over ranks) and the global tokens/s of each step; the first step's time
includes compiling.
"""
import argparse
import time

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

import torch_tpu  # noqa: F401  (registers the tpu device and the tpu_dist backend)

from . import tiny_checkpoint


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--batch-per-rank", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-3)
    args = p.parse_args(argv)

    dist.init_process_group("tpu_dist")
    rank, world = dist.get_rank(), dist.get_world_size()
    tokenizer = tiny_checkpoint.build_tokenizer(tiny_checkpoint.CONFIG["vocab_size"])
    model = tiny_checkpoint.new_model(tokenizer, seed=0).to("tpu")
    for layer in model.model.layers:
        fully_shard(layer)
    fully_shard(model)
    ids = torch.tensor(tokenizer(tiny_checkpoint.corpus_text())["input_ids"])
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    gen = torch.Generator().manual_seed(1000 + rank)  # each rank its own windows
    tokens = args.seq_len * args.batch_per_rank * world
    if rank == 0:
        n = sum(p.numel() for p in model.parameters())
        print(f"{world} ranks, {n / 1e6:.2f} M parameters sharded {world} ways, {tokens} tokens per step")
    for step in range(1, args.steps + 1):
        t0 = time.perf_counter()
        starts = torch.randint(0, len(ids) - args.seq_len, (args.batch_per_rank,), generator=gen).tolist()
        x = torch.stack([ids[s:s + args.seq_len] for s in starts]).to("tpu")
        loss = model(input_ids=x, labels=x).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss = loss.detach()
        dist.all_reduce(loss, op=dist.ReduceOp.AVG)
        value = loss.item()  # waits for the step
        seconds = time.perf_counter() - t0
        if rank == 0:
            print(f"step {step:>3}/{args.steps}  loss {value:7.4f}  {tokens / seconds:8.0f} tokens/s  {seconds:6.2f} s",
                  flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
