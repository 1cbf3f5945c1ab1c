"""`module.to("tpu")` moves each Parameter's data in place, as `.to("cuda")`
does: the Parameter objects stay the same, tied weights stay tied, and code
that held a Parameter before the move (an optimizer, a hook) trains it."""
import pytest
import torch
import transformers as tf

import tiny_models


def test_parameters_keep_identity_both_ways():
    lin, emb = torch.nn.Linear(3, 5), torch.nn.Embedding(5, 3)
    emb.weight = torch.nn.Parameter(lin.weight.detach().t().clone())
    head = torch.nn.Linear(3, 5, bias=False)
    head.weight = lin.weight  # tied
    model = torch.nn.ModuleList([lin, emb, head])
    before = {n: p for n, p in model.named_parameters(remove_duplicate=False)}
    want = {n: p.detach().clone() for n, p in before.items()}
    model.to("tpu")
    for n, p in model.named_parameters(remove_duplicate=False):
        assert p is before[n], n
        assert p.device.type == "tpu" and isinstance(p, torch.nn.Parameter)
        torch.testing.assert_close(p.detach().cpu(), want[n])
    assert head.weight is lin.weight
    model.to("cpu")
    for n, p in model.named_parameters(remove_duplicate=False):
        assert p is before[n] and p.device.type == "cpu", n
        torch.testing.assert_close(p.detach(), want[n])


def test_optimizer_built_before_the_move_trains_the_moved_parameters():
    torch.manual_seed(0)
    ref = torch.nn.Linear(4, 2)
    model = torch.nn.Linear(4, 2)
    model.load_state_dict(ref.state_dict())
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.5)
    model.to("tpu")
    x = torch.randn(3, 4)
    for m, o, xx in ((model, opt, x.to("tpu")), (ref, ref_opt, x)):
        o.zero_grad()
        m(xx).square().sum().backward()
        o.step()
    torch.testing.assert_close(model.weight.detach().cpu(), ref.weight.detach())
    torch.testing.assert_close(model.bias.detach().cpu(), ref.bias.detach())


@pytest.mark.parametrize("arch", ["qwen3", "bert"])
def test_tied_weights_stay_tied(arch, tmp_path):
    cfg = tiny_models.config(arch)
    cfg.tie_word_embeddings = True
    torch.manual_seed(0)
    cls = tiny_models.model_class(arch)
    model = cls.from_config(cfg) if hasattr(cls, "from_config") else cls(cfg)
    model.to("tpu")
    out, emb = model.get_output_embeddings(), model.get_input_embeddings()
    assert out.weight is emb.weight
    if arch == "bert":
        assert model.cls.predictions.decoder.bias is model.cls.predictions.bias
    # from_pretrained with device_map="tpu" ties them too
    model.save_pretrained(tmp_path)
    loaded = cls.from_pretrained(tmp_path, device_map="tpu")
    assert loaded.get_output_embeddings().weight is loaded.get_input_embeddings().weight
    assert loaded.get_output_embeddings().weight.device.type == "tpu"


def test_gradient_checkpointed_bert_training_gradients_match_cpu():
    """Transformers' BERT gradient-checkpointing test failed on tpu with
    "cls.predictions.bias has no gradient" when .to() split the tied bias."""
    torch.manual_seed(0)
    cpu = tf.BertForMaskedLM(tiny_models.config("bert"))
    dev = tf.BertForMaskedLM(tiny_models.config("bert"))
    dev.load_state_dict(cpu.state_dict())
    dev.to("tpu")
    for m in (cpu, dev):
        m.train()
        m.gradient_checkpointing_enable()
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, tiny_models.VOCAB, (2, 12), generator=g)
    labels = ids.clone()
    labels[:, ::3] = -100
    for m, dev_of in ((cpu, "cpu"), (dev, "tpu")):
        # no dropout differences: the comparison is about which parameters get gradients
        for mod in m.modules():
            if isinstance(mod, torch.nn.Dropout):
                mod.p = 0.0
        m(input_ids=ids.to(dev_of), labels=labels.to(dev_of)).loss.backward()
    cpu_params = dict(cpu.named_parameters())
    for name, p in dev.named_parameters():
        assert p.grad is not None, f"{name} has no gradient"
        torch.testing.assert_close(p.grad.cpu(), cpu_params[name].grad, rtol=1e-4, atol=1e-5, msg=name)
