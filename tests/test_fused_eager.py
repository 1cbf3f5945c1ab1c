"""Fused eager mode (TORCH_TPU_EAGER_MODE=fused, torch.tpu.EagerMode.DEFER_AND_FUSE):
ops are deferred into a window run as one program. Every result is compared
with the CPU and with strict mode; the window's flush points, its program
reuse, and the mode API are asserted through metrics()."""
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

import torch_tpu

FUSED = torch.tpu.EagerMode.DEFER_AND_FUSE
STRICT = torch.tpu.EagerMode.DEFER_NEVER


@pytest.fixture
def fused():
    with torch.tpu.set_eager_mode(FUSED):
        yield
    torch.tpu.synchronize()


def counts():
    m = torch_tpu.metrics()
    return {k: m[k] for k in ("compiles", "executions", "fused_ops", "fused_windows", "fused_compiles")}


def delta(before):
    after = counts()
    return {k: after[k] - before[k] for k in after}


def run_both(fn, *cpu_args):
    """fn on the CPU, in strict mode and in fused mode (fresh copies each)."""
    expect = fn(*[a.clone() for a in cpu_args])
    with torch.tpu.set_eager_mode(STRICT):
        strict = fn(*[a.to("tpu") for a in cpu_args])
        strict = [t.cpu() for t in strict] if isinstance(strict, (list, tuple)) else strict.cpu()
    with torch.tpu.set_eager_mode(FUSED):
        fused_out = fn(*[a.to("tpu") for a in cpu_args])
        fused_out = [t.cpu() for t in fused_out] if isinstance(fused_out, (list, tuple)) else fused_out.cpu()
    return expect, strict, fused_out


