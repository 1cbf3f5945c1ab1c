"""torch.compile(backend="tpu"): compiled results equal eager tpu results,
forward and backward; one program per input signature; explained recompiles."""
import copy

import pytest
import torch
import torch.nn.functional as F

import torch_tpu
import torch_tpu._dynamo as tpu_dynamo
from models import MLP, Block


def grads(model):
    return {n: p.grad for n, p in model.named_parameters()}


def fwd_bwd(model, x, y):
    out = model(x)
    loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    loss.backward()
    return out, loss


@pytest.mark.parametrize("name", ["mlp", "block"])
def test_outputs_and_gradients_equal_eager(name):
    torch.manual_seed(0)
    if name == "mlp":
        model, x, y = MLP(), torch.randn(8, 16), torch.randint(0, 5, (8,))
    else:
        model, x, y = Block(), torch.randint(0, 50, (2, 8)), torch.randint(0, 50, (2, 8))
    eager = model.to("tpu")
    compiled_model = copy.deepcopy(eager)
    compiled = torch.compile(compiled_model, backend="tpu", fullgraph=True)
    x, y = x.to("tpu"), y.to("tpu")
    tpu_dynamo.reset_metrics()
    out_e, loss_e = fwd_bwd(eager, x, y)
    out_c, loss_c = fwd_bwd(compiled, x, y)
    torch.testing.assert_close(out_c.cpu(), out_e.cpu())
    torch.testing.assert_close(loss_c.cpu(), loss_e.cpu())
    ge, gc = grads(eager), grads(compiled_model)
    for n in ge:
        torch.testing.assert_close(gc[n].cpu(), ge[n].cpu(), msg=lambda m: f"grad of {n}: {m}")
    m = tpu_dynamo.metrics()
    assert m["graph_compiles"] == 2 and m["graph_fallbacks"] == 0  # forward + backward, both native


def test_compiles_once_per_signature_and_explains_recompiles(monkeypatch, capsys):
    monkeypatch.setenv("TORCH_TPU_LOG_RECOMPILES", "1")
    torch.manual_seed(0)
    model = MLP().to("tpu")
    compiled = torch.compile(model, backend="tpu")
    tpu_dynamo.reset_metrics()
    before = torch_tpu.metrics()["compiles_by_op"].get("graph", 0)
    with torch.no_grad():
        x = torch.randn(4, 16)
        for _ in range(10):
            out = compiled(x.to("tpu"))
        torch.testing.assert_close(out.cpu(), model(x.to("tpu")).cpu())
        m = tpu_dynamo.metrics()
        assert (m["graph_compiles"], m["graph_cache_hits"]) == (1, 9)
        assert "recompiling" not in capsys.readouterr().err
        x8 = torch.randn(8, 16)
        for _ in range(3):
            out = compiled(x8.to("tpu"))
        torch.testing.assert_close(out.cpu(), model(x8.to("tpu")).cpu())
    m = tpu_dynamo.metrics()
    assert (m["graph_compiles"], m["graph_cache_hits"]) == (2, 11)
    assert torch_tpu.metrics()["compiles_by_op"]["graph"] - before == 2
    err = capsys.readouterr().err
    assert err.count("torch_tpu: recompiling") == 1, err
    assert "input 'L_x_' size[0] changed 4 -> 8" in err, err


def test_training_loop_matches_eager():
    """20 steps of a compiled model (forward, backward) and a compiled AdamW
    step: the losses follow eager training. The optimizer's 0-d CPU step
    counters are computed inside the step's program and written back."""
    torch.manual_seed(0)
    base = Block()
    data = [(torch.randint(0, 50, (2, 8)), torch.randint(0, 50, (2, 8))) for _ in range(4)]

    def run(model, compiled):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
        step = torch.compile(opt.step, backend="tpu") if compiled else opt.step
        losses = []
        for i in range(20):
            x, y = (t.to("tpu") for t in data[i % len(data)])
            opt.zero_grad()
            _, loss = fwd_bwd(model, x, y)
            step()
            losses.append(loss.item())
        return torch.tensor(losses), opt

    eager, _ = run(copy.deepcopy(base).to("tpu"), False)
    tpu_dynamo.reset_metrics()
    compiled, opt = run(torch.compile(copy.deepcopy(base).to("tpu"), backend="tpu"), True)
    torch.testing.assert_close(compiled, eager, rtol=1e-4, atol=0)
    steps = [s["step"] for s in opt.state.values()]
    assert steps and all(t.device.type == "cpu" and t.item() == 20 for t in steps)
    m = tpu_dynamo.metrics()
    # forward, backward and the optimizer step: one program each, reused every step
    assert (m["graph_compiles"], m["graph_cache_hits"], m["graph_fallbacks"]) == (3, 57, 0)


