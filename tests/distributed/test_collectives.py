"""torch.distributed on tpu, 4 ranks launched with torchrun (each bounded by
a timeout): the "tpu_dist" backend's collectives against gloo's, DDP against
one process, and ranks that die or hang."""
import re

import pytest
import torch
import torch.distributed as dist

from launch import assert_ran, torchrun


def test_backend_is_registered_and_the_default_for_tpu():
    assert dist.is_backend_available("tpu_dist") and dist.is_backend_available("tpu")
    assert dist.Backend.default_device_backend_map["tpu"] == "tpu_dist"
    assert set(dist.Backend.backend_capability["tpu_dist"]) == {"tpu", "cpu"}


def test_every_collective_matches_gloo_on_four_ranks():
    rc, out = torchrun("collectives_worker.py", timeout=420)
    assert_ran(rc, out)


def test_ddp_matches_one_process_on_the_whole_batch():
    rc, out = torchrun("ddp_worker.py", timeout=420)
    assert_ran(rc, out)
    assert "mlp: losses" in out and "transformer block: losses" in out


@pytest.mark.parametrize("mode", ["dead", "stuck"])
def test_a_rank_that_dies_or_hangs_fails_the_others_within_the_timeout(mode):
    rc, out = torchrun("failures_worker.py", args=[mode], timeout=180)
    assert rc is not None, out[-4000:]
    errors = re.findall(r"SURVIVOR ERROR rank (\d) after ([\d.]+)s: (\w+): (.*)", out)
    assert sorted(r for r, *_ in errors) == ["0", "1", "2"], out[-4000:]
    assert "NO ERROR" not in out
    for _, elapsed, kind, text in errors:
        assert float(elapsed) < 60, (elapsed, text)
        assert kind == "DistBackendError", (kind, text)
        assert text.startswith("tpu_dist ALLREDUCE failed in its transport"), text
