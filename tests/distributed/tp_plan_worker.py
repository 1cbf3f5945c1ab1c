"""One rank of test_tp_plan.py: Transformers' own tensor parallelism on tpu.
Each rank loads a tiny checkpoint (built from a config by rank 0, saved with
save_pretrained into the folder given as argv[1]) twice: whole, on its one
device (device_map="tpu"), and with from_pretrained(tp_plan="auto") across the
4 ranks. The sharded model's logits must equal the whole model's and greedy
decoding must give the same tokens, on every rank. The tiny Qwen3-MoE also runs
with expert parallelism (DistributedConfig(ep_size=4)), whose expert plan the
model ships (base_model_ep_plan), with both of Transformers' token exchanges."""
import datetime
import os
import sys
import time
import warnings

import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor, Shard
from torch.testing import assert_close

import transformers as tf
from transformers import AutoModelForCausalLM
from transformers.distributed import DistributedConfig
from launch import say  # one write per line: ranks share the output pipe

VOCAB = 128
NEW_TOKENS = 8


def config(arch):
    # Head counts, kv heads, MLP/expert widths, vocabulary and experts all divide by 4 (tensor parallelism
    # shards whole heads, columns and experts).
    common = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=8, num_key_value_heads=4, head_dim=16, max_position_embeddings=128,
                  pad_token_id=0, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False)
    if arch == "qwen3":
        return tf.Qwen3Config(**common)
    if arch == "llama":
        return tf.LlamaConfig(**common)
    if arch == "qwen3_moe":
        return tf.Qwen3MoeConfig(**common, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32,
                                 decoder_sparse_step=1)
    raise ValueError(arch)


def build(arch, folder):
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config(arch))
    # Spread the logits out so that greedy decoding has no near ties (default init gives near-uniform ones).
    with torch.no_grad():
        model.lm_head.weight.mul_(8)
    model.save_pretrained(folder)


# (name, checkpoint, how the sharded model is loaded)
CASES = [
    ("qwen3 tp", "qwen3", dict(tp_plan="auto")),
    ("llama tp", "llama", dict(tp_plan="auto")),
    ("qwen3_moe tp", "qwen3_moe", dict(tp_plan="auto")),
    ("qwen3_moe tp+ep all_reduce", "qwen3_moe",
     dict(distributed_config=DistributedConfig(tp_plan="auto", ep_size=4, ep_implementation="all_reduce"))),
    ("qwen3_moe tp+ep all_to_all", "qwen3_moe",
     dict(distributed_config=DistributedConfig(tp_plan="auto", ep_size=4, ep_implementation="all_to_all"))),
]


def prompt():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(3, VOCAB, (2, 12), generator=g)
    mask = torch.ones_like(ids)
    ids[0, :3], mask[0, :3] = 0, 0  # left padding on one row
    return ids, mask


def check_sharded(name, model, world, ep):
    attn = model.model.layers[0].self_attn
    q = attn.q_proj.weight
    assert isinstance(q, DTensor) and q.device_mesh.device_type == "tpu", (name, type(q))
    assert q.placements == (Shard(0),), (name, q.placements)
    assert q.to_local().shape[0] * world == q.shape[0] and q.to_local().device.type == "tpu", name
    assert {p.device.type for p in model.parameters()} == {"tpu"}, name
    o = attn.o_proj.weight
    assert isinstance(o, DTensor) and o.placements == (Shard(1),), (name, o.placements)
    experts = getattr(model.model.layers[0].mlp, "experts", None)
    if experts is not None:
        gate_up, down = experts.gate_up_proj, experts.down_proj  # (experts, 2 * 32, 64), (experts, 64, 32)
        assert isinstance(gate_up, DTensor) and isinstance(down, DTensor), name
        if ep:  # whole experts per rank
            assert gate_up.placements == (Shard(0),) and experts.num_experts == 8 // world, (name, gate_up)
            assert gate_up.to_local().shape == (8 // world, 64, 64), (name, gate_up.to_local().shape)
        else:  # every expert split: gate/up columns (packed), down rows
            assert gate_up.to_local().shape == (8, 64 // world, 64), (name, gate_up.to_local().shape)
            assert down.to_local().shape == (8, 64, 32 // world), (name, down.to_local().shape)


def run_case(name, folder, kwargs, rank, world):
    start = time.perf_counter()
    ref = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, device_map="tpu").eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # tp_plan= directly is deprecated for distributed_config=
        tp = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, **kwargs).eval()
    ep = "distributed_config" in kwargs
    check_sharded(name, tp, world, ep)

    ids, mask = prompt()
    ids, mask = ids.to("tpu"), mask.to("tpu")
    with torch.no_grad():
        expect = ref(ids, attention_mask=mask).logits
        got = tp(ids, attention_mask=mask).logits
    assert not isinstance(got, DTensor) and got.device.type == "tpu", (name, type(got), got.device)
    diff = (got - expect).abs().max().item()
    assert_close(got.cpu(), expect.cpu(), rtol=1e-4, atol=1e-5, msg=lambda m: f"{name} logits: {m}")

    gen = dict(attention_mask=mask, max_new_tokens=NEW_TOKENS, do_sample=False, min_new_tokens=NEW_TOKENS)
    expect_tokens = ref.generate(ids, **gen)
    got_tokens = tp.generate(ids, **gen)
    assert got_tokens.shape == (2, 12 + NEW_TOKENS), (name, got_tokens.shape)
    assert got_tokens.cpu().tolist() == expect_tokens.cpu().tolist(), (name, got_tokens, expect_tokens)
    # every rank decoded the same tokens
    gathered = [torch.empty_like(got_tokens) for _ in range(world)]
    dist.all_gather(gathered, got_tokens)
    assert all(torch.equal(g.cpu(), got_tokens.cpu()) for g in gathered), name
    if rank == 0:
        say(f"{name}: logits max|diff| {diff:.2e}, {NEW_TOKENS} greedy tokens equal "
              f"{got_tokens[:, 12:].cpu().tolist()} ({time.perf_counter() - start:.1f}s)")
    del ref, tp


def main():
    root = sys.argv[1]
    only = sys.argv[2:]  # optional case names (debugging)
    dist.init_process_group("tpu_dist", timeout=datetime.timedelta(seconds=180))
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world == 4 and torch.tpu.device_count() == 1
    folders = {arch: os.path.join(root, arch) for arch in ("qwen3", "llama", "qwen3_moe")}
    if rank == 0:
        for arch, folder in folders.items():
            if not os.path.exists(os.path.join(folder, "config.json")):
                build(arch, folder)
    dist.barrier()
    for name, arch, kwargs in CASES:
        if only and name not in only:
            continue
        run_case(name, folders[arch], kwargs, rank, world)
    dist.barrier()
    say(f"WORKER OK rank {rank}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
