"""torch_tpu.pallas.jax_op: JAX and Pallas functions as ops on tpu tensors,
compared with the JAX reference (jax.jit on JAX's own CPU backend) and with
PyTorch on the CPU. Runs under TORCH_TPU_FALLBACK=error (set here): nothing
may fall back."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import torch_tpu
from torch_tpu.pallas import jax_op

jax = pytest.importorskip("jax", reason="scripts/setup.sh installs jax==0.10.2; CI always has it")
jnp = jax.numpy
from jax.experimental import pallas as pl  # noqa: E402


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    """TORCH_TPU_FALLBACK=error for this module's tests only (set at import it
    leaked into every later test of the same pytest process)."""
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")

_names = iter(range(10**6))


def unique(base):
    """Custom op names are global to the process: one per test case."""
    return f"{base}_{next(_names)}"


def jax_reference(fn, *tensors):
    """fn under jax.jit on JAX's CPU backend, as torch tensors."""
    arrays = [jnp.asarray(t.float().numpy()).astype(jnp.bfloat16) if t.dtype == torch.bfloat16
              else jnp.asarray(t.numpy()) for t in tensors]
    out = jax.jit(fn)(*arrays)
    conv = (lambda a: torch.from_numpy(np.array(a.astype(jnp.float32))).to(torch.bfloat16)
            if a.dtype == jnp.bfloat16 else torch.from_numpy(np.array(a)))
    return tuple(conv(o) for o in out) if isinstance(out, (tuple, list)) else conv(out)


def views(x):
    """The tensor as tpu inputs of several layouts: contiguous, transposed
    back (non-contiguous), and a slice with a storage offset."""
    t = x.to("tpu")
    big = torch.zeros((x.shape[0] + 2,) + tuple(x.shape[1:]), dtype=x.dtype, device="tpu")
    big[2:] = t
    return {"contiguous": t, "non-contiguous": x.t().contiguous().to("tpu").t(), "offset slice": big[2:]}


DTYPES = [torch.float32, torch.bfloat16]
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "non-contiguous", "offset slice"])
def test_elementwise(dtype, layout):
    fn = lambda a, b: jnp.sin(a) * b + 1  # noqa: E731
    op = jax_op(unique("ew"), fn)
    x, y = torch.randn(6, 5).to(dtype), torch.randn(6, 5).to(dtype)
    got = op(views(x)[layout], views(y)[layout])
    assert got.device.type == "tpu" and got.dtype == dtype and got.shape == (6, 5)
    torch.testing.assert_close(got.cpu(), jax_reference(fn, x, y), **TOL[dtype])
    torch.testing.assert_close(got.cpu().float(), (torch.sin(x) * y + 1).float(), **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_reduction_with_two_outputs(dtype):
    fn = lambda a: (jnp.sum(a, axis=1), jnp.max(a))  # noqa: E731
    op = jax_op(unique("red"), fn)
    x = torch.randn(7, 9).to(dtype)
    s, m = op(views(x)["non-contiguous"])
    ref_s, ref_m = jax_reference(fn, x)
    torch.testing.assert_close(s.cpu(), ref_s, **TOL[dtype])
    torch.testing.assert_close(m.cpu(), ref_m, rtol=0, atol=0)
    torch.testing.assert_close(m.cpu(), x.max(), rtol=0, atol=0)
    torch.testing.assert_close(s.cpu().float(), x.float().sum(1), **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_matmul(dtype):
    fn = lambda a, b: a @ b  # noqa: E731
    op = jax_op(unique("mm"), fn)
    a, b = torch.randn(8, 16).to(dtype), torch.randn(16, 4).to(dtype)
    got = op(views(a)["offset slice"], views(b)["non-contiguous"])
    torch.testing.assert_close(got.cpu(), jax_reference(fn, a, b), **TOL[dtype])
    torch.testing.assert_close(got.cpu().float(), (a.float() @ b.float()), **TOL[dtype])


def test_empty_and_zero_d_inputs():
    op = jax_op(unique("shapes"), lambda a, s: (a * s, s + 1))
    a, s = torch.randn(0, 3), torch.tensor(2.5)
    got_a, got_s = op(a.to("tpu"), s.to("tpu"))
    assert got_a.shape == (0, 3) and got_s.shape == ()
    torch.testing.assert_close(got_s.cpu(), s + 1)


def test_pallas_kernel_in_interpret_mode():
    def add_kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] * 2 + y_ref[...]

    fn = lambda a, b: pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype),  # noqa: E731
                                     interpret=True)(a, b)
    op = jax_op(unique("pallas_add"), fn)
    x, y = torch.randn(8, 128), torch.randn(8, 128)
    got = op(views(x)["non-contiguous"], y.to("tpu"))
    torch.testing.assert_close(got.cpu(), jax_reference(fn, x, y))
    torch.testing.assert_close(got.cpu(), x * 2 + y)


