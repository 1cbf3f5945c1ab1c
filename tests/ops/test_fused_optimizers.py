"""torch.optim.Adam/AdamW(fused=True), Trainer's default optimizer: parameters
and state after several steps equal the CPU's fused kernel."""
import pytest
import torch
from torch.testing import assert_close


def run(cls, device, dtype, steps=5, **kw):
    torch.manual_seed(0)
    params = [torch.randn(5, 3, dtype=dtype), torch.randn(7, dtype=dtype), torch.randn((), dtype=dtype)]
    params = [p.to(device).requires_grad_() for p in params]
    opt = cls(params, fused=True, **kw)
    g = torch.Generator().manual_seed(1)
    for step in range(steps):
        for p in params:
            p.grad = torch.randn(p.shape, generator=g, dtype=dtype).to(device)
        opt.step()
        for group in opt.param_groups:  # a schedule: new lr each step, no recompiles
            group["lr"] = group["lr"] * 0.9
    return [p.detach().cpu() for p in params], [
        {k: v.cpu() for k, v in opt.state[p].items()} for p in params]


@pytest.mark.parametrize("cls", [torch.optim.AdamW, torch.optim.Adam], ids=lambda c: c.__name__)
@pytest.mark.parametrize("kw", [dict(), dict(weight_decay=0.1, amsgrad=True), dict(maximize=True, betas=(0.3, 0.5)),
                                dict(lr=torch.tensor(0.01))], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_fused_adam_matches_cpu(cls, kw, dtype):
    kw = dict(kw)
    lr = kw.pop("lr", 1e-2)
    p_cpu, s_cpu = run(cls, "cpu", dtype, lr=lr, **kw)
    lr_tpu = lr.to("tpu") if isinstance(lr, torch.Tensor) else lr
    p_tpu, s_tpu = run(cls, "tpu", dtype, lr=lr_tpu, **kw)
    assert_close(p_tpu, p_cpu)
    if dtype == torch.bfloat16:
        # exp_avg = lerp(exp_avg, grad, 1 - beta1) cancels where the two are
        # close; the CPU's vectorized lerp uses an FMA, XLA may not, and after
        # rounding to bfloat16 the states can differ by one bfloat16 step of
        # their scale (the parameters above still match exactly).
        for got, expect in zip(s_tpu, s_cpu):
            for k in expect:
                scale = expect[k].float().abs().max().item()
                assert_close(got[k], expect[k], rtol=0, atol=torch.finfo(dtype).eps * scale)
    else:
        assert_close(s_tpu, s_cpu)


def test_fused_adam_learning_rate_schedule_does_not_recompile():
    import torch_tpu
    run(torch.optim.AdamW, "tpu", torch.float32, steps=2, lr=1e-2)
    before = torch_tpu.metrics()["compiles_by_op"].get("_fused_adamw_", 0)
    run(torch.optim.AdamW, "tpu", torch.float32, steps=6, lr=3e-2)
    assert torch_tpu.metrics()["compiles_by_op"].get("_fused_adamw_", 0) == before
