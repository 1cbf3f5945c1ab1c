"""Eager per-op latency on tpu vs PyTorch CPU eager, measured in the same run.

    python bench/eager_overhead.py [--repeats N]

Prints, for a cached tiny op (add of two 16-element tensors) and a 1024x1024
float32 matmul, the median time per op on each device and the ratio tpu/cpu
(below 1: tpu faster). tpu times include waiting for completion.
"""
import argparse
import statistics
import time

import torch

import torch_tpu


def per_op_seconds(fn, sync, iters, repeats):
    fn()
    sync()  # warm: compile and cache
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / iters)
    return statistics.median(samples), min(samples), max(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    torch.manual_seed(0)
    cases = {
        "add 16 elements (cached tiny op)": (lambda d: (torch.randn(16).to(d), torch.randn(16).to(d)),
                                              lambda a, b: a + b, 200),
        "matmul 1024x1024 float32": (lambda d: (torch.randn(1024, 1024).to(d), torch.randn(1024, 1024).to(d)),
                                     lambda a, b: a @ b, 5),
    }
    print(f"torch {torch.__version__}, torch_tpu {torch_tpu.__version__}, "
          f"tpu = {torch.tpu.get_device_name()} via PJRT, {torch.get_num_threads()} CPU threads")
    print(f"{'workload':36s} {'cpu eager':>12s} {'tpu eager':>12s} {'tpu/cpu':>8s}")
    for name, (make, op, iters) in cases.items():
        a, b = make("cpu")
        cpu = per_op_seconds(lambda: op(a, b), lambda: None, iters, args.repeats)
        ta, tb = make("tpu")
        tpu = per_op_seconds(lambda: op(ta, tb), torch.tpu.synchronize, iters, args.repeats)
        print(f"{name:36s} {cpu[0] * 1e6:10.1f}us {tpu[0] * 1e6:10.1f}us {tpu[0] / cpu[0]:8.2f}")
    m = torch_tpu.metrics()
    print(f"compiles {m['compiles']}, cache hits {m['cache_hits']}, fallbacks {m['fallbacks']}")


if __name__ == "__main__":
    main()
