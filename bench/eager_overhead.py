"""Eager per-op latency on tpu vs PyTorch CPU eager, measured in the same run.

    python bench/eager_overhead.py [--repeats N]

Prints, for a cached tiny op (add of two 16-element tensors) and a 1024x1024
float32 matmul, the median time per op on each device (tpu in the default
strict eager mode and in fused mode) and the ratios to the CPU (below 1: tpu
faster). tpu times include waiting for completion. Then the
cost of a new shape: three small ops (add, mul, sum) on 16 new shapes, the
median per program, split into XLA's compile (PJRT_Client_Compile) and the
rest (meta kernels, program building, execution). Between them, the PJRT
execute alone (bench/cpp/pjrt_execute.cpp, run as a subprocess): the floor
under every strict-mode op. Last, ops whose eager call
once cost far more than a cached tiny op (a Python meta kernel on every out=
call and every arange, pow computing every shortcut, topk as a full sort):
per call on each device, independent calls, one synchronize per sample.
Set TORCH_TPU_COMPILE_CACHE=0
to measure compiles rather than loads from the persistent cache; XLA_FLAGS
applies to the plugin's compiles.
"""
import os
import argparse
import statistics
import time

import torch

import torch_tpu


def per_op_seconds(op, a, b, sync, iters, repeats):
    """Median (min, max) seconds per op over `iters` ops chained x = op(x, b):
    each depends on the one before, so a fused window can neither drop nor
    merge them (XLA would compute `iters` identical independent ops once)."""
    op(a, b)
    sync()  # warm: compile and cache
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        x = a
        for _ in range(iters):
            x = op(x, b)
        sync()
        samples.append((time.perf_counter() - t0) / iters)
    return statistics.median(samples), min(samples), max(samples)


def execute_floor(cpu_add_seconds):
    """The PJRT execute under every strict-mode op, timed alone in C++
    (bench/cpp/pjrt_execute.cpp, built with the C++ tests into build/py): the
    same 16-element add chained through torch_tpu's PJRT layer on the same
    plugin, nothing of PyTorch around it."""
    import subprocess
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    binary = os.environ.get("TORCH_TPU_BENCH_PJRT_EXECUTE", os.path.join(root, "build", "py", "bench_pjrt_execute"))
    plugin = torch_tpu._C._runtime_info()["plugin_path"]  # the plugin the tpu device runs on
    if not os.path.exists(binary):
        print(f"pjrt execute alone: not measured ({binary} not built: scripts/setup.sh builds it)")
        return
    out = subprocess.run([binary, plugin, "5"], capture_output=True, text=True, timeout=300)
    line = out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout.strip() else ""
    if not line:
        print(f"pjrt execute alone: failed ({out.stderr.strip()[-300:]})")
        return
    median_us = float(line.split("median ")[1].split(" us")[0])
    print(f"{line} (C++, same plugin, add of 16 floats): {median_us * 1e-6 / cpu_add_seconds:.2f}x the CPU's "
          f"whole add, the floor under a strict-mode op")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    torch.manual_seed(0)
    cases = {
        "add 16 elements (cached tiny op)": (lambda d: (torch.randn(16).to(d), torch.randn(16).to(d)),
                                              lambda a, b: a + b, 200),
        "matmul 1024x1024 float32": (lambda d: (torch.randn(1024, 1024).to(d),
                                                (torch.randn(1024, 1024) / 32).to(d)),  # chained: stays finite
                                     lambda a, b: a @ b, 5),
    }
    print(f"torch {torch.__version__}, torch_tpu {torch_tpu.__version__}, "
          f"tpu = {torch.tpu.get_device_name()} via PJRT, {torch.get_num_threads()} CPU threads")
    print(f"{'workload':36s} {'cpu eager':>12s} {'tpu eager':>12s} {'tpu fused':>12s} {'tpu/cpu':>8s} "
          f"{'fused/cpu':>9s}")
    tiny_cpu = None
    for name, (make, op, iters) in cases.items():
        a, b = make("cpu")
        cpu = per_op_seconds(op, a, b, lambda: None, iters, args.repeats)
        ta, tb = make("tpu")
        tpu = per_op_seconds(op, ta, tb, torch.tpu.synchronize, iters, args.repeats)
        # Fused eager mode: the ops are recorded and run as one program per window.
        with torch.tpu.set_eager_mode(torch.tpu.EagerMode.DEFER_AND_FUSE):
            fused = per_op_seconds(op, ta, tb, torch.tpu.synchronize, iters, args.repeats)
        print(f"{name:36s} {cpu[0] * 1e6:10.1f}us {tpu[0] * 1e6:10.1f}us {fused[0] * 1e6:10.1f}us "
              f"{tpu[0] / cpu[0]:8.2f} {fused[0] / cpu[0]:9.2f}")
        tiny_cpu = tiny_cpu or cpu[0]
    execute_floor(tiny_cpu)
    m = torch_tpu.metrics()
    print(f"compiles {m['compiles']}, cache hits {m['cache_hits']}, fallbacks {m['fallbacks']}")
    new_shape_cost()
    costly_metadata_ops(args.repeats)


