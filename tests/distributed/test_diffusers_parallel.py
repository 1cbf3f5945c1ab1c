"""Diffusers' tensor and context parallelism on tpu, 4 ranks under torchrun
(issue "must show 5"): the tiny Flux pipeline (4 heads of 8) with its
transformer sharded by `enable_parallelism` / `from_pretrained(parallel_config=)`
gives the latents of the same pipeline run without parallelism on tpu.

One torchrun (diffusers_parallel_worker.py, bounded by a timeout) runs every
case; each test reads its case's line from the 4 ranks. What diffusers 0.42.1
does not offer is pinned by its exact error:
- ring attention (ContextParallelConfig(ring_degree=4)) merges partial
  results by their log-sum-exp, which it asks of the attention op
  (attention_dispatch.py:2427, TemplatedRingAttention.forward, return_lse=True);
  the native backend (plain scaled_dot_product_attention, the one that runs
  on tpu) raises at attention_dispatch.py:876 in _native_attention_forward_op;
- SD3Transformer2DModel defines neither `_tp_plan` nor `_cp_plan` (it keeps
  ModelMixin's `None`s, modeling_utils.py:263-264), and its
  JointAttnProcessor2_0 calls F.scaled_dot_product_attention itself
  (attention_processor.py:1484), not diffusers' attention dispatcher."""
import re

import pytest

from launch import assert_ran, torchrun

WORKER = "diffusers_parallel_worker.py"
NPROC = 4


@pytest.fixture(scope="module")
def worker_run(tmp_path_factory):
    rc, out = torchrun(WORKER, nproc=NPROC, timeout=360, args=[tmp_path_factory.mktemp("diffusers_parallel")])
    return rc, out


def case_lines(out, name):
    """rank -> the text of case `name`'s line on that rank."""
    lines = dict(re.findall(rf"^CASE {name} rank (\d): (.*)$", out, re.M))
    assert sorted(lines) == [str(r) for r in range(NPROC)], f"case {name} did not report on every rank:\n{out[-6000:]}"
    return lines


def assert_matched(out, name):
    for rank, text in case_lines(out, name).items():
        assert text.startswith("OK max_abs_diff="), f"rank {rank}: {text}\n{out[-6000:]}"


def assert_raised(out, name, message, where):
    for rank, text in case_lines(out, name).items():
        assert text.startswith("RAISED ValueError: ") and message in text, f"rank {rank}: {text}"
        assert where in text, f"rank {rank}: {text}"


def test_every_rank_ran_every_case(worker_run):
    rc, out = worker_run
    assert_ran(rc, out, nproc=NPROC)


def test_flux_tensor_parallel_matches_one_device(worker_run):
    """TensorParallelConfig(tp_degree=4) through transformer.enable_parallelism: Flux's `_tp_plan`
    (colwise q/k/v/ff-in, rowwise out/ff-out, packed rowwise single-block proj_out) on a 1-d tpu mesh."""
    assert_matched(worker_run[1], "tp")


def test_flux_tensor_parallel_at_load_matches_one_device(worker_run):
    """from_pretrained(..., parallel_config=TensorParallelConfig(tp_degree=4)): each rank reads its slices."""
    assert_matched(worker_run[1], "tp_load")


def test_flux_ulysses_context_parallel_matches_one_device(worker_run):
    """ContextParallelConfig(ulysses_degree=4): the sequence split 4 ways, heads exchanged by all-to-all."""
    assert_matched(worker_run[1], "ulysses")


def test_flux_ring_attention_needs_lse_that_native_attention_lacks(worker_run):
    assert_raised(worker_run[1], "ring", "Native attention does not support return_lse=True",
                  "diffusers/models/attention_dispatch.py:876 in _native_attention_forward_op")


def test_sd3_has_no_tensor_or_context_parallel_plan(worker_run):
    out = worker_run[1]
    assert_raised(out, "sd3_tp", "`_tp_plan` must be set on the model class to use tensor parallelism. "
                  "'SD3Transformer2DModel' does not define one.", "diffusers/hooks/tensor_parallel.py")
    assert_raised(out, "sd3_cp", "`cp_plan` must be provided either as an argument or set in the model's "
                  "`_cp_plan` attribute.", "diffusers/models/modeling_utils.py")
