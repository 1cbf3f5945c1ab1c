"""One rank of test_fsdp_dtensor.py: DTensor on a 1-D and a 2-D tpu mesh.
Every result is compared with the dense computation on the CPU."""
import datetime

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
from launch import say  # one write per line: ranks share the output pipe


def dense(x):
    return x.full_tensor().cpu()


def main():
    dist.init_process_group("tpu_dist", timeout=datetime.timedelta(seconds=120))
    rank = dist.get_rank()
    mesh = init_device_mesh("tpu", (4,))
    assert mesh.device_type == "tpu"
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(8, 12, generator=g), torch.randn(12, 4, generator=g)

    # Shard / Replicate placements hold the right local pieces, on tpu.
    da = distribute_tensor(a.to("tpu"), mesh, [Shard(0)])
    assert da.to_local().device.type == "tpu"
    torch.testing.assert_close(da.to_local().cpu(), a[rank * 2:(rank + 1) * 2], rtol=0, atol=0)
    db = distribute_tensor(b.to("tpu"), mesh, [Replicate()])
    torch.testing.assert_close(db.to_local().cpu(), b, rtol=0, atol=0)
    da_cols = distribute_tensor(a.to("tpu"), mesh, [Shard(1)])
    torch.testing.assert_close(da_cols.to_local().cpu(), a[:, rank * 3:(rank + 1) * 3], rtol=0, atol=0)

    # redistribute: Shard(0) -> Replicate -> Shard(1) -> Shard(0).
    torch.testing.assert_close(da.redistribute(mesh, [Replicate()]).to_local().cpu(), a, rtol=0, atol=0)
    s1 = da.redistribute(mesh, [Shard(1)])
    torch.testing.assert_close(s1.to_local().cpu(), a[:, rank * 3:(rank + 1) * 3], rtol=0, atol=0)
    torch.testing.assert_close(dense(s1.redistribute(mesh, [Shard(0)])), a, rtol=0, atol=0)

    # Sharded matmuls equal the dense one: row-sharded activations, and
    # column-sharded x row-sharded (a partial sum reduced across ranks).
    ref = a @ b
    torch.testing.assert_close(dense(da @ db), ref, rtol=1e-5, atol=1e-5)
    db_rows = distribute_tensor(b.to("tpu"), mesh, [Shard(0)])
    prod = da_cols @ db_rows
    assert isinstance(prod, DTensor) and prod.placements[0].is_partial()
    torch.testing.assert_close(dense(prod), ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(prod.redistribute(mesh, [Replicate()]).to_local().cpu(), ref, rtol=1e-5, atol=1e-5)

    # A 2-D mesh (2 x 2).
    mesh2 = init_device_mesh("tpu", (2, 2), mesh_dim_names=("dp", "tp"))
    x = distribute_tensor(a.to("tpu"), mesh2, [Shard(0), Shard(1)])
    dp, tp = mesh2.get_coordinate()
    torch.testing.assert_close(x.to_local().cpu(), a[dp * 4:(dp + 1) * 4, tp * 6:(tp + 1) * 6], rtol=0, atol=0)
    torch.testing.assert_close(dense(x.redistribute(mesh2, [Replicate(), Shard(0)])), a, rtol=0, atol=0)
    w = distribute_tensor(b.to("tpu"), mesh2, [Replicate(), Shard(0)])
    torch.testing.assert_close(dense(x @ w), ref, rtol=1e-5, atol=1e-5)
    # Sub-mesh collectives run on their own groups.
    tp_sum = x.redistribute(mesh2, [Shard(0), Replicate()]).to_local().sum()
    torch.testing.assert_close(tp_sum.cpu(), a[dp * 4:(dp + 1) * 4].sum(), rtol=1e-5, atol=1e-5)

    dist.barrier()
    say(f"WORKER OK rank {rank}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
