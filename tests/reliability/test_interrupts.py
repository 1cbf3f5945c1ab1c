"""Ctrl-C in the middle of asynchronous work leaves the device usable (run in
a subprocess: a hang fails the test on its timeout)."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def test_keyboard_interrupt_during_queued_work_and_synchronize():
    proc = subprocess.run([sys.executable, os.path.join(HERE, "interrupted_workload.py")], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), proc.stdout[-3000:] + proc.stderr[-3000:]
