"""torch.distributed on tpu against gloo on CPU tensors, measured in the same run.

    python bench/distributed.py [--nproc 4] [--max-mb 64] [--out docs/benchmarks.md]

Launches torchrun itself. Part 1: all_reduce (sum, float32) from 1 KB to
--max-mb, on tpu tensors through "tpu_dist" and on CPU tensors through a gloo
group in the same processes: median seconds per call and bus bandwidth
(2(n-1)/n x bytes / time, as nccl-tests report), and their ratio (tpu over
gloo; 1.0 means staging through the host costs nothing). Run twice: with the
backend's cross-rank agreement check (the default) and without it
(TORCH_TPU_DIST_CHECK=0). Part 2: DDP training step time of an MLP on N
ranks and on 1 (same batch per rank). Prints the load average: the machine is
shared, and figures count only from a run at load below 1.
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys
import time


def timed_round_robin(contenders, repeats):
    """contenders: (fn, sync) pairs, timed in turn each repeat (load changes hit
    every contender alike); the median seconds of each."""
    for _ in range(3):  # warm-up (tpu_dist predicts a repeated all_reduce from its third call)
        for fn, sync in contenders:
            fn()
            sync()
    samples = [[] for _ in contenders]
    for _ in range(repeats):
        for (fn, sync), out in zip(contenders, samples):
            t0 = time.perf_counter()
            fn()
            sync()
            out.append(time.perf_counter() - t0)
    return [statistics.median(s) for s in samples]


def allreduce_worker(max_mb):
    import torch
    import torch.distributed as dist

    dist.init_process_group("tpu_dist", timeout=datetime.timedelta(seconds=300))
    rank, n = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo")
    size = 1024
    rows = []
    while size <= max_mb * 2**20:
        numel = size // 4
        repeats = 25 if size <= 2**20 else 9
        cpu = torch.ones(numel)
        tpu = torch.ones(numel, device="tpu")
        # .item() of one element waits for the result in the tpu tensor.
        t_gloo, t_tpu = timed_round_robin([(lambda: dist.all_reduce(cpu, group=gloo), lambda: None),
                                           (lambda: dist.all_reduce(tpu), lambda: tpu[0].item())], repeats)
        t = torch.tensor([t_gloo, t_tpu])
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=gloo)  # the slowest rank's time
        rows.append((size, *t.tolist()))
        size *= 4
    if rank == 0:
        check = "off" if os.environ.get("TORCH_TPU_DIST_CHECK") == "0" else "on"
        print(f"\nall_reduce float32 sum, {n} ranks, agreement check {check}")
        print(f"{'size':>8} {'gloo cpu':>10} {'tpu':>10} {'gloo GB/s':>10} {'tpu GB/s':>10} {'tpu/gloo':>9}")
        for size, tg, tt in rows:
            bus = 2 * (n - 1) / n * size / 1e9
            label = f"{size // 2**20} MB" if size >= 2**20 else f"{size // 1024} KB"
            print(f"{label:>8} {tg * 1e3:8.3f}ms {tt * 1e3:8.3f}ms {bus / tg:10.3f} {bus / tt:10.3f} "
                  f"{(bus / tt) / (bus / tg):8.2f}x", flush=True)
    dist.destroy_process_group()


def ddp_worker(steps):
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("tpu_dist")
    rank, n = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.GELU(), nn.Linear(1024, 16))
    ddp = DDP(model.to("tpu"))
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x, y = torch.randn(64, 256, device="tpu"), torch.randn(64, 16, device="tpu")

    def step():
        loss = nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()

    (t,) = timed_round_robin([(step, lambda: torch.tpu.synchronize())], steps)
    if rank == 0:
        params = sum(p.numel() for p in model.parameters())
        print(f"DDP MLP ({params / 1e6:.2f} M parameters, batch 64 per rank), {n} rank(s): "
              f"{t * 1e3:.1f} ms per step", flush=True)
    dist.destroy_process_group()


def launch(nproc, *args, env=None):
    """Runs one worker under torchrun; returns (and prints) its report lines."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc),
           __file__, *args]
    p = subprocess.run(cmd, env=dict(os.environ, OMP_NUM_THREADS="1", **(env or {})), capture_output=True,
                       text=True, timeout=1200)
    lines = [line for line in p.stdout.splitlines() if line.strip()]
    print("\n".join(lines), flush=True)
    if p.returncode != 0:
        print(p.stderr[-4000:], file=sys.stderr)
        raise SystemExit(p.returncode)
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nproc", type=int, default=4)
    ap.add_argument("--max-mb", type=int, default=64)
    ap.add_argument("--ddp-steps", type=int, default=10)
    ap.add_argument("--worker", choices=["allreduce", "ddp"])
    ap.add_argument("--out", help="write the figures as a section of this markdown file (docs/benchmarks.md)")
    args = ap.parse_args()
    if args.worker == "allreduce":
        return allreduce_worker(args.max_mb)
    if args.worker == "ddp":
        return ddp_worker(args.ddp_steps)
    load_start = os.getloadavg()[0]
    print(f"load average at start {load_start:.2f} ({os.cpu_count()} cores)")
    report = launch(args.nproc, "--worker", "allreduce", "--max-mb", str(args.max_mb))
    report += [""] + launch(args.nproc, "--worker", "allreduce", "--max-mb", str(args.max_mb),
                            env={"TORCH_TPU_DIST_CHECK": "0"})
    print()
    report += [""] + launch(1, "--worker", "ddp", "--ddp-steps", str(args.ddp_steps))
    report += launch(args.nproc, "--worker", "ddp", "--ddp-steps", str(args.ddp_steps))
    load_end = os.getloadavg()[0]
    print(f"load average at end {load_end:.2f}")
    if args.out:
        from report_sections import write_section

        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
        body = (f"## torch.distributed: tpu_dist against gloo\n\n"
                f"`python bench/distributed.py --out docs/benchmarks.md` ({time.strftime('%Y-%m-%d')}, commit "
                f"{commit}, {os.cpu_count()} cores, load average {load_start:.2f} at start, {load_end:.2f} at end; "
                f"{args.nproc} ranks on this machine, the XLA CPU plugin as each rank's device).\n\n"
                "```\n" + "\n".join(report).strip() + "\n```\n")
        write_section(args.out, "distributed", body)
        print(f"written to {args.out}")

if __name__ == "__main__":
    main()