def test_a_tpu_only_kernel_names_the_platform():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1

    fn = lambda a: pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype))(a)  # noqa: E731
    op = jax_op(unique("mosaic_only"), fn)
    platform = torch_tpu._C._runtime_info()["platform_name"]
    with pytest.raises(RuntimeError, match=f"could not export the function for platform '{platform}'"):
        op(torch.ones(8, 128, device="tpu"))


def test_donate_argnums_updates_the_argument_in_place():
    op = jax_op(unique("donate"), lambda acc, x: (acc + x * 2, jnp.sum(x)), donate_argnums=(0,))
    acc_cpu, x = torch.randn(5, 3), torch.randn(5, 3)
    acc = acc_cpu.to("tpu")
    out, total = op(acc, x.to("tpu"))
    assert out is acc
    torch.testing.assert_close(acc.cpu(), acc_cpu + x * 2)
    torch.testing.assert_close(total.cpu(), x.sum())
    # A view as the donated argument: its base sees the update.
    base = torch.zeros(4, 6, device="tpu")
    col = base[:, 1:4]
    op2 = jax_op(unique("donate_view"), lambda a: (a + 1,), donate_argnums=(0,))
    (got,) = op2(col)
    assert got is col
    expect = torch.zeros(4, 6)
    expect[:, 1:4] = 1
    torch.testing.assert_close(base.cpu(), expect, rtol=0, atol=0)


def test_gradients_through_register_autograd_with_a_jax_backward():
    sin = jax_op(unique("sin"), jnp.sin)
    sin_backward = jax_op(unique("sin_bw"), lambda x, g: jnp.cos(x) * g)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    sin.register_autograd(lambda ctx, g: sin_backward(ctx.saved_tensors[0], g), setup_context=setup_context)
    x = torch.randn(4, 5)
    xt = x.to("tpu").requires_grad_()
    (sin(xt) * 3).sum().backward()
    xc = x.clone().requires_grad_()
    (torch.sin(xc) * 3).sum().backward()
    torch.testing.assert_close(xt.grad.cpu(), xc.grad)