def mlp_block(x, w1, w2, b):
    h = F.gelu(x @ w1 + b)
    h = F.layer_norm(h, h.shape[-1:])
    return (h @ w2).softmax(-1), h.sum(0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_chain_of_ops_is_one_program_and_matches_strict_and_cpu(fused, dtype):
    torch.manual_seed(0)
    args = [torch.randn(6, 8, dtype=dtype), torch.randn(8, 16, dtype=dtype),
            torch.randn(16, 4, dtype=dtype), torch.randn(16, dtype=dtype)]
    expect, strict, got = run_both(mlp_block, *args)
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    for e, s, g in zip(expect, strict, got):
        assert_close(g, s, **tol)
        assert_close(g, e, **(tol if dtype == torch.bfloat16 else dict(rtol=1e-5, atol=1e-5)))
    xs = [a.to("tpu") for a in args]
    before = counts()
    out = mlp_block(*xs)
    d = delta(before)
    assert d["executions"] == 0 and d["fused_ops"] >= 6  # deferred, nothing ran yet
    out[0].cpu()
    d = delta(before)
    assert d["fused_windows"] == 1 and d["executions"] == 1


def test_views_in_place_writes_and_aliasing(fused):
    torch.manual_seed(1)
    base = torch.randn(5, 6)

    def fn(x):
        v = x[1:4, ::2]          # a strided view
        v.mul_(2)                # written through the view: x sees it
        t = x.t()
        t[0].add_(1)             # column 0 of x
        cache = torch.zeros(2, 8, 6, device=x.device)
        cache[:, 3].copy_(x[:2])  # a KV-cache style write at a position
        cache.index_copy_(1, torch.tensor([5], device=x.device), x[2:4].unsqueeze(1))
        y = x.clone()
        x.zero_()[0, 0] = 7.0
        return x, y, v.contiguous(), cache

    expect, strict, got = run_both(fn, base)
    for e, s, g in zip(expect, strict, got):
        assert_close(g, e)
        assert torch.equal(g, s)


def test_empty_zero_dim_and_int_bool_dtypes(fused):
    def fn(a, b, c):
        e = a[:0] * 3
        z = a.sum() + 1          # 0-d
        i = (b * 3 - 1) // 2
        m = (c & (b > 0)).logical_not()
        return e, z, i, m, torch.where(m, i, 0)

    a = torch.randn(4, 3)
    b = torch.randint(-5, 5, (4, 3))
    c = torch.rand(4, 3) > 0.5
    expect, strict, got = run_both(fn, a, b, c)
    for e, s, g in zip(expect, strict, got):
        assert_close(g, e)
        assert torch.equal(g, s)


def test_intermediates_and_inputs_that_die_before_the_window_runs(fused):
    torch.manual_seed(2)
    a = torch.randn(32)
    x = a.to("tpu")
    h = x.exp()
    del x                        # an input of the window dies before it runs
    for _ in range(5):
        h = (h * 0.5).sin()      # each h before the last dies unread
    assert_close(h.cpu(), (a.exp() * 0.5).sin().mul(0.5).sin().mul(0.5).sin().mul(0.5).sin().mul(0.5).sin())


def test_a_window_of_many_runtime_operands_packs_them_by_dtype():
    """A window with many runtime operands passes them packed, one array per dtype (storage offsets int64,
    Python floats, integers and bools, a 0-d CPU float64 tensor, generator seeds and offsets uint64); a
    window of few passes each alone. Both give strict mode's values, bit for bit."""
    def work(x, n):
        torch.manual_seed(7)
        f, i = x.clone(), x.to(torch.int64)
        outs = []
        for k in range(n):
            f = f * (1.5 + k) + x[k % 3:][:4].sum()           # a float scalar; a view at an offset
            i = (i + (k - 3)).clamp(-1000, 1000)               # an integer scalar
            b = torch.where(f > 0, f, torch.tensor(0.25, dtype=torch.float64))  # a 0-d CPU tensor
            outs += [b.masked_fill(i > 2, True), torch.rand(2, device=x.device) + k]  # a bool; a generator
        return torch.stack([o[:2].to(torch.float64) for o in outs])

    x = torch.linspace(-2, 2, 16)
    for n in (2, 12):  # about 10 operands in one window, about 60 in the other
        with torch.tpu.set_eager_mode(STRICT):
            strict = work(x.to("tpu"), n).cpu()
        with torch.tpu.set_eager_mode(FUSED):
            before = counts()
            got = work(x.to("tpu"), n).cpu()
            assert delta(before)["fused_windows"] >= 1
        assert torch.equal(got, strict), n
        cpu_part = work(x, n)[0::2]  # the deterministic half, against the CPU
        assert_close(got[0::2], cpu_part)


def _disk():
    m = torch_tpu.metrics()
    return m["disk_cache_hits"], m["disk_cache_misses"]


def test_a_window_of_one_op_is_the_strict_program():
    """A window flushed after one functional op is that op's own program, the
    text strict mode compiles: the persistent cache (on in tests) hands it over
    instead of XLA compiling a second program. Two ops, or an in-place op,
    make a program of their own."""
    assert torch_tpu._C._compile_cache_dir(), "tests run with a compile cache folder"
    x = torch.randn(5, 13)
    xt = x.to("tpu")
    with torch.tpu.set_eager_mode(STRICT):
        strict = torch.addcmul(xt, xt, xt, value=0.75).cpu()
        strict_chain = (xt * 1.25).exp().cpu()
    y = xt.clone()
    hits, misses = _disk()
    before = counts()
    with torch.tpu.set_eager_mode(FUSED):
        one = torch.addcmul(xt, xt, xt, value=0.75).cpu()
    assert delta(before)["fused_compiles"] == 1 and _disk() == (hits + 1, misses), (delta(before), _disk())
    assert torch.equal(one, strict)
    assert_close(one, torch.addcmul(x, x, x, value=0.75))

    with torch.tpu.set_eager_mode(FUSED):
        chain = (xt * 1.25).exp().cpu()  # two ops in one window
        y.mul_(2.0)  # alone in its window, but in place: its buffer is donated
        in_place = y.cpu()
    assert _disk()[1] == misses + 2, _disk()
    assert torch.equal(chain, strict_chain)
    assert torch.equal(in_place, x * 2.0)


def test_random_ops_follow_the_same_generator_sequence_as_strict():
    def draw():
        torch.manual_seed(123)
        r = torch.rand(3, 4, device="tpu")
        n = torch.randn(5, device="tpu")
        d = F.dropout(torch.ones(64, device="tpu"), 0.5)
        return r.cpu(), n.cpu(), d.cpu()

    with torch.tpu.set_eager_mode(STRICT):
        strict = draw()
    with torch.tpu.set_eager_mode(FUSED):
        got = draw()
    for s, g in zip(strict, got):
        assert torch.equal(s, g)


@pytest.mark.parametrize("trigger", ["cpu", "item", "tolist", "print", "synchronize", "mode_change", "event"])
def test_each_flush_point_runs_the_window(fused, trigger, capsys):
    a = torch.arange(6.0)
    x = a.to("tpu")
    y = x * 2 + 1
    before = counts()
    if trigger == "cpu":
        assert_close(y.cpu(), a * 2 + 1)
    elif trigger == "item":
        assert y[3].item() == 7.0
    elif trigger == "tolist":
        assert y.tolist() == (a * 2 + 1).tolist()
    elif trigger == "print":
        print(y)
        assert "11." in capsys.readouterr().out
    elif trigger == "synchronize":
        torch.tpu.synchronize()
    elif trigger == "mode_change":
        with torch.tpu.set_eager_mode(STRICT):
            pass
    elif trigger == "event":
        torch.tpu.current_stream().record_event()
    # Printing reads several small results (formatting): a window each, the first holding y.
    assert delta(before)["fused_windows"] >= 1 if trigger == "print" else delta(before)["fused_windows"] == 1
    assert_close(y.cpu(), a * 2 + 1)


def test_a_long_stream_of_ops_is_cut_into_windows_that_repeat(fused):
    x = torch.zeros(3, device="tpu")
    before = counts()
    for _ in range(1100):
        x.add_(1)
    assert_close(x.cpu(), torch.full((3,), 1100.0))
    d = delta(before)
    # No window holds more than the 512-op limit; the cuts depend on the ops
    # (window.cpp), so the repeating stream reuses its window's program: the
    # first window (with zeros' fill), the repeating one, and the rest at
    # .cpu(); not a new program per window.
    assert d["fused_windows"] >= 3
    assert d["fused_compiles"] <= 3


def test_a_repeated_step_compiles_nothing_after_warm_up(fused):
    torch.manual_seed(3)
    w = torch.randn(16, 16, device="tpu")
    state = torch.zeros(4, 16, device="tpu")
    for step in range(12):
        if step == 2:
            before = counts()
        state = torch.tanh(state @ w + step * 0.1)   # a new Python scalar each step: an operand
        state[:, step % 4] = 0.0                   # a new offset each step: an operand too
        norm = state.norm().item()                 # a host read each step flushes
    d = delta(before)
    assert d["compiles"] == 0 and d["fused_windows"] == 10
    assert norm > 0


def test_shape_errors_raise_at_the_op_and_value_errors_at_the_next_sync(fused):
    x = torch.ones(3, 4, device="tpu")
    with pytest.raises(RuntimeError, match="size of tensor a|broadcast"):
        x + torch.ones(5, device="tpu")
    idx = torch.tensor([0, 7], device="tpu")
    y = x.index_select(1, idx)   # 7 is out of range: known only on the device
    with pytest.raises((IndexError, RuntimeError), match="index_select|out of"):
        y.cpu()


def test_a_fallback_and_a_compiled_graph_inside_fused_mode(fused):
    torch.manual_seed(4)
    a = torch.randn(8, 8)
    x = a.to("tpu")
    y = x * 3

    @torch.compile(backend="tpu")
    def g(t):
        return (t.sin() + 1).sum(0)

    z = g(y)                     # a whole graph is not deferred: the window runs first
    assert_close(z.cpu(), ((a * 3).sin() + 1).sum(0), rtol=1e-5, atol=1e-5)
    v = torch.linalg.matrix_exp(y[:4, :4] * 0.01)   # runs on the CPU if it has no lowering
    assert_close(v.cpu(), torch.linalg.matrix_exp(a[:4, :4] * 3 * 0.01), rtol=1e-5, atol=1e-5)


def test_training_steps_match_strict_and_compile_nothing_after_warm_up():
    def train(mode, steps=20):
        torch.manual_seed(5)
        model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.Linear(32, 2)).to("tpu")
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        data = torch.randn(16, 8).to("tpu")
        target = torch.randn(16, 2).to("tpu")
        losses, compiles_after_warm_up = [], None
        with torch.tpu.set_eager_mode(mode):
            for step in range(steps):
                if step == 3:
                    before = counts()
                opt.zero_grad()
                loss = F.mse_loss(model(data), target)
                loss.backward()
                opt.step()
                losses.append(loss.item())
            compiles_after_warm_up = delta(before)["compiles"]
        return losses, [p.detach().cpu() for p in model.parameters()], compiles_after_warm_up

    s_losses, s_params, _ = train(STRICT)
    f_losses, f_params, f_compiles = train(FUSED)
    assert_close(torch.tensor(f_losses), torch.tensor(s_losses), rtol=1e-6, atol=1e-6)
    for s, f in zip(s_params, f_params):
        assert_close(f, s, rtol=1e-6, atol=1e-6)
    assert f_compiles == 0


