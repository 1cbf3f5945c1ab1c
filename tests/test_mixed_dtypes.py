"""Mixed-dtype autograd gives each input a gradient of its own dtype, and the
CPU's type-promotion errors are raised on tpu with the same exception type."""
import pytest
import torch

from helpers import raises_like_the_cpu

F32, F64, BF16, F16, I64 = torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")


GRAPHS = {
    "mul f32*f64": ((F32, F64), lambda a, b: a * b),
    "add f32+bf16": ((F32, BF16), lambda a, b: a + b),
    "where f16/f64": ((F16, F64), lambda a, b: torch.where(a > 0, a, b)),
    "matmul after cast": ((BF16, F32), lambda a, b: (a.float()[:, None] * b[None, :]).sum(0)),
    "cat promotes": ((F32, BF16), lambda a, b: torch.cat([a, b])),
    "div by f64": ((BF16, F64), lambda a, b: a / (b.abs() + 1)),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_gradients_have_each_inputs_dtype(name):
    dtypes, fn = GRAPHS[name]
    g = torch.Generator().manual_seed(0)
    base = [torch.randn(4, generator=g).to(dt) for dt in dtypes]
    grads = {}
    for dev in ("cpu", "tpu"):
        xs = [b.detach().clone().to(dev).requires_grad_() for b in base]
        out = fn(*xs)
        out.float().square().sum().backward()
        grads[dev] = [x.grad for x in xs]
    for gt, gc, dt in zip(grads["tpu"], grads["cpu"], dtypes):
        assert gt.dtype == gc.dtype == dt
        torch.testing.assert_close(gt.cpu(), gc, rtol=1e-2, atol=1e-2)


def _t(dt, dev, v=1):
    return torch.full((2,), v, dtype=dt, device=dev)


ERRORS = {
    "float alpha, int result": lambda d: torch.add(_t(I64, d), _t(I64, d), alpha=1.5),
    "bool alpha, float result": lambda d: torch.add(_t(F32, d), _t(F32, d), alpha=True),
    "complex alpha, real result": lambda d: torch.sub(_t(F32, d), _t(F32, d), alpha=1j),
    "float alpha rsub int": lambda d: torch.rsub(_t(I64, d), 2, alpha=0.5),
    "in-place float into int": lambda d: _t(I64, d).add_(_t(F32, d)),
    "in-place complex into float": lambda d: _t(F32, d).mul_(torch.tensor(1j, device=d)),
    "mm mixed": lambda d: torch.mm(torch.ones(2, 2, device=d), torch.ones(2, 2, dtype=F64, device=d)),
    "dot mixed": lambda d: torch.dot(_t(F32, d), _t(F64, d)),
    "index_put mixed": lambda d: _t(F32, d).index_put_((torch.tensor([0], device=d),), _t(F64, d)[:1]),
    "lerp mixed": lambda d: torch.lerp(_t(F32, d), _t(F64, d), 0.5),
    "out= float into int": lambda d: torch.add(_t(F32, d), 1, out=_t(I64, d)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_promotion_errors_like_cpu(name):
    raises_like_the_cpu(ERRORS[name])


@pytest.mark.parametrize("alpha,dt", [(2, I64), (0.5, F32), (True, torch.bool), (1 + 1j, torch.complex64)])
def test_valid_alphas_still_work(alpha, dt):
    a = torch.tensor([1, 0, 1]).to(dt)
    for op in (torch.add, torch.sub) if dt != torch.bool else (torch.add,):
        torch.testing.assert_close(op(a.to("tpu"), a.to("tpu"), alpha=alpha).cpu(), op(a, a, alpha=alpha))