def test_inside_torch_compile_with_no_graph_break_and_gradients():
    from torch._dynamo.utils import counters

    ew = jax_op(unique("ew_compiled"), lambda a, b: (jnp.sin(a) * b, jnp.sum(a)))
    sq = jax_op(unique("sq"), lambda a: a * a)
    sq_bw = jax_op(unique("sq_bw"), lambda a, g: 2 * a * g)
    sq.register_autograd(lambda ctx, g: sq_bw(ctx.saved_tensors[0], g),
                         setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]))

    def f(a, b):
        y, s = ew(b * 2, b)  # b needs no gradient: ew has no backward
        return sq(a * 2 + y + s).sum()

    x, y = torch.randn(4, 6), torch.randn(4, 6)
    counters.clear()
    compiled = torch.compile(f, backend="tpu", fullgraph=True)
    xt = x.to("tpu").requires_grad_()
    loss = compiled(xt, y.to("tpu"))
    loss.backward()
    assert not counters["graph_break"], dict(counters["graph_break"])
    xc = x.clone().requires_grad_()
    ref = ((xc * 2 + torch.sin(y * 2) * y + (y * 2).sum()) ** 2).sum()
    ref.backward()
    torch.testing.assert_close(loss.cpu(), ref.detach(), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(xt.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-4)


def test_a_compiled_graph_inlines_the_kernels_into_its_one_program():
    ew = jax_op(unique("ew_inlined"), lambda a, b: (jnp.sin(a) * b, jnp.sum(a)))
    x, y = torch.randn(4, 5), torch.randn(4, 5)
    compiled = torch.compile(lambda a, b: ew(a * 2, b)[0] + ew(b, a)[1] + 3, backend="tpu", fullgraph=True)
    before = torch_tpu.metrics()
    got = compiled(x.to("tpu"), y.to("tpu"))
    after = torch_tpu.metrics()
    torch.testing.assert_close(got.cpu(), torch.sin(2 * x) * y + y.sum() + 3, rtol=1e-5, atol=1e-5)
    new = {k: v - before["compiles_by_op"].get(k, 0) for k, v in after["compiles_by_op"].items()
           if v != before["compiles_by_op"].get(k, 0)}
    assert new == {"graph": 1}, new  # no program of the jax_op's own


def test_a_donating_kernel_inside_torch_compile_runs_outside_the_graph():
    """Functionalization refuses a custom op that mutates and returns a list:
    the donating call is a graph break (counted), with the right values."""
    from torch._dynamo.utils import counters

    acc_op = jax_op(unique("acc"), lambda acc, x: (acc + x,), donate_argnums=(0,))

    def step(acc, x):
        acc_op(acc, x * 2)
        return acc.sum()

    acc = torch.zeros(3, 4, device="tpu")
    x = torch.randn(3, 4)
    counters.clear()
    total = torch.compile(step, backend="tpu")(acc, x.to("tpu"))
    assert sum(counters["graph_break"].values()) >= 1
    torch.testing.assert_close(acc.cpu(), x * 2)
    torch.testing.assert_close(total.cpu(), (x * 2).sum())


def test_one_hundred_calls_compile_once_and_never_touch_the_host():
    op = jax_op(unique("hundred"), lambda a, b: jnp.tanh(a) + b)
    a, b = torch.randn(32, 32, device="tpu"), torch.randn(32, 32, device="tpu")
    before = torch_tpu.metrics()
    out = op(a, b)
    for _ in range(99):
        out = op(out, b)
    torch.tpu.synchronize()
    after = torch_tpu.metrics()
    assert after["compiles"] - before["compiles"] == 1
    assert after["compiles_by_op"].get(f"jax_op {op.name}", 0) - before["compiles_by_op"].get(f"jax_op {op.name}", 0) == 1
    assert after["device_to_host_bytes"] == before["device_to_host_bytes"]
    assert after["host_to_device_bytes"] == before["host_to_device_bytes"]
    assert after["executions"] - before["executions"] == 100
    ref = a.cpu()
    for _ in range(100):
        ref = torch.tanh(ref) + b.cpu()
    torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-5)


def test_bad_input_gets_clear_errors():
    op = jax_op(unique("bad"), lambda a: a + 1)
    with pytest.raises(TypeError, match="argument 1 is a float"):
        op(torch.ones(2, device="tpu"), 1.5)
    with pytest.raises(RuntimeError, match="expected tpu tensors"):
        op(torch.ones(2))
    with pytest.raises(ValueError, match="Python identifier"):
        jax_op("not a name", lambda a: a)
    with pytest.raises(ValueError, match="exists already"):
        jax_op(op.name, lambda a: a * 3)  # would replace the first op's kernel
    torch.testing.assert_close(op(torch.ones(2, device="tpu")).cpu(), torch.full((2,), 2.0))


def test_the_import_paths_and_the_error_without_jax():
    assert torch.tpu.pallas.jax_op is jax_op
    from torch_tpu._internal.pallas import jax_op as internal

    assert internal is jax_op
    code = ("import sys; sys.modules['jax'] = None\n"
            "import torch, torch_tpu\n"
            "try:\n    torch.tpu.pallas.jax_op('f', lambda a: a)\n"
            "except ImportError as e:\n    print('IMPORT ERROR:', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert "IMPORT ERROR:" in out and "pip install 'torch_tpu[jax]'" in out, out


def test_torch_export_keeps_the_op_and_runs_it():
    op = jax_op(unique("exported"), lambda a: jnp.sin(a) * 2)

    class Model(torch.nn.Module):
        def forward(self, x):
            return op(x + 1) * 3

    x = torch.randn(4, 5)
    ep = torch.export.export(Model(), (x.to("tpu"),))
    targets = [n.target for n in ep.graph.nodes if n.op == "call_function"]
    assert getattr(torch.ops.tpu_jax, op.name).default in targets
    torch.testing.assert_close(ep.module()(x.to("tpu")).cpu(), torch.sin(x + 1) * 6, rtol=1e-5, atol=1e-5)