def test_graph_break_and_fullgraph():
    def f(x, y):
        a = torch.sin(x) * y
        torch._dynamo.graph_break()
        return a.sum(dim=0) + torch.cos(y)

    x, y = torch.randn(3, 4), torch.randn(3, 4)
    tpu_dynamo.reset_metrics()
    out = torch.compile(f, backend="tpu")(x.to("tpu"), y.to("tpu"))
    torch.testing.assert_close(out.cpu(), f(x, y))
    assert tpu_dynamo.metrics()["graph_compiles"] == 2
    torch._dynamo.reset()
    with pytest.raises(Exception, match="graph_break"):
        torch.compile(f, backend="tpu", fullgraph=True)(x.to("tpu"), y.to("tpu"))


def test_views_and_input_mutation():
    def f(x, buf):
        buf.add_(x.t() * 2)  # a non-contiguous read, an in-place write into an input
        return buf[1:, ::2] + 1

    x = torch.randn(4, 3)
    base = torch.randn(3, 4)
    buf_tpu = base.to("tpu")
    out = torch.compile(f, backend="tpu", fullgraph=True)(x.to("tpu"), buf_tpu)
    buf_cpu = base.clone()
    ref = f(x, buf_cpu)
    torch.testing.assert_close(out.cpu(), ref)
    torch.testing.assert_close(buf_tpu.cpu(), buf_cpu)


def test_diagonal_views():
    def f(x):
        return (x.diagonal(), x.diagonal(1), x.diagonal(-2, 0, 2), torch.diagonal(x[0], offset=-1) * 2,
                x.diagonal(5, 1, 2))  # past the edge: empty

    x = torch.randn(3, 4, 5)
    x[1, 1, 0] = -0.0  # views copy values exactly: diagonal()[0, 1]
    out = torch.compile(f, backend="tpu", fullgraph=True)(x.to("tpu"))
    for got, want in zip(out, f(x)):
        torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)
    assert torch.signbit(out[0].cpu()[0, 1])


def test_input_views_are_materialized():
    def f(a, b):
        return a @ b + a.sum()

    big = torch.randn(6, 8)
    a_cpu, b_cpu = big[1:5, ::2], big.t()[2:6, :3]
    t = big.to("tpu")
    out = torch.compile(f, backend="tpu")(t[1:5, ::2], t.t()[2:6, :3])
    torch.testing.assert_close(out.cpu(), f(a_cpu, b_cpu))


def test_rejects_dynamic_and_unknown_mode_or_options():
    f = lambda x: x + 1  # noqa: E731
    x = torch.randn(3).to("tpu")
    with pytest.raises(Exception, match=r"dynamic=True\) is not supported"):
        torch.compile(f, backend="tpu", dynamic=True)(x)
    torch._dynamo.reset()
    with pytest.raises(Exception, match="unknown mode 'fastest'; known modes: default, reduce-overhead"):
        torch.compile(f, backend="tpu", mode="fastest")(x)
    torch._dynamo.reset()
    with pytest.raises(Exception, match=r"unknown option 'triton.cudagraphs'; known options: log_recompiles"):
        torch.compile(f, backend="tpu", options={"triton.cudagraphs": False})(x)
    torch._dynamo.reset()
    with pytest.raises(Exception, match="option 'log_recompiles' takes a bool"):
        torch.compile(f, backend="tpu", options={"log_recompiles": "yes"})(x)


def test_inductor_modes_are_accepted_and_log_recompiles_option(capfd):
    """A mode changes nothing for an XLA program; log_recompiles prints why a
    graph recompiled, like TORCH_TPU_LOG_RECOMPILES=1."""
    f = lambda x: x * 2 + 1  # noqa: E731
    for mode in ("reduce-overhead", "max-autotune"):
        torch._dynamo.reset()
        x = torch.randn(3)
        torch.testing.assert_close(torch.compile(f, backend="tpu", mode=mode)(x.to("tpu")).cpu(), f(x))
    torch._dynamo.reset()
    g = torch.compile(f, backend="tpu", dynamic=False, options={"log_recompiles": True})
    g(torch.randn(3).to("tpu"))
    g(torch.randn(5).to("tpu"))
    assert "recompiling graph" in capfd.readouterr().err


