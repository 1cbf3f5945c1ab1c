"""Runs a worker script under ``torchrun --nproc-per-node N`` (the way users
launch), bounded by a timeout so that a hang fails the test, not the run."""
import os
import signal
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def torchrun(script: str, nproc: int = 4, timeout: float = 300, args=(), env=None):
    """Returns (returncode, combined output); returncode None on timeout."""
    full_env = dict(os.environ, TORCH_TPU_FALLBACK="error", OMP_NUM_THREADS="1")
    full_env.update(env or {})
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc),
           str(HERE / script), *map(str, args)]
    p = subprocess.Popen(cmd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # torchrun and every rank
        out, _ = p.communicate()
        return None, out


def assert_ran(rc, out, nproc=4, marker="WORKER OK"):
    tail = out[-8000:]
    assert rc is not None, f"the ranks did not finish in time:\n{tail}"
    assert rc == 0, f"torchrun exited {rc}:\n{tail}"
    assert out.count(marker) == nproc, f"expected {nproc} ranks to report '{marker}':\n{tail}"


def say(line: str) -> None:
    """One line from a rank, in one write: the ranks share torchrun's output
    pipe, and print() writes the text and the newline separately, so two
    ranks' lines could interleave into one."""
    os.write(1, (line.rstrip("\n") + "\n").encode())
