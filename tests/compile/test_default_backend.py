"""torch.compile with no backend, or backend="inductor", on tpu tensors runs
through the "tpu" backend (Inductor's own "tpu" code generator needs JAX and
cannot run our tensors); graphs on other devices still go to Inductor."""
import pytest
import torch
import transformers
from torch.testing import assert_close

import torch_tpu._dynamo as tpu_dynamo
from test_generate import tiny_qwen3


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def f(x, y):
    return torch.nn.functional.gelu(x @ y).sum(dim=-1) + 1


@pytest.mark.parametrize("kwargs", [{}, {"backend": "inductor"}, {"mode": "reduce-overhead"},
                                    {"backend": "inductor", "mode": "max-autotune", "fullgraph": True}])
def test_default_and_inductor_run_the_tpu_backend(kwargs):
    x, y = torch.randn(4, 8), torch.randn(8, 3)
    tpu_dynamo.reset_metrics()
    out = torch.compile(f, **kwargs)(x.to("tpu"), y.to("tpu"))
    assert out.device.type == "tpu"
    assert_close(out.cpu(), f(x, y))
    m = tpu_dynamo.metrics()
    assert m["graph_compiles"] == 1 and m["graph_fallbacks"] == 0, m


def test_other_devices_still_go_to_inductor(monkeypatch):
    """The reroute wraps Inductor's entry: a CPU graph reaches compile_fx
    (stubbed here to keep the test fast), a tpu graph never does."""
    import torch._inductor.compile_fx as compile_fx

    seen = []

    def fake_compile_fx(gm, example_inputs, **kw):
        seen.append([t.device.type for t in example_inputs if isinstance(t, torch.Tensor)])
        return gm.forward

    monkeypatch.setattr(compile_fx, "compile_fx", fake_compile_fx)
    x, y = torch.randn(4, 8), torch.randn(8, 3)
    assert_close(torch.compile(f)(x, y), f(x, y))
    assert seen == [["cpu", "cpu"]]
    torch._dynamo.reset()
    tpu_dynamo.reset_metrics()
    assert_close(torch.compile(f)(x.to("tpu"), y.to("tpu")).cpu(), f(x, y))
    assert len(seen) == 1 and tpu_dynamo.metrics()["graph_compiles"] == 1


def test_inductor_options_on_tpu_warn_that_they_do_not_apply():
    x = torch.randn(3)
    with pytest.warns(UserWarning, match=r"Inductor options \['epilogue_fusion'\] do not apply"):
        out = torch.compile(lambda t: t + 1, options={"epilogue_fusion": False})(x.to("tpu"))
    assert_close(out.cpu(), x + 1)


def test_generate_with_transformers_default_compile_config():
    """CompileConfig() is Inductor with mode="reduce-overhead": on tpu it
    compiles the decoding step through the tpu backend and matches eager."""
    model = tiny_qwen3()
    ids = torch.randint(0, 128, (2, 6)).to("tpu")
    kw = dict(max_new_tokens=8, do_sample=False, cache_implementation="static")
    eager = model.generate(ids, disable_compile=True, **kw)
    tpu_dynamo.reset_metrics()
    config = transformers.CompileConfig()
    assert (config.backend, config.mode) == ("inductor", "reduce-overhead")
    compiled = model.generate(ids, compile_config=config, **kw)
    assert torch.equal(compiled.cpu(), eager.cpu())
    m = tpu_dynamo.metrics()
    assert m["graph_compiles"] >= 1 and m["graph_fallbacks"] == 0, m