def _hide_rule(monkeypatch, op):
    """Makes the backend see no rule for `op`, whatever the coverage (a real
    unlowered op would get a rule one day and leave these tests vacuous)."""
    import torch_tpu._dynamo.backend as backend
    has_rule = backend._has_rule
    monkeypatch.setattr(backend, "_has_rule", lambda name: name != op and has_rule(name))


def test_op_without_lowering_is_named(monkeypatch):
    _hide_rule(monkeypatch, "sin")
    torch._dynamo.reset()
    f = lambda x: torch.sin(x) + 1  # noqa: E731
    x = torch.rand(4).to("tpu")
    with pytest.raises(Exception, match=r"no tpu lowering for aten\.sin"):
        torch.compile(f, backend="tpu")(x)


def test_cpu_scalar_tensor_is_a_runtime_operand():
    """A 0-d CPU tensor joins the graph as a runtime scalar: a new value reuses the program."""
    f = lambda x, s: x * s + s  # noqa: E731
    x = torch.randn(5)
    compiled = torch.compile(f, backend="tpu", fullgraph=True)
    tpu_dynamo.reset_metrics()
    for v in (2.0, -3.5):
        s = torch.tensor(v)
        torch.testing.assert_close(compiled(x.to("tpu"), s).cpu(), f(x, s))
    m = tpu_dynamo.metrics()
    assert (m["graph_compiles"], m["graph_cache_hits"]) == (1, 1)


def test_tensor_constants_made_in_the_traced_code():
    """torch.tensor([...]) inside compiled code becomes a graph constant that
    AOTAutograd copies (lift_fresh_copy); moving it to tpu ran under the fake
    mode, and the compile failed ("Please convert all Tensors to FakeTensors")."""
    def f(x):
        shift = torch.tensor([1, -8], dtype=torch.int8).to(x.device)
        w = torch.tensor([[1.5, 2.0], [3.0, -4.0]], device=x.device)
        return (x + shift).float() @ w, x.float() * torch.tensor([0.5, 2.0], dtype=torch.float64).to(x.device, torch.float32)

    x = torch.tensor([[3, -2], [0, 5]], dtype=torch.int8)
    want = f(x)
    got = torch.compile(f, backend="tpu", fullgraph=True)(x.to("tpu"))
    for g, w in zip(got, want):
        torch.testing.assert_close(g.cpu(), w)


def test_op_without_lowering_falls_back_visibly(monkeypatch):
    """Without TORCH_TPU_FALLBACK=error, such a graph runs op by op (eager tpu,
    whose own CPU fallback takes the op), with a warning and a counter."""
    monkeypatch.delenv("TORCH_TPU_FALLBACK")
    _hide_rule(monkeypatch, "sin")
    torch._dynamo.reset()
    f = lambda x: torch.sin(x) + 1  # noqa: E731
    x = torch.rand(4)
    tpu_dynamo.reset_metrics()
    with pytest.warns(UserWarning, match=r"no tpu lowering for aten\.sin.*running this graph eagerly"):
        out = torch.compile(f, backend="tpu")(x.to("tpu"))
    torch.testing.assert_close(out.cpu(), f(x))
    assert tpu_dynamo.metrics()["graph_fallbacks"] == 1


def test_runner_given_fake_example_inputs_raises_instead_of_crashing(monkeypatch):
    """The backend's compile-time example inputs are fake tensors: handing them
    to the runner (a 0-d CPU one among them) is an error naming the input, not
    a read of memory that does not exist."""
    import torch_tpu._dynamo.backend as backend
    kept = []
    compile_graph = backend._compile_graph

    def keep(gm, example_inputs, kind):
        run = compile_graph(gm, example_inputs, kind)
        kept.append((run, list(example_inputs)))
        return run

    monkeypatch.setattr(backend, "_compile_graph", keep)
    # Compiled here, not loaded from the graph cache (an earlier test process may have stored it).
    monkeypatch.setattr(backend._graph_code, "_folder", lambda: "")
    torch._dynamo.reset()
    f = torch.compile(lambda x, s: x * s, backend="tpu")
    x = torch.randn(4, device="tpu")
    torch.testing.assert_close(f(x, torch.tensor(3.0)).cpu(), x.cpu() * 3)
    run, fake = kept[-1]
    assert any(isinstance(t, torch._subclasses.FakeTensor) and t.device.type == "cpu" for t in fake)
    with pytest.raises(RuntimeError, match=r"(without data \(a fake or meta tensor\?\)|expected a tpu storage)"):
        run(list(fake))
    fake_cpu_only = [t if t.device.type == "cpu" else x for t in fake]
    with pytest.raises(RuntimeError, match=r"input \d+ is a 0-d CPU tensor without data"):
        run(fake_cpu_only)
