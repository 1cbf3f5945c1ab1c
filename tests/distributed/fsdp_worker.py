"""One rank of test_fsdp.py: FSDP2 (fully_shard) on a tiny Llama built from a
config, 10 AdamW steps on 4 ranks (each its quarter of the batch), against
one process training the same model on the whole batch (rank 0)."""
import copy
import datetime

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard
from transformers import LlamaConfig, LlamaForCausalLM
from launch import say  # one write per line: ranks share the output pipe

STEPS = 10
PER_RANK = 2
SEQ = 8


def tiny_llama():
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    return LlamaForCausalLM(config)


def batches(world):
    g = torch.Generator().manual_seed(3)
    return [torch.randint(0, 96, (PER_RANK * world, SEQ), generator=g) for _ in range(STEPS)]


def train(model, data, rows):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    losses = []
    for ids in data:
        ids = ids[rows].to("tpu")
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.detach())
    return torch.stack(losses)


def main():
    dist.init_process_group("tpu_dist", timeout=datetime.timedelta(seconds=180))
    rank, world = dist.get_rank(), dist.get_world_size()
    model = tiny_llama()
    reference = copy.deepcopy(model).to("tpu") if rank == 0 else None
    model.to("tpu")
    for layer in model.model.layers:
        fully_shard(layer)
    fully_shard(model)
    data = batches(world)
    losses = train(model, data, slice(rank * PER_RANK, (rank + 1) * PER_RANK))
    dist.all_reduce(losses, op=dist.ReduceOp.AVG)
    full = {name: p.full_tensor() for name, p in model.named_parameters()}
    if rank == 0:
        ref_losses = train(reference, data, slice(None))
        say(f"fsdp losses {[round(v, 5) for v in losses.tolist()]}")
        say(f"ref  losses {[round(v, 5) for v in ref_losses.tolist()]}")
        torch.testing.assert_close(losses.cpu(), ref_losses.cpu(), rtol=1e-4, atol=1e-5)
        for name, p in reference.named_parameters():
            torch.testing.assert_close(full[name].cpu(), p.detach().cpu(), rtol=1e-4, atol=1e-5,
                                       msg=lambda m: f"{name}: {m}")
    dist.barrier()
    say(f"WORKER OK rank {rank}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
