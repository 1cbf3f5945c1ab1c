"""Transformers' tensor and expert parallelism on tpu, 4 ranks launched with
torchrun: from_pretrained(tp_plan="auto") on a tiny Qwen3, Llama and
Qwen3-MoE, and the Qwen3-MoE with DistributedConfig(ep_size=4) (the expert
plan the model ships, with the all_reduce and the all_to_all token exchange).
Every sharded model's logits equal the same checkpoint loaded whole on one
device and greedy decoding gives the same tokens (tp_plan_worker.py)."""
from launch import assert_ran, torchrun

CASES = ["qwen3 tp", "llama tp", "qwen3_moe tp", "qwen3_moe tp+ep all_reduce", "qwen3_moe tp+ep all_to_all"]


def test_tp_plan_auto_and_expert_parallel_match_one_device(tmp_path):
    rc, out = torchrun("tp_plan_worker.py", timeout=400, args=[tmp_path],
                       env={"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                            "TRANSFORMERS_VERBOSITY": "error"})
    print("".join(line + "\n" for line in out.splitlines() if "logits max|diff|" in line))
    assert_ran(rc, out)
    for case in CASES:
        assert f"{case}: logits max|diff|" in out, f"{case} did not report:\n{out[-8000:]}"
