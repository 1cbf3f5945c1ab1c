"""One rank of test_ddp.py: DistributedDataParallel on tpu over "tpu_dist".
Each rank trains on its quarter of a batch; rank 0 also trains one model on
the whole batch in a single process. Losses (averaged over ranks) and final
weights must match, and every rank must end with the same weights."""
import copy
import datetime

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from launch import say  # one write per line: ranks share the output pipe

STEPS = 10
PER_RANK = 4


class Block(nn.Module):
    """A transformer encoder block and a head."""

    def __init__(self):
        super().__init__()
        self.block = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.block(x).mean(1))


def models():
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 4))
    g = torch.Generator().manual_seed(1)
    mlp_data = [(torch.randn(PER_RANK * 4, 16, generator=g), torch.randn(PER_RANK * 4, 4, generator=g))
                for _ in range(STEPS)]
    torch.manual_seed(2)
    block = Block()
    block_data = [(torch.randn(PER_RANK * 4, 6, 32, generator=g), torch.randn(PER_RANK * 4, 4, generator=g))
                  for _ in range(STEPS)]
    return [("mlp", mlp, mlp_data), ("transformer block", block, block_data)]


def train(model, data, rows):
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for x, y in data:
        x, y = x[rows].to("tpu"), y[rows].to("tpu")
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.detach())
    return torch.stack(losses)


def main():
    dist.init_process_group("tpu_dist", timeout=datetime.timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world == 4
    for name, model, data in models():
        reference = copy.deepcopy(model).to("tpu")
        ddp = DDP(model.to("tpu"))
        losses = train(ddp, data, slice(rank * PER_RANK, (rank + 1) * PER_RANK))
        dist.all_reduce(losses, op=dist.ReduceOp.AVG)
        params = [p.detach() for p in ddp.module.parameters()]
        # Every rank holds rank 0's weights, exactly.
        for p in params:
            p0 = p.clone()
            dist.broadcast(p0, 0)
            torch.testing.assert_close(p.cpu(), p0.cpu(), rtol=0, atol=0, msg=f"{name}: ranks' weights differ")
        if rank == 0:
            ref_losses = train(reference, data, slice(None))
            torch.testing.assert_close(losses.cpu(), ref_losses.cpu(), rtol=1e-5, atol=1e-6,
                                       msg=lambda m: f"{name} losses: {m}")
            for (pname, ref), p in zip(reference.named_parameters(), params):
                torch.testing.assert_close(p.cpu(), ref.detach().cpu(), rtol=1e-5, atol=1e-6,
                                           msg=lambda m: f"{name} {pname}: {m}")
            say(f"{name}: losses {[round(v, 5) for v in losses.tolist()]}")
        dist.barrier()
    say(f"WORKER OK rank {rank}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
