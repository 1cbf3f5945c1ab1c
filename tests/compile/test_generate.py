"""Transformers' generate with a static KV cache: on tpu it compiles the
decoding step with the "tpu" backend by itself; the tokens equal the eager
ones (a tiny random Qwen3 built from a config)."""
import torch
import transformers

import torch_tpu._dynamo as tpu_dynamo


def tiny_qwen3():
    torch.manual_seed(0)
    cfg = transformers.Qwen3Config(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                                   max_position_embeddings=64)
    return transformers.Qwen3ForCausalLM(cfg).eval().to("tpu")


def test_static_cache_generate_compiles_by_itself_and_matches_eager():
    model = tiny_qwen3()
    ids = torch.randint(0, 128, (2, 6)).to("tpu")
    kw = dict(max_new_tokens=10, do_sample=False, cache_implementation="static")
    tpu_dynamo.reset_metrics()
    eager = model.generate(ids, disable_compile=True, **kw)
    assert tpu_dynamo.metrics()["graph_compiles"] == 0
    compiled = model.generate(ids, **kw)  # generate's own auto-compile for tpu
    assert torch.equal(compiled.cpu(), eager.cpu())
    m = tpu_dynamo.metrics()
    assert m["graph_compiles"] >= 1 and m["graph_fallbacks"] == 0, m
    # A second call with the same shapes compiles nothing more.
    before = m["graph_compiles"]
    again = model.generate(ids, **kw)
    assert torch.equal(again.cpu(), eager.cpu())
    assert tpu_dynamo.metrics()["graph_compiles"] == before


def test_manually_compiled_forward_matches_eager():
    model = tiny_qwen3()
    ids = torch.randint(0, 128, (1, 6)).to("tpu")
    with torch.no_grad():
        eager = model.generate(ids, max_new_tokens=8, do_sample=False, cache_implementation="static",
                               disable_compile=True)
        model.forward = torch.compile(model.forward, backend="tpu", fullgraph=True)
        tpu_dynamo.reset_metrics()
        compiled = model.generate(ids, max_new_tokens=8, do_sample=False, cache_implementation="static",
                                  disable_compile=True)
    assert torch.equal(compiled.cpu(), eager.cpu())
    m = tpu_dynamo.metrics()
    # prefill and one decode step program; the other 6 decode steps reuse it
    assert (m["graph_compiles"], m["graph_cache_hits"], m["graph_fallbacks"]) == (2, 6, 0)
