"""The Qwen3 test checkpoint under torch.compile(backend="tpu"): logits, loss
and every parameter's gradient equal eager tpu's."""
import torch
from torch.testing import assert_close

import tiny_models as tm


def test_compiled_qwen3_forward_and_backward_match_eager(checkpoints):
    eager = tm.model_class("qwen3").from_pretrained(checkpoints["qwen3"], device_map="tpu")
    compiled_model = tm.model_class("qwen3").from_pretrained(checkpoints["qwen3"], device_map="tpu")
    compiled = torch.compile(compiled_model, backend="tpu")
    ids = torch.randint(3, tm.VOCAB, (2, 12), generator=torch.Generator().manual_seed(0)).to("tpu")
    out_e = eager(ids, labels=ids)
    out_c = compiled(ids, labels=ids)
    assert_close(out_c.logits.cpu(), out_e.logits.cpu())
    assert_close(out_c.loss.cpu(), out_e.loss.cpu())
    out_e.loss.backward()
    out_c.loss.backward()
    grads_e = {n: p.grad.cpu() for n, p in eager.named_parameters()}
    grads_c = {n: p.grad.cpu() for n, p in compiled_model.named_parameters()}
    assert grads_e.keys() == grads_c.keys() and all(g is not None for g in grads_c.values())
    assert_close(grads_c, grads_e)
