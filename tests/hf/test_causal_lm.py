"""Transformers models on tpu against the same checkpoint on the CPU: logits,
greedy and beam decoding, seeded sampling, bfloat16, and recompiles of a
static-cache decode. Every model is loaded with from_pretrained(device_map=...)
from a local folder."""
import pytest
import torch
from torch.testing import assert_close

import torch_tpu
import tiny_models as tm

# Static-cache decoding in eager mode: shapes stay fixed, so the decode loop
# reuses its programs. (generate would otherwise auto-compile on tpu.)
STATIC = dict(cache_implementation="static", disable_compile=True)


def load(folder, arch, device_map=None, dtype=torch.float32):
    kw = {} if device_map is None else {"device_map": device_map}
    return tm.model_class(arch).from_pretrained(folder, dtype=dtype, **kw).eval()


def prompt(batch=2, length=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(3, tm.VOCAB, (batch, length), generator=g)


@pytest.mark.parametrize("arch", tm.ALL)
def test_logits_match_cpu(checkpoints, arch):
    cpu = load(checkpoints[arch], arch)
    tpu = load(checkpoints[arch], arch, device_map="tpu")
    assert {p.device.type for p in tpu.parameters()} == {"tpu"}
    ids = prompt()
    mask = torch.ones_like(ids)
    mask[0, :3] = 0  # left padding on one row
    with torch.no_grad():
        expect = cpu(ids, attention_mask=mask).logits
        got = tpu(ids.to("tpu"), attention_mask=mask.to("tpu")).logits
    assert got.device.type == "tpu"
    assert_close(got.cpu(), expect)


@pytest.mark.parametrize("device_map", ["tpu", "tpu:0", {"": "tpu"}, {"": 0}])
def test_device_map_forms(checkpoints, device_map):
    model = load(checkpoints["qwen3"], "qwen3", device_map=device_map)
    assert {p.device for p in model.parameters()} == {torch.device("tpu", 0)}
    assert model.device == torch.device("tpu", 0)


@pytest.mark.parametrize("arch", tm.CAUSAL_LM)
def test_greedy_32_tokens_match_cpu(checkpoints, arch):
    cpu = load(checkpoints[arch], arch)
    tpu = load(checkpoints[arch], arch, device_map="tpu")
    ids = prompt()
    expect = cpu.generate(ids, max_new_tokens=32, do_sample=False, **STATIC)
    got = tpu.generate(ids.to("tpu"), max_new_tokens=32, do_sample=False, **STATIC)
    assert got.device.type == "tpu"
    assert got.cpu().tolist() == expect.tolist()


def test_greedy_dynamic_cache_matches_cpu(checkpoints):
    # DynamicCache grows every step (new shapes each token), so keep it short.
    cpu = load(checkpoints["qwen3"], "qwen3")
    tpu = load(checkpoints["qwen3"], "qwen3", device_map="tpu")
    ids = prompt(batch=1)
    expect = cpu.generate(ids, max_new_tokens=6, do_sample=False)
    got = tpu.generate(ids.to("tpu"), max_new_tokens=6, do_sample=False)
    assert got.cpu().tolist() == expect.tolist()


def test_beam_search_matches_cpu(checkpoints):
    cpu = load(checkpoints["llama"], "llama")
    tpu = load(checkpoints["llama"], "llama", device_map="tpu")
    ids = prompt()
    kw = dict(max_new_tokens=8, num_beams=3, do_sample=False, **STATIC)
    assert tpu.generate(ids.to("tpu"), **kw).cpu().tolist() == cpu.generate(ids, **kw).tolist()


@pytest.mark.parametrize("arch", tm.CAUSAL_LM)
def test_seeded_sampling_is_reproducible(checkpoints, arch):
    tpu = load(checkpoints[arch], arch, device_map="tpu")
    ids = prompt().to("tpu")
    kw = dict(max_new_tokens=12, do_sample=True, top_k=50, temperature=1.5, **STATIC)
    runs = []
    for seed in (7, 7, 8):
        torch.manual_seed(seed)
        runs.append(tpu.generate(ids, **kw).cpu())
    assert torch.equal(runs[0], runs[1])
    assert not torch.equal(runs[0], runs[2])  # the seed matters: the tokens are sampled


@pytest.mark.parametrize("arch", tm.ALL)
def test_bfloat16_logits_and_greedy_decode(checkpoints, arch):
    cpu = load(checkpoints[arch], arch, dtype=torch.bfloat16)
    tpu = load(checkpoints[arch], arch, device_map="tpu", dtype=torch.bfloat16)
    reference = load(checkpoints[arch], arch)  # float32, CPU
    assert {p.dtype for p in tpu.parameters()} == {torch.bfloat16}
    ids = prompt()
    with torch.no_grad():
        expect = cpu(ids).logits
        got = tpu(ids.to("tpu")).logits
        exact = reference(ids).logits
    assert got.dtype == torch.bfloat16
    # A whole model in bfloat16 differs from another bfloat16 implementation
    # by a few roundings per layer (e.g. the CPU's bf16 rsqrt rounds sqrt first;
    # XLA's is correctly rounded), so the per-element bfloat16 defaults (meant
    # for one op) don't apply. Bound: two bfloat16 epsilons of the logits'
    # scale, and no less accurate against float32 than the CPU's bf16 run.
    eps = torch.finfo(torch.bfloat16).eps
    scale = expect.float().abs().max().item()
    assert_close(got.cpu().float(), expect.float(), rtol=0, atol=2 * eps * scale)
    tpu_error = (got.cpu().float() - exact).abs().max().item()
    cpu_error = (expect.float() - exact).abs().max().item()
    assert tpu_error <= 1.5 * cpu_error + eps * scale / 4, (tpu_error, cpu_error)
    if arch != "bert":
        out = tpu.generate(ids.to("tpu"), max_new_tokens=8, do_sample=False, **STATIC)
        assert out.shape == (2, 20)


@pytest.mark.parametrize("arch", tm.CAUSAL_LM)
def test_static_cache_decode_does_not_recompile(checkpoints, arch):
    """The model's decoding with a StaticCache, as generate's loop drives it:
    one token per step at a device-side cache position. After the first 2
    tokens, 30 more compile nothing (eager); the tokens equal the CPU's
    generate. (generate itself also compiles its bookkeeping per token: see
    the README's known gaps.)"""
    from transformers import StaticCache

    tpu = load(checkpoints[arch], arch, device_map="tpu")
    ids = prompt().to("tpu")
    batch, length = ids.shape
    cache = StaticCache(config=tpu.config, max_cache_len=length + 32)
    position = torch.arange(length, device="tpu")
    compiles = []
    tokens = []
    with torch.no_grad():
        logits = tpu(ids, past_key_values=cache, cache_position=position, use_cache=True).logits
        for step in range(32):
            compiles.append(torch_tpu.metrics()["compiles"])
            token = logits[:, -1].argmax(-1, keepdim=True)
            tokens.append(token)
            if step == 31:
                break
            position = position[-1:] + 1
            logits = tpu(token, past_key_values=cache, cache_position=position, use_cache=True).logits
    assert compiles[2:] == [compiles[2]] * 30, compiles
    expect = load(checkpoints[arch], arch).generate(ids.cpu(), max_new_tokens=32, do_sample=False)
    assert torch.cat(tokens, 1).cpu().tolist() == expect[:, length:].tolist()
