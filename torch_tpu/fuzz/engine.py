"""Runs fuzz jobs in worker subprocesses and counts the outcomes.

A job is (target op, number of draws, hypothesis seed). A worker runs one job
at a time: hypothesis draws the calls (a fixed seed, no example database, no
shrinking: every run with the same seed makes the same draws), and each draw
is sent to the parent before it runs (with its repro) and after (with its
outcome). A worker that dies mid-draw is a crash of that draw, one that goes
quiet longer than the per-draw limit a timeout; either way the parent starts
a fresh worker and goes on with the next job.
"""
import collections
import json
import os
import queue
import subprocess
import sys
import threading
import time
import zlib

from ..conformance.workers import _Worker
from . import check as ck

_WORKER_CMD = "import torch, torch_tpu; from torch_tpu.fuzz.engine import worker_main; worker_main()"
STARTUP_LIMIT_S = 300


def _run_draws(target, n, seed, body):
    """Runs body(call) on n hypothesis draws of `target` from `seed`: no
    example database, no shrinking, so a seed always makes the same draws."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hyp_seed

    from .targets import calls

    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), derandomize=False)
    @hyp_seed(seed)
    @given(calls(target))
    def run(call):
        body(call)

    run()


def draw_calls(target, n, seed):
    """The calls a job (target, n, seed) makes, without running them."""
    out = []
    _run_draws(target, n, seed, out.append)
    return out


def worker_main():
    """Worker side: answers jobs from stdin until it closes (protocol on the original stdout)."""
    import signal
    import warnings

    from . import oracle, repro
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C stops the parent's run, not a draw (no false crash)
    from .targets import lowered_targets

    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)   # stray prints must not corrupt the protocol
    sys.stdout = sys.stderr
    warnings.simplefilter("ignore")
    targets = {t.name: t for t in lowered_targets()}
    proto.write(json.dumps({"ready": True}) + "\n")

    def send(msg):
        proto.write(json.dumps(msg) + "\n")

    for line in sys.stdin:
        job = json.loads(line)
        target = targets[job["target"]]

        def body(call):
            start = time.monotonic()
            send({"begin": call.describe(), "repro": repro.repro(call)})
            why = oracle.undefined(call)
            if why:
                send({"outcome": ck.UNDEFINED, "variant": call.variant, "detail": why, "fallback": False,
                      "seconds": time.monotonic() - start})
                return
            outcome, detail, fell_back = ck.check(call, lambda: send({"side": "tpu"}))
            send({"outcome": outcome, "variant": call.variant, "detail": detail, "fallback": fell_back,
                  "seconds": time.monotonic() - start})

        try:
            if job.get("inject_crash"):   # the harness's own test: a crash must be counted, not fatal
                send({"begin": "os.abort()", "repro": "import os; os.abort()\n"})
                send({"side": "tpu"})
                os.abort()
            _run_draws(target, job["n"], job["seed"], body)
        except Exception as exc:  # noqa: BLE001 - a harness bug: reported, the worker goes on
            send({"outcome": ck.HARNESS, "variant": "", "detail": f"{type(exc).__name__}: {exc}"[:300],
                  "fallback": False})
        send({"done": True})


class _FuzzWorker(_Worker):
    def __init__(self):  # noqa: D107 - the conformance worker, another command
        env = dict(os.environ)
        env.pop("TORCH_TPU_FALLBACK", None)   # a fallback is counted, never an error here
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER_CMD], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.lines = queue.Queue()
        self.err_tail = collections.deque(maxlen=20)
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()


def job_seed(base_seed, target, round_):
    """A stable seed per (run seed, op, round): the same draws in every run."""
    return (zlib.crc32(target.encode()) ^ (base_seed * 1000003 + round_ * 7919)) & 0xFFFFFFFF


class Stats:
    """Outcome counts and the records of every draw that was not parity."""

    def __init__(self):
        self.counts = collections.Counter()
        self.ops = set()
        self.fallbacks = 0
        self.records = []      # non-parity draws: dict(target, outcome, variant, detail, call, repro)
        self.draws = 0
        self.start = time.monotonic()
        self.op_seconds = collections.Counter()   # time per op, to find slow ones

    def add(self, target, msg, begin):
        self.draws += 1
        self.ops.add(target)
        self.counts[msg["outcome"]] += 1
        self.fallbacks += bool(msg.get("fallback"))
        self.op_seconds[target] += msg.get("seconds", 0.0)
        if msg["outcome"] not in ck.OK_KINDS:
            self.records.append(dict(target=target, outcome=msg["outcome"], variant=msg.get("variant", ""),
                                     detail=msg.get("detail"), call=begin.get("begin", "") if begin else "",
                                     repro=begin.get("repro", "") if begin else ""))


def run(targets, draws_per_job=5, rounds=1, seed=0, workers=2, deadline=None, draw_timeout_s=120,
        progress=None, inject_crash=False, stop=None):
    """Fuzzes `targets` (names): `rounds` passes of `draws_per_job` draws per op
    (an int, or {name: draws}), or until `deadline` (time.monotonic()) passes
    or `stop` (an Event) is set; returns Stats."""
    order = list(targets)

    def job_list():
        if inject_crash:
            yield {"target": order[0], "n": 1, "seed": 0, "inject_crash": True}
        for r in range(rounds):
            for t in order:
                n = draws_per_job.get(t, 0) if isinstance(draws_per_job, dict) else draws_per_job
                if n:
                    yield {"target": t, "n": n, "seed": job_seed(seed, t, r)}

    jobs = job_list()
    stats, lock = Stats(), threading.Lock()

    def slot():
        worker = None
        while (deadline is None or time.monotonic() < deadline) and not (stop is not None and stop.is_set()):
            with lock:
                job = next(jobs, None)
            if job is None:
                break
            begin = None
            try:
                if worker is None:
                    worker = _FuzzWorker()
                    if worker.receive(STARTUP_LIMIT_S) is None:
                        raise RuntimeError(worker.crash_reason())
                worker.send(job)
                while True:
                    msg = worker.receive(draw_timeout_s)
                    if msg is None:    # the worker died: a crash of the draw under way
                        reason = worker.crash_reason()
                        kind = ck.CRASH if begin is None or begin.get("side") == "tpu" else ck.CPU_CRASH
                        with lock:
                            stats.add(job["target"], {"outcome": kind, "detail": reason}, begin)
                        worker = None
                        break
                    if "done" in msg:
                        break
                    if "begin" in msg:
                        begin = msg
                        continue
                    if "side" in msg:
                        begin["side"] = msg["side"]
                        continue
                    with lock:
                        stats.add(job["target"], msg, begin)
                        if progress:
                            progress(stats)
                    begin = None
            except queue.Empty:
                worker.kill()
                worker = None
                with lock:
                    stats.add(job["target"], {"outcome": ck.TIMEOUT,
                                              "detail": f"no answer in {draw_timeout_s} s"}, begin)
            except Exception as exc:  # noqa: BLE001 - a worker that cannot start
                if worker is not None:
                    worker.kill()
                worker = None
                with lock:
                    stats.add(job["target"], {"outcome": ck.HARNESS, "detail": str(exc)[:300]}, begin)
        if worker is not None:
            worker.close()

    threads = [threading.Thread(target=slot, daemon=True) for _ in range(max(1, workers))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    except KeyboardInterrupt:   # Ctrl-C: finish the jobs under way, then report what ran
        if stop is not None:
            stop.set()
        try:
            for t in threads:
                t.join()
        except KeyboardInterrupt:   # a second one: report now (workers end when their stdin closes)
            pass
    stats.seconds = time.monotonic() - stats.start
    return stats


def run_for(minutes, targets, seed=0, workers=2, draws_per_job=5, progress=None):
    """Rounds over every target until `minutes` pass or Ctrl-C (the long mode)."""
    deadline = time.monotonic() + 60 * minutes
    return run(targets, draws_per_job=draws_per_job, rounds=10 ** 6, seed=seed,
               workers=workers, deadline=deadline, progress=progress, stop=threading.Event())
