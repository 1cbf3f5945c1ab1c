"""experts_implementation="tpu_ragged" (torch_tpu/integrations/transformers_experts.py)
on a tiny Qwen3-MoE (8 experts, top-2): the logits, gradients and greedy tokens
of Transformers' default experts path on tpu, with no device-to-host transfer
during a forward, and the MoE block compiled whole (fullgraph=True)."""
import os
import subprocess
import sys

import pytest
import torch
from torch.testing import assert_close

import torch_tpu
import tiny_models as tm


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    import transformers as tf
    folder = tmp_path_factory.mktemp("qwen3_moe_8x2")
    cfg = tf.Qwen3MoeConfig(**tm._common(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32,
                                         decoder_sparse_step=1))
    torch.manual_seed(0)
    tf.AutoModelForCausalLM.from_config(cfg).save_pretrained(folder)
    return folder


def load(folder, **kw):
    import transformers as tf
    return tf.AutoModelForCausalLM.from_pretrained(folder, device_map="tpu", **kw).eval()


def prompt(batch=2, length=12):
    return torch.randint(3, tm.VOCAB, (batch, length), generator=torch.Generator().manual_seed(0)).to("tpu")


def d2h_bytes():
    torch.tpu.synchronize()
    return torch_tpu.metrics()["device_to_host_bytes"]


def test_logits_and_greedy_tokens_match_the_default_path(checkpoint):
    default = load(checkpoint)
    ragged = load(checkpoint, experts_implementation="tpu_ragged")
    assert ragged.config._experts_implementation == "tpu_ragged"
    ids = prompt()
    with torch.no_grad():
        expect = default(ids).logits
        before = d2h_bytes()
        got = ragged(ids).logits
        assert d2h_bytes() == before  # no host synchronization inside the forward
    assert_close(got.cpu(), expect.cpu(), rtol=1e-4, atol=1e-5)
    kw = dict(max_new_tokens=8, do_sample=False, cache_implementation="static", disable_compile=True)
    assert ragged.generate(ids, **kw).cpu().tolist() == default.generate(ids, **kw).cpu().tolist()


def test_the_transfer_counter_sees_the_eager_experts_loop(checkpoint):
    # The check above means something: "eager" finds the experts hit on the host.
    eager = load(checkpoint, experts_implementation="eager")
    with torch.no_grad():
        before = d2h_bytes()
        eager(prompt())
        assert d2h_bytes() > before


def test_gradients_match_the_default_path(checkpoint):
    ids = prompt()
    grads = []
    for kw in ({}, {"experts_implementation": "tpu_ragged"}):
        model = load(checkpoint, **kw).train()
        model(ids, labels=ids).loss.backward()
        grads.append({n: p.grad.cpu() for n, p in model.named_parameters() if "experts" in n})
    assert grads[0].keys() == grads[1].keys() and grads[0]
    for name in grads[0]:
        assert_close(grads[1][name], grads[0][name], rtol=1e-4, atol=1e-5, msg=lambda s: f"{name}: {s}")


def test_moe_block_compiles_whole(checkpoint):
    torch._dynamo.reset()
    ragged = load(checkpoint, experts_implementation="tpu_ragged")
    block = ragged.model.layers[0].mlp
    x = torch.randn(2, 12, ragged.config.hidden_size, generator=torch.Generator().manual_seed(1)).to("tpu")
    with torch.no_grad():
        expect = block(x)
        compiled = torch.compile(block, backend="tpu", fullgraph=True)
        torch_tpu.reset_metrics()
        got = compiled(x)
    assert torch_tpu.metrics()["graph_compiles"] == 1
    assert_close(got.cpu(), expect.cpu(), rtol=1e-5, atol=1e-6)


def test_registered_lazily():
    # import torch (autoload) does not import transformers; importing its MoE module registers tpu_ragged.
    code = ("import sys, torch; assert 'transformers' not in sys.modules; "
            "from transformers.integrations import moe; print('tpu_ragged' in moe.ALL_EXPERTS_FUNCTIONS)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
