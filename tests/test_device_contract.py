"""The parts of PyTorch's device contract a library relies on: memory through
torch.accelerator, out-of-memory as torch.OutOfMemoryError, capability and
properties, fork safety and multiprocessing, generators."""
import gc
import multiprocessing as mp

import pytest
import torch
import torch.multiprocessing as tmp


def test_accelerator_memory_api():
    # Garbage of earlier tests (tensors held by reference cycles, e.g. caught
    # exceptions' tracebacks) must not be collected between the readings.
    gc.collect()
    torch.tpu.synchronize()
    base = torch.accelerator.memory_allocated()
    x = torch.ones(1000, device="tpu")
    assert torch.accelerator.memory_allocated() == base + 4000
    assert torch.accelerator.memory_allocated() == torch.tpu.memory_allocated()
    assert torch.accelerator.max_memory_allocated() >= base + 4000
    stats = torch.accelerator.memory_stats()
    assert stats["allocated_bytes.all.current"] == base + 4000
    assert stats["allocated_bytes.all.allocated"] >= 4000
    free, total = torch.accelerator.get_memory_info()
    assert 0 < free <= total
    torch.accelerator.empty_cache()
    del x
    assert torch.accelerator.memory_allocated() == base
    torch.accelerator.reset_peak_memory_stats()
    assert torch.accelerator.max_memory_allocated() == base


def test_out_of_memory_is_torch_out_of_memory_error_and_the_process_keeps_working():
    big = torch.empty(1 << 40, dtype=torch.uint8, device="tpu")  # 1 TiB: no buffer until written
    with pytest.raises(torch.OutOfMemoryError, match=r"tried to allocate 1048576 MiB.*tpu:0 has"):
        big.fill_(1)
        torch.tpu.synchronize()
    del big
    x = torch.arange(4.0, device="tpu")
    torch.testing.assert_close((x * 2).cpu(), torch.arange(4.0) * 2)


def test_capability_and_properties():
    cap = torch.tpu.get_device_capability()
    assert cap == torch.accelerator.get_device_capability("tpu:0")
    for dt in (torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.bool, torch.complex64):
        assert dt in cap["supported_dtypes"]
        torch.zeros(2, dtype=dt, device="tpu")  # and really supported
    assert torch.float8_e4m3fn in cap["supported_dtypes"] and torch.float8_e5m2 in cap["supported_dtypes"]
    assert torch.uint16 not in cap["supported_dtypes"]  # not in the capability bitfield at all
    props = torch.tpu.get_device_properties(0)
    assert props.multi_processor_count >= 1 and props.total_memory > 0


def test_device_of_and_default_generators():
    n = torch.tpu.device_count()
    x = torch.ones(1, device=f"tpu:{n - 1}")
    before = torch.tpu.current_device()
    with torch.tpu.device_of(x):
        assert torch.tpu.current_device() == n - 1
    with torch.tpu.device_of(torch.ones(1)):  # a CPU tensor changes nothing
        assert torch.tpu.current_device() == before
    assert torch.tpu.current_device() == before
    gens = list(torch.tpu.default_generators)
    assert len(gens) == n and [g.device for g in gens] == [torch.device("tpu", i) for i in range(n)]
    with pytest.raises(IndexError):
        torch.tpu.default_generators[n]


def _forked_child(q):
    result = [torch.tpu._is_in_bad_fork()]
    try:
        torch.ones(2, device="tpu")
        result.append("no error")
    except RuntimeError as e:
        result.append(str(e))
    result.append(float(torch.arange(4.0).sum()))  # CPU work is fine
    q.put(result)


def test_forked_child_gets_a_clear_error_not_a_hang():
    torch.ones(1, device="tpu").cpu()   # the runtime is started in the parent
    assert not torch.tpu._is_in_bad_fork()
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_forked_child, args=(q,))
    p.start()
    try:
        bad, err, cpu_sum = q.get(timeout=120)
    finally:
        p.join(60)
        if p.is_alive():
            p.kill()
    assert p.exitcode == 0
    assert bad is True and "forked subprocess" in err and "spawn" in err
    assert cpu_sum == 6.0


class _Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.tensor(float(i)) ** 2


def test_dataloader_fork_workers_feed_a_tpu_training_loop():
    torch.ones(1, device="tpu").cpu()   # the runtime is started before the workers fork
    loader = torch.utils.data.DataLoader(_Squares(), batch_size=4, num_workers=2,
                                         multiprocessing_context="fork", timeout=120)
    got = torch.cat([b.to("tpu") for b in loader]).cpu()
    torch.testing.assert_close(got, torch.arange(8.0) ** 2)
    torch.manual_seed(0)
    models = [torch.nn.Linear(1, 1) for _ in range(2)]
    models[1].load_state_dict(models[0].state_dict())
    models[1].to("tpu")
    losses = {}
    for model, dev in zip(models, ("cpu", "tpu")):
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        losses[dev] = []
        for _ in range(3):
            for batch in loader:
                x = batch.to(dev)[:, None]
                loss = (model(x.sqrt()) - x).square().mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses[dev].append(loss.item())
    torch.testing.assert_close(torch.tensor(losses["tpu"]), torch.tensor(losses["cpu"]), rtol=1e-4, atol=1e-5)


def test_sending_a_tpu_tensor_to_another_process_fails_at_once():
    q = tmp.get_context("spawn").SimpleQueue()
    for obj in (torch.ones(2, device="tpu"), torch.nn.Parameter(torch.ones(2, device="tpu")),
                torch.ones(2, device="tpu").untyped_storage()):
        with pytest.raises(RuntimeError, match="cannot be sent to another process"):
            q.put(obj)
    q.put(torch.ones(2))   # CPU tensors still go through shared memory
    torch.testing.assert_close(q.get(), torch.ones(2))


def test_dlpack_export_of_a_tpu_tensor_is_a_clear_error():
    x = torch.arange(3.0, device="tpu")
    for export in (torch.utils.dlpack.to_dlpack, lambda t: t.__dlpack__(), torch.utils.dlpack.from_dlpack):
        with pytest.raises(RuntimeError, match="cannot be exported through DLPack.*tensor.cpu"):
            export(x)
    cpu = torch.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(x.cpu()))   # CPU copies still work
    torch.testing.assert_close(cpu, torch.arange(3.0))


def test_pin_memory():
    x = torch.arange(12.0).reshape(3, 4)
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned()
    assert p[1:].is_pinned() and p.t().is_pinned()          # views of pinned memory
    assert torch.equal(p, x)
    y = p.to("tpu", non_blocking=True)
    torch.testing.assert_close(y.cpu(), x)
    assert torch.empty(5, pin_memory=True).is_pinned()
    loader = torch.utils.data.DataLoader(torch.arange(8.0), batch_size=4, pin_memory=True)
    assert all(b.is_pinned() for b in loader)
    del p
    assert not torch.arange(3.0).is_pinned()
