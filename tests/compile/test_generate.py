"""Transformers greedy generation with a static KV cache through the compiled
path gives the eager tokens (a tiny random Qwen3 built from a config)."""
import pytest
import torch

import torch_tpu._dynamo as tpu_dynamo

transformers = pytest.importorskip("transformers")


def test_static_cache_generate_matches_eager():
    torch.manual_seed(0)
    cfg = transformers.Qwen3Config(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                                   max_position_embeddings=64)
    model = transformers.Qwen3ForCausalLM(cfg).eval().to("tpu")
    ids = torch.randint(0, 128, (1, 6)).to("tpu")
    with torch.no_grad():
        eager = model.generate(ids, max_new_tokens=8, do_sample=False, cache_implementation="static")
        model.forward = torch.compile(model.forward, backend="tpu", fullgraph=True)
        tpu_dynamo.reset_metrics()
        compiled = model.generate(ids, max_new_tokens=8, do_sample=False, cache_implementation="static")
    assert torch.equal(compiled.cpu(), eager.cpu())
    m = tpu_dynamo.metrics()
    # prefill and one decode step program; the other 6 decode steps reuse it
    assert (m["graph_compiles"], m["graph_cache_hits"], m["graph_fallbacks"]) == (2, 6, 0)
