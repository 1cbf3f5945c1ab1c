"""One rank of test_failures.py. Mode "dead": rank 3 exits without joining
the next collective; "stuck": rank 3 joins 12 s late. The other ranks must
get a clear error within the process group's timeout (5 s) and report it."""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist
from launch import say  # one write per line: ranks share the output pipe

TIMEOUT_S = 5


def main(mode):
    # No backend named: on a tpu machine init_process_group picks tpu_dist.
    dist.init_process_group(timeout=datetime.timedelta(seconds=TIMEOUT_S))
    assert "tpu:tpu_dist" in dist.get_backend_config(), dist.get_backend_config()
    rank = dist.get_rank()
    t = torch.ones(8, device="tpu")
    dist.all_reduce(t)
    assert t.cpu().eq(4).all()
    if rank == 3:
        if mode == "dead":
            sys.stdout.flush()
            os._exit(0)  # gone: no clean shutdown, no error of its own
        time.sleep(12)
        os._exit(0)
    start = time.monotonic()
    try:
        dist.all_reduce(t)
    except Exception as e:  # noqa: BLE001  (the type and text are what is checked)
        elapsed = time.monotonic() - start
        say(f"SURVIVOR ERROR rank {rank} after {elapsed:.1f}s: {type(e).__name__}: {str(e)[:300]}")
        os._exit(0)
    say(f"NO ERROR rank {rank}")
    os._exit(1)


if __name__ == "__main__":
    main(sys.argv[1])
