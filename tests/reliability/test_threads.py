"""Threads: Python threads issuing ops, copies, .item() and synchronize() on
the same and on different devices, compiled graphs called from threads, and
program-cache misses racing — results equal the CPU's, and a deadlock fails
this test on its timeout rather than hanging the run."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def test_threads_drive_tpu_at_once():
    proc = subprocess.run([sys.executable, os.path.join(HERE, "threaded_workload.py")], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "TORCH_TPU_FALLBACK": "error"})
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), proc.stdout[-3000:] + proc.stderr[-3000:]
