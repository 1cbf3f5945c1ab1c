"""nn.LSTM / GRU / RNN and their cells on tpu (the fused LSTM and GRU cells
of aten::lstm/gru on non-CPU devices): outputs, final states and every
parameter's gradient against the CPU."""
import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def _run(module, x, h0, device):
    module = module.to(device)
    x = x.detach().to(device).requires_grad_(True)
    h0 = None if h0 is None else tuple(h.to(device) for h in h0) if isinstance(h0, tuple) else h0.to(device)
    out, state = module(x, h0)
    states = state if isinstance(state, tuple) else (state,)
    loss = out.float().square().sum() + sum(s.float().sum() for s in states)
    loss.backward()
    grads = [p.grad.float().cpu() for p in module.parameters()] + [x.grad.float().cpu()]
    return [out.float().cpu()] + [s.float().cpu() for s in states], grads


def _compare(cls, kwargs, shape, with_state, dtype=torch.float32, tol=None):
    torch.manual_seed(0)
    cpu = cls(**kwargs)
    dev = cls(**kwargs)
    dev.load_state_dict(cpu.state_dict())
    cpu, dev = cpu.to(dtype), dev.to(dtype)
    x = torch.randn(*shape).to(dtype)
    h0 = None
    if with_state:
        layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
        batch = shape[0] if kwargs.get("batch_first") else shape[1]
        h = torch.randn(layers, batch, kwargs["hidden_size"]).to(dtype)
        h0 = (h, torch.randn_like(h)) if cls is torch.nn.LSTM else h
    want, want_g = _run(cpu, x, h0, "cpu")
    got, got_g = _run(dev, x, h0, "tpu")
    tol = tol or {}
    for g, w in zip(got + got_g, want + want_g):
        torch.testing.assert_close(g, w, **tol)


@pytest.mark.parametrize("cls", [torch.nn.LSTM, torch.nn.GRU, torch.nn.RNN])
@pytest.mark.parametrize("kwargs,with_state", [
    (dict(input_size=3, hidden_size=4), False),
    (dict(input_size=3, hidden_size=4, num_layers=2, batch_first=True), True),
    (dict(input_size=3, hidden_size=5, bidirectional=True, bias=False), True),
], ids=["basic", "2layers_batch_first_h0", "bidirectional_nobias_h0"])
def test_rnn_modules_match_cpu(cls, kwargs, with_state):
    shape = (2, 6, 3) if kwargs.get("batch_first") else (6, 2, 3)
    _compare(cls, kwargs, shape, with_state, tol=dict(rtol=1e-4, atol=1e-5))


def test_rnn_relu_and_unbatched_input():
    _compare(torch.nn.RNN, dict(input_size=3, hidden_size=4, nonlinearity="relu"), (6, 2, 3), True,
             tol=dict(rtol=1e-4, atol=1e-5))
    _compare(torch.nn.GRU, dict(input_size=3, hidden_size=4), (6, 3), False, tol=dict(rtol=1e-4, atol=1e-5))


@pytest.mark.parametrize("cls", [torch.nn.LSTM, torch.nn.GRU])
def test_bfloat16_modules_match_cpu(cls):
    _compare(cls, dict(input_size=3, hidden_size=4), (5, 2, 3), True, dtype=torch.bfloat16,
             tol=dict(rtol=5e-2, atol=5e-2))


@pytest.mark.parametrize("cls", [torch.nn.LSTMCell, torch.nn.GRUCell, torch.nn.RNNCell])
def test_cells_match_cpu(cls):
    torch.manual_seed(0)
    cpu = cls(3, 4)
    dev = cls(3, 4)
    dev.load_state_dict(cpu.state_dict())
    dev.to("tpu")
    x, h = torch.randn(2, 3), torch.randn(2, 4)
    state = (h, torch.randn(2, 4)) if cls is torch.nn.LSTMCell else h
    dstate = tuple(s.to("tpu") for s in state) if isinstance(state, tuple) else state.to("tpu")
    want, got = cpu(x, state), dev(x.to("tpu"), dstate)
    want, got = (want if isinstance(want, tuple) else (want,)), (got if isinstance(got, tuple) else (got,))
    sum(w.sum() for w in want).backward()
    sum(g.sum() for g in got).backward()
    for g, w in zip(got, want):
        torch.testing.assert_close(g.cpu(), w)
    for pd, pc in zip(dev.parameters(), cpu.parameters()):
        torch.testing.assert_close(pd.grad.cpu(), pc.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cls", [torch.nn.LSTM, torch.nn.GRU])
def test_packed_sequences_match_cpu(cls):
    torch.manual_seed(0)
    cpu = cls(3, 4, batch_first=True)
    dev = cls(3, 4, batch_first=True)
    dev.load_state_dict(cpu.state_dict())
    dev.to("tpu")
    x, lengths = torch.randn(3, 5, 3), torch.tensor([5, 3, 1])
    results = []
    for m, d in ((cpu, "cpu"), (dev, "tpu")):
        packed = pack_padded_sequence(x.to(d), lengths, batch_first=True)
        out, state = m(packed)
        padded, lens = pad_packed_sequence(out, batch_first=True)
        padded.sum().backward()
        results.append((padded.cpu(), lens, [p.grad.cpu() for p in m.parameters()]))
    (gp, gl, gg), (wp, wl, wg) = results[1], results[0]
    torch.testing.assert_close(gp, wp, rtol=1e-4, atol=1e-5)
    assert torch.equal(gl, wl)
    for a, b in zip(gg, wg):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
