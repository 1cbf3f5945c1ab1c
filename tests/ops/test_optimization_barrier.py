"""torch.tpu.ops.optimization_barrier: the inputs unchanged (any dtype, views),
through stablehlo.optimization_barrier in eager and compiled programs;
gradients pass through."""
import torch
from torch.testing import assert_close

import torch_tpu
from harness import make


def test_identity_for_every_input():
    xs = [make((3, 4), torch.float32), make((5,), torch.int64), make((2, 2), torch.bool),
          make((4, 3), torch.bfloat16).t(), make((), torch.float32), make((6, 4), torch.float32, noncontiguous=True)]
    got = torch.tpu.ops.optimization_barrier(*[x.to("tpu") for x in xs])
    assert isinstance(got, tuple) and len(got) == len(xs)
    for g, x in zip(got, xs):
        assert g.device.type == "tpu" and g.dtype == x.dtype and g.shape == x.shape
        assert_close(g.cpu(), x)


def test_one_tensor_in_one_out_and_a_new_tensor():
    x = torch.arange(6.0, device="tpu")
    y = torch.tpu.ops.optimization_barrier(x)
    assert isinstance(y, torch.Tensor) and y is not x
    x.add_(1)  # the result does not alias its input
    assert y.cpu().tolist() == [0, 1, 2, 3, 4, 5]


def test_gradients_pass_through():
    a = torch.randn(4, 3, device="tpu", requires_grad=True)
    b = torch.randn(3, device="tpu", requires_grad=True)
    p, q = torch.tpu.ops.optimization_barrier(a * 2, b)
    (p.sum() + (q * 3).sum()).backward()
    assert_close(a.grad.cpu(), torch.full((4, 3), 2.0))
    assert_close(b.grad.cpu(), torch.full((3,), 3.0))


def test_compiled_graph_holds_the_barrier(tmp_path):
    torch._dynamo.reset()
    torch_tpu._C._set_program_dump_dir(str(tmp_path))
    try:
        @torch.compile(backend="tpu", fullgraph=True)
        def f(x, y):
            u, v = torch.tpu.ops.optimization_barrier(x.sin(), y + 1)
            return u * v

        x, y = make((4, 5), torch.float32, seed=1), make((4, 5), torch.float32, seed=2)
        torch_tpu.reset_metrics()
        assert_close(f(x.to("tpu"), y.to("tpu")).cpu(), x.sin() * (y + 1))
        assert torch_tpu.metrics()["graph_compiles"] == 1
        texts = [p.read_text() for p in tmp_path.glob("*.mlir")]
        assert any("stablehlo.optimization_barrier" in t and "stablehlo.sine" in t for t in texts)
    finally:
        torch_tpu._C._set_program_dump_dir("")
