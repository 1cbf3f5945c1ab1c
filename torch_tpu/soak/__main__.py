"""python -m torch_tpu.soak [--steps N] [--tokens T]: prints each workload's
samples and the growth of every measure from 10% of the run to its end."""
import argparse
import os
import time

from . import generate, growth, train


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--tokens", type=int, default=2000)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    runs = [("eager training", lambda: train(args.steps, False, max(args.steps // 20, 1)), args.steps),
            ("compiled training", lambda: train(args.steps, True, max(args.steps // 20, 1)), args.steps),
            ("static-cache generation", lambda: generate(args.tokens, max(args.tokens // 20, 1)), args.tokens)]
    print(f"{'workload':26s} {'steps':>6s} {'secs':>6s} {'RSS MB':>8s} {'RSS growth':>11s} {'tpu MB':>7s} "
          f"{'tpu growth':>11s} {'buffers':>8s} {'programs':>9s}")
    for name, run, n in runs:
        t0 = time.time()
        s = run()
        start = max(n // 10, s[0]["step"])
        print(f"{name:26s} {n:6d} {time.time() - t0:6.0f} {s[-1]['rss'] / 2**20:8.1f} "
              f"{growth(s, 'rss', start) * 100:10.2f}% {s[-1]['tpu_bytes'] / 2**20:7.2f} "
              f"{growth(s, 'tpu_bytes', start) * 100:10.2f}% "
              f"{next(x for x in s if x['step'] >= start)['live_buffers']}->{s[-1]['live_buffers']:<4d} "
              f"{next(x for x in s if x['step'] >= start)['programs']}->{s[-1]['programs']}")


if __name__ == "__main__":
    main()