def test_greedy_decode_of_64_tokens_matches_strict_and_compiles_nothing_after_warm_up(tmp_path):
    transformers = pytest.importorskip("transformers")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "hf"))
    import tiny_models

    folder = tiny_models.build("qwen3", tmp_path / "qwen3")
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, device_map="tpu")
    prompt = torch.tensor([[1, 5, 9, 13]], device="tpu")
    kw = dict(max_new_tokens=64, do_sample=False, cache_implementation="static", pad_token_id=0,
              eos_token_id=None)
    with torch.tpu.set_eager_mode(STRICT):
        strict = model.generate(prompt, **kw).cpu()
    with torch.tpu.set_eager_mode(FUSED):
        model.generate(prompt, **kw)           # warm-up: prefill and decode windows compile
        before = counts()
        got = model.generate(prompt, **kw).cpu()
        d = delta(before)
    assert torch.equal(got, strict)
    assert got.shape[1] == 4 + 64
    assert d["compiles"] == 0, d
    assert d["fused_windows"] >= 64


def test_mode_api_and_environment():
    assert torch.tpu.eager_mode == STRICT
    with torch.tpu.set_eager_mode(FUSED):
        assert torch.tpu.eager_mode == FUSED
        assert not torch_tpu.modes.get_eager_mode() == STRICT
    assert torch.tpu.eager_mode == STRICT
    torch.tpu.eager_mode = "debug"
    try:
        assert torch.tpu.eager_mode == torch.tpu.EagerMode.DEFER_NEVER_AND_LAUNCH_BLOCKING
        assert torch_tpu._C.debug_mode()
    finally:
        torch.tpu.eager_mode = STRICT
    from torch_tpu._internal import execution_mode
    execution_mode.eager_mode = execution_mode.EagerMode.DEFER_AND_FUSE
    try:
        assert torch.tpu.eager_mode == FUSED
    finally:
        execution_mode.eager_mode = STRICT
    with pytest.raises(ValueError, match="unknown eager mode"):
        torch.tpu.set_eager_mode("lazy")
    code = "import torch, torch_tpu; print(torch.tpu.eager_mode.name)"
    for env, name in [({"TORCH_TPU_EAGER_MODE": "fused"}, "DEFER_AND_FUSE"),
                      ({"TPU_DEFER_AND_FUSE": "1"}, "DEFER_AND_FUSE"),
                      ({"TPU_LAUNCH_BLOCKING": "1"}, "DEFER_NEVER_AND_LAUNCH_BLOCKING")]:
        e = {k: v for k, v in os.environ.items() if k not in ("TORCH_TPU_EAGER_MODE",)}
        e.update(env)
        out = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=120)
        assert out.stdout.strip() == name, out.stderr