def per_call_seconds(fn, sync, iters, repeats):
    """Median seconds per call of `iters` independent calls of fn() and one sync."""
    fn()
    sync()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / iters)
    return statistics.median(samples)


def costly_metadata_ops(repeats, iters=100):
    print(f"{'op (independent calls)':36s} {'cpu eager':>12s} {'tpu eager':>12s} {'tpu/cpu':>8s}")
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(64, 256, generator=g), torch.randn(64, 256, generator=g)
    logits = torch.randn(64, 64, generator=g)
    cases = {
        "add(x, y, out=o), [64, 256]": lambda t: (lambda o=torch.empty_like(t["x"]): torch.add(t["x"], t["y"], out=o)),
        "where(x > 0, x, y, out=o)": lambda t: (lambda o=torch.empty_like(t["x"]), c=t["x"] > 0:
                                                torch.where(c, t["x"], t["y"], out=o)),
        "arange(16, 80) (cache positions)": lambda t: (lambda d=t["x"].device: torch.arange(16, 80, device=d)),
        "x.pow(2), [64, 256] (RMSNorm)": lambda t: (lambda: t["x"].pow(2)),
        "topk(logits, 8), [64, 64] (router)": lambda t: (lambda: torch.topk(t["logits"], 8)),
    }
    for name, make in cases.items():
        on = {}
        for device, sync in (("cpu", lambda: None), ("tpu", torch.tpu.synchronize)):
            t = {"x": x.to(device), "y": y.to(device), "logits": logits.to(device)}
            on[device] = per_call_seconds(make(t), sync, iters, repeats)
        print(f"{name:36s} {on['cpu'] * 1e6:10.1f}us {on['tpu'] * 1e6:10.1f}us {on['tpu'] / on['cpu']:8.2f}")


def new_shape_cost(shapes=16):
    per_program, compile_part = [], []
    for k in range(shapes):
        a, b = torch.randn(k + 9, 7).to("tpu"), torch.randn(k + 9, 7).to("tpu")
        torch.tpu.synchronize()
        m0 = torch_tpu.metrics()
        t0 = time.perf_counter()
        ((a + b) * a).sum().cpu()
        dt = time.perf_counter() - t0
        m1 = torch_tpu.metrics()
        n = max(m1["compiles"] - m0["compiles"], 1)
        per_program.append(dt / n)
        compile_part.append((m1["compile_seconds"] - m0["compile_seconds"]) / n)
    med, comp = statistics.median(per_program), statistics.median(compile_part)
    cache = os.environ.get("TORCH_TPU_COMPILE_CACHE", "on")
    print(f"new shape (add, mul, sum on {shapes} shapes; compile cache {cache}): {med * 1e3:.1f} ms per program, "
          f"of which XLA compile {comp * 1e3:.1f} ms, the rest {(med - comp) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
