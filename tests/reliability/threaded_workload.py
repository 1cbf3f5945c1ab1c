"""Run as a subprocess by test_threads.py (a deadlock then fails the test on
its timeout instead of hanging CI): several Python threads drive tpu at once
and every result is compared with the CPU's. Prints OK or raises."""
import sys
import threading

import torch

THREADS = 4
STEPS = 30


def eager_steps(tid, out):
    # Each thread on its own device (and two threads per device when there
    # are fewer devices): ops, copies, .item(), synchronize, and new shapes
    # (program-cache misses racing with other threads' lookups).
    dev = f"tpu:{tid % torch.tpu.device_count()}"
    g = torch.Generator().manual_seed(tid)
    for step in range(STEPS):
        n = 8 + (step + tid) % 5  # shared shapes across threads and fresh ones
        a = torch.randn(n, n, generator=g)
        b = torch.randn(n, generator=g)
        ta, tb = a.to(dev), b.to(dev)
        got = torch.relu(ta @ tb + 1.5).sum(0, keepdim=True) * ta[1:, :2].mean()
        want = torch.relu(a @ b + 1.5).sum(0, keepdim=True) * a[1:, :2].mean()
        torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)
        assert abs((ta.sum() - a.sum().to(dev)).item()) < 1e-3
        view = ta.t()[::2]
        view.add_(1.0)  # in place through a strided view of the storage
        a.t()[::2].add_(1.0)
        torch.testing.assert_close(ta.cpu(), a)
        if step % 7 == 0:
            torch.tpu.synchronize(dev)
    out[tid] = True


def compiled_calls(tid, fn, out):
    g = torch.Generator().manual_seed(100 + tid)
    for _ in range(STEPS):
        x = torch.randn(16, 32, generator=g)
        got = fn(x.to("tpu"))
        torch.testing.assert_close(got.cpu(), torch.nn.functional.gelu(x @ x.t()).softmax(-1), rtol=1e-4, atol=1e-5)
    out[tid] = True


def run(target, args_of):
    results, errors = {}, []

    def guarded(tid):
        try:
            target(tid, *args_of(tid), results)
        except BaseException as e:  # reported by the main thread
            errors.append((tid, repr(e)))

    threads = [threading.Thread(target=guarded, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(results) == list(range(THREADS)), results


def main():
    run(eager_steps, lambda tid: ())
    fn = torch.compile(lambda x: torch.nn.functional.gelu(x @ x.t()).softmax(-1), backend="tpu")
    fn(torch.randn(16, 32).to("tpu"))  # compiled once, then called from every thread
    run(compiled_calls, lambda tid: (fn,))
    torch.tpu.synchronize()
    print("OK")


if __name__ == "__main__":
    sys.exit(main())
