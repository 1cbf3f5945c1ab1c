"""Run as a subprocess by test_interrupts.py: Ctrl-C (SIGINT) arrives while a
long queue of asynchronous tpu work is in flight, or while the main thread
waits in synchronize(); the KeyboardInterrupt reaches Python, and afterwards
the device finishes or drops nothing it should not: later results are right."""
import os
import signal
import threading
import time

import torch


def interrupt_soon(delay):
    threading.Timer(delay, lambda: os.kill(os.getpid(), signal.SIGINT)).start()


def long_queue(x, steps):
    for _ in range(steps):
        x = torch.tanh(x @ x * 0.01 + 0.5)
    return x


def queue_until_interrupted(x, limit_s=60):
    """Queues work until the KeyboardInterrupt; fails (not hangs) if none comes."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        x = long_queue(x, 50)
    raise AssertionError(f"no KeyboardInterrupt within {limit_s} s of queueing")


def main():
    # A child of a non-interactive shell's background job inherits SIGINT as
    # ignored, and Python then installs no KeyboardInterrupt handler (CI runners
    # do this): install the one an interactive Python has, which is what this
    # workload is about.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    x_cpu = torch.randn(192, 192)
    x = x_cpu.to("tpu")
    long_queue(x, 2).cpu()  # compile outside the timed part
    interrupted = 0

    # 1. While Python queues work.
    interrupt_soon(0.2)
    try:
        queue_until_interrupted(x)
    except KeyboardInterrupt:
        interrupted += 1

    # 2. While the main thread waits for the device.
    y = long_queue(x, 400)
    interrupt_soon(0.05)
    try:
        torch.tpu.synchronize()
        time.sleep(2)  # a SIGINT held back during the wait is delivered by now
    except KeyboardInterrupt:
        interrupted += 1
    assert interrupted == 2, interrupted

    # The device is usable and the interrupted queue did not corrupt anything.
    torch.tpu.synchronize()
    torch.testing.assert_close(y.cpu(), long_queue(x_cpu, 400), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(long_queue(x, 3).cpu(), long_queue(x_cpu, 3), rtol=1e-5, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
