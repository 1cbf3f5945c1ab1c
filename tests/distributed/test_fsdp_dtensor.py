"""FSDP2 and DTensor on tpu, 4 ranks launched with torchrun."""
from launch import assert_ran, torchrun


def test_fsdp2_tiny_llama_matches_one_process():
    rc, out = torchrun("fsdp_worker.py", timeout=420)
    assert_ran(rc, out)
    assert "fsdp losses" in out


def test_dtensor_placements_redistribute_and_sharded_matmul_on_1d_and_2d_meshes():
    rc, out = torchrun("dtensor_worker.py", timeout=300)
    assert_ran(rc, out)
