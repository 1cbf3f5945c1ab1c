"""Runs (op, dtype) cases in worker subprocesses, so that a crash (segfault,
abort) or a hang of one op is recorded as that case's result and the sweep
goes on with a fresh worker.

Protocol: the parent writes one JSON job per line to the worker's stdin; the
worker answers one JSON line per job on its original stdout. The worker sends
everything else the ops print (fd 1 included) to stderr, whose last lines the
parent keeps to explain a crash.
"""
import collections
import json
import os
import queue
import subprocess
import sys
import threading
import time

from .runner import CRASH, TIMEOUT

_WORKER_CMD = ("import torch, torch_tpu; "
               "from torch_tpu.conformance.workers import worker_main; worker_main()")
_STARTUP_LIMIT_S = 600


def worker_main():
    """Worker side: loads op_db once, then answers jobs until stdin closes."""
    from . import runner
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # stray prints of the ops must not corrupt the protocol
    sys.stdout = sys.stderr
    opts = json.loads(sys.argv[1])
    ops = runner.load_op_db()
    proto.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        job = json.loads(line)
        try:
            result = runner.run_case(ops[job["op"]], job["dtype"], opts["max_samples"],
                                     backward=opts["backward"])
        except Exception as exc:  # noqa: BLE001 - a harness failure of this case only
            result = dict(job, status=runner.ERROR, reason="harness: " + runner.first_line(exc),
                          samples=[], fallbacks=[], seconds=0)
        proto.write(json.dumps(result) + "\n")


class _Worker:
    def __init__(self, opts):
        env = dict(os.environ)
        env.pop("TORCH_TPU_FALLBACK", None)  # a fallback is observed, never an error here
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER_CMD, json.dumps(opts)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.lines = queue.Queue()
        self.err_tail = collections.deque(maxlen=20)
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_out(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_err(self):
        for line in self.proc.stderr:
            if line.strip():
                self.err_tail.append(line.rstrip())

    def receive(self, timeout):
        """The next JSON message, or None on exit; raises queue.Empty on timeout."""
        line = self.lines.get(timeout=timeout)
        return None if line is None else json.loads(line)

    def send(self, job):
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()

    def crash_reason(self):
        self.proc.wait(timeout=30)
        code = self.proc.returncode
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        last = next((ln for ln in reversed(self.err_tail) if "Warning" not in ln), "")
        return f"worker died ({how})" + (f": {last[:200]}" if last else "")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001
            self.kill()


def run_cases(jobs, opts, n_workers, case_timeout_s, progress=None):
    """Runs every job ({'op', 'dtype'}) on n_workers workers; returns results in job order."""
    todo = queue.Queue()
    for i, job in enumerate(jobs):
        todo.put((i, job))
    results = [None] * len(jobs)
    done = [0]
    lock = threading.Lock()

    def record(i, result):
        results[i] = result
        with lock:
            done[0] += 1
            if progress:
                progress(done[0], len(jobs), result)

    def slot():
        worker = None
        while True:
            try:
                i, job = todo.get_nowait()
            except queue.Empty:
                break
            try:
                if worker is None:
                    worker = _Worker(opts)
                    if worker.receive(_STARTUP_LIMIT_S) is None:
                        raise RuntimeError(worker.crash_reason())
                start = time.monotonic()
                worker.send(job)
                msg = worker.receive(case_timeout_s)
                if msg is None:
                    record(i, dict(job, status=CRASH, reason=worker.crash_reason(), samples=[],
                                   fallbacks=[], seconds=round(time.monotonic() - start, 2)))
                    worker = None
                else:
                    record(i, msg)
            except queue.Empty:
                worker.kill()
                worker = None
                record(i, dict(job, status=TIMEOUT, reason=f"over the {case_timeout_s} s limit per case",
                               samples=[], fallbacks=[], seconds=case_timeout_s))
            except Exception as exc:  # noqa: BLE001 - a worker that cannot start
                if worker is not None:
                    worker.kill()
                worker = None
                record(i, dict(job, status=CRASH, reason=str(exc)[:300], samples=[], fallbacks=[], seconds=0))
        if worker is not None:
            worker.close()

    threads = [threading.Thread(target=slot) for _ in range(max(1, n_workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results
