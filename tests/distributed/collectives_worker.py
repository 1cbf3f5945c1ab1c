"""One rank of test_collectives.py: every collective on tpu tensors through
the "tpu_dist" backend, compared with the same collective under gloo on CPU
tensors in the same processes. Prints WORKER OK, or each failure."""
import datetime
import traceback

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

import torch_tpu
from launch import say  # one write per line: ranks share the output pipe

R = dist.ReduceOp
DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.bool]
FLOATS = (torch.float32, torch.bfloat16, torch.float16)
failures = []


def case(name):
    def wrap(fn):
        try:
            fn()
        except Exception:
            failures.append(f"[rank {RANK}] {name}:\n{traceback.format_exc()}")
        return fn
    return wrap


def values(shape, dtype, salt):
    """Small integers: every reduction of them is exact in every dtype."""
    g = torch.Generator().manual_seed(7919 * RANK + salt)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    return torch.randint(-3, 4, shape, generator=g).to(dtype)


def same(ours, ref):
    ours, ref = list(ours), list(ref)
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        assert o.device.type == "tpu", o.device
        torch.testing.assert_close(o.cpu(), r, rtol=0, atol=0)


def both(build, run):
    """build(device) -> arguments; run(arguments, group) -> tensors to compare.
    Where gloo refuses the call, the tpu backend must refuse it too."""
    try:
        ref = run(build("cpu"), GLOO)
    except Exception as e:
        try:
            run(build("tpu"), None)
        except type(e):
            return
        raise AssertionError(f"gloo raised {e!r}; the tpu backend did not")
    same(run(build("tpu"), None), ref)


def main():
    global RANK, W, GLOO
    dist.init_process_group("tpu_dist", timeout=datetime.timedelta(seconds=60))
    RANK, W = dist.get_rank(), dist.get_world_size()
    GLOO = dist.new_group(backend="gloo")
    assert torch.tpu.device_count() == 1, "torchrun gives each process one device"
    assert dist.get_backend() == "tpu_dist"

    for dt in DTYPES:
        d = str(dt).split(".")[1]
        ops = [R.SUM, R.PRODUCT, R.MIN, R.MAX] + ([R.AVG] if dt in FLOATS else [])
        for op in ops:
            @case(f"all_reduce {op} {d}")
            def _():
                def run(t, g):
                    dist.all_reduce(t, op=op, group=g)
                    return [t]
                both(lambda dev: values((5, 3), dt, 1).to(dev), run)

        @case(f"broadcast {d}")
        def _():
            both(lambda dev: values((4,), dt, 2).to(dev), lambda t, g: (dist.broadcast(t, 1, group=g), [t])[1])

        @case(f"reduce {d}")
        def _():
            def run(t, g):
                dist.reduce(t, 2, group=g)
                return [t] if RANK == 2 else []
            both(lambda dev: values((3, 2), dt, 3).to(dev), run)

        @case(f"all_gather {d}")
        def _():
            def run(t, g):
                outs = [torch.empty_like(t) for _ in range(W)]
                dist.all_gather(outs, t, group=g)
                return outs
            both(lambda dev: values((2, 3), dt, 4).to(dev), run)

        @case(f"all_gather_into_tensor {d}")
        def _():
            def run(t, g):
                out = torch.empty((W * 2, 3), dtype=dt, device=t.device)
                dist.all_gather_into_tensor(out, t, group=g)
                return [out]
            both(lambda dev: values((2, 3), dt, 5).to(dev), run)

        @case(f"allgather_into_tensor_coalesced {d}")
        def _():
            def run(ts, g):
                outs = [torch.empty((W * t.numel(),), dtype=dt, device=t.device) for t in ts]
                pg = g if g is not None else dist.group.WORLD
                pg.allgather_into_tensor_coalesced(outs, ts).wait()
                return outs
            both(lambda dev: [values((3,), dt, 6).to(dev), values((5,), dt, 7).to(dev)], run)

        @case(f"reduce_scatter {d}")
        def _():
            def run(ins, g):
                out = torch.empty_like(ins[0])
                dist.reduce_scatter(out, ins, group=g)
                return [out]
            both(lambda dev: [values((2, 2), dt, 8 + i).to(dev) for i in range(W)], run)

        @case(f"reduce_scatter_tensor {d}")
        def _():
            def run(t, g):
                out = torch.empty((3,), dtype=dt, device=t.device)
                dist.reduce_scatter_tensor(out, t, group=g)
                return [out]
            both(lambda dev: values((W * 3,), dt, 9).to(dev), run)

        @case(f"reduce_scatter_tensor_coalesced {d}")
        def _():
            def run(ts, g):
                outs = [torch.empty((t.numel() // W,), dtype=dt, device=t.device) for t in ts]
                pg = g if g is not None else dist.group.WORLD
                pg.reduce_scatter_tensor_coalesced(outs, ts).wait()
                return outs
            both(lambda dev: [values((W * 2,), dt, 10).to(dev), values((W,), dt, 11).to(dev)], run)

        @case(f"all_to_all_single even {d}")
        def _():
            def run(t, g):
                out = torch.empty_like(t)
                dist.all_to_all_single(out, t, group=g)
                return [out]
            both(lambda dev: values((W * 2, 3), dt, 12).to(dev), run)

        # Uneven splits, zeros included: rank i sends split(i, j) rows to rank j.
        def split(i, j):
            return (i + 2 * j) % 3

        @case(f"all_to_all_single uneven {d}")
        def _():
            ins = [split(RANK, j) for j in range(W)]
            outs = [split(i, RANK) for i in range(W)]

            def run(t, g):
                out = torch.empty((sum(outs), 3), dtype=dt, device=t.device)
                dist.all_to_all_single(out, t, outs, ins, group=g)
                return [out]
            both(lambda dev: values((sum(ins), 3), dt, 13).to(dev), run)

        @case(f"all_to_all {d}")
        def _():
            def run(ins, g):
                outs = [torch.empty((split(i, RANK), 2), dtype=dt, device=ins[0].device) for i in range(W)]
                dist.all_to_all(outs, ins, group=g)
                return outs
            both(lambda dev: [values((split(RANK, j), 2), dt, 14 + j).to(dev) for j in range(W)], run)

        @case(f"gather {d}")
        def _():
            def run(t, g):
                outs = [torch.empty_like(t) for _ in range(W)] if RANK == 0 else None
                dist.gather(t, outs, dst=0, group=g)
                return outs or []
            both(lambda dev: values((3,), dt, 20).to(dev), run)

        @case(f"scatter {d}")
        def _():
            def run(ins, g):
                out = torch.empty((2, 2), dtype=dt, device=ins[0].device)
                dist.scatter(out, ins if RANK == 3 else None, src=3, group=g)
                return [out]
            both(lambda dev: [values((2, 2), dt, 21 + i).to(dev) for i in range(W)], run)

        @case(f"send/recv {d}")
        def _():
            def run(t, g):
                got = torch.empty_like(t)
                nxt, prv = (RANK + 1) % W, (RANK - 1) % W
                if g is not None:
                    nxt, prv = dist.get_global_rank(g, nxt), dist.get_global_rank(g, prv)
                if RANK % 2 == 0:
                    dist.send(t, nxt, group=g)
                    dist.recv(got, prv, group=g)
                else:
                    dist.recv(got, prv, group=g)
                    dist.send(t, nxt, group=g)
                return [got]
            both(lambda dev: values((4,), dt, 22).to(dev), run)

    @case("views: a transposed view and a slice reduce in place into their base")
    def _():
        def run(base, g):
            dist.all_reduce(base.t(), group=g)        # non-contiguous
            dist.all_reduce(base[1, 1:3], group=g)    # a slice with an offset
            return [base]
        both(lambda dev: values((3, 4), torch.float32, 30).to(dev), run)

    @case("host-addressable device memory: no staging copies, and buffers stay immutable")
    def _():
        # On the CPU plugin the device's memory is the host's: collectives read
        # tpu tensors in place and their results become the tensors' new
        # buffers, so no bytes go through the plugin's transfers.
        big = values((256, 64), torch.float32, 40)
        ref = big.clone()
        dist.all_reduce(ref, group=GLOO)
        ref_gather = torch.empty((W * 256, 64))
        dist.all_gather_into_tensor(ref_gather, big, group=GLOO)
        x = big.to("tpu")
        view = x.view(-1)                      # shares x's storage: sees the result
        before = x.clone()                     # its own storage: keeps the old values
        gathered = torch.empty((W * 256, 64), device="tpu")
        torch.tpu.synchronize()
        m0 = torch_tpu.metrics()
        dist.all_reduce(x)
        dist.all_gather_into_tensor(gathered, before)
        torch.tpu.synchronize()
        m1 = torch_tpu.metrics()
        for k in ("host_to_device_bytes", "device_to_host_bytes"):
            assert m1[k] == m0[k], (k, m0[k], m1[k])
        same([x, view.view(256, 64), before, gathered], [ref, ref, big, ref_gather])
        # An index tensor whose host copy the eager path remembers (by buffer):
        # after the collective writes it, indexing uses the new values.
        idx = torch.tensor([RANK % 2, 1], device="tpu")
        src = torch.arange(10.0, device="tpu")
        assert src[idx].tolist() == [float(RANK % 2), 1.0]
        dist.all_reduce(idx)                   # sum over ranks
        want = torch.tensor([RANK % 2, 1])
        dist.all_reduce(want, group=GLOO)
        same([src[idx]], [torch.arange(10.0)[want]])

    @case("predicted all_reduces carry their check (one round), mispredictions cost nothing but a round")
    def _():
        backend = dist.group.WORLD._get_backend(torch.device("tpu"))
        assert backend.transport.startswith("host staging"), backend.transport
        rides = []
        for k, (dt, op) in enumerate([(torch.float32, dist.ReduceOp.SUM), (torch.bfloat16, dist.ReduceOp.MAX),
                                      (torch.int64, dist.ReduceOp.MIN), (torch.float16, dist.ReduceOp.PRODUCT),
                                      (torch.int32, dist.ReduceOp.SUM)]):
            n0 = backend.allreduces_completed_in_check
            # A loop of one all_reduce (a shape no earlier case used), then a
            # different one where the ranks predict the loop's.
            shape = (8, 3, 5 + k)
            for i in range(5):
                both(lambda dev: values(shape, dt, 60 + 10 * k + i).to(dev),
                     lambda t, g: (dist.all_reduce(t, op=op, group=g), [t])[1])
            both(lambda dev: values((7,), dt, 69 + 10 * k).to(dev),
                 lambda t, g: (dist.all_reduce(t, op=op, group=g), [t])[1])
            rides.append(backend.allreduces_completed_in_check - n0)
        # Above 256 KB the round is an all_reduce of the data with the ranks'
        # digests appended (below, an all-gather reduced on each rank).
        for k, (dt, op) in enumerate([(torch.float32, dist.ReduceOp.SUM), (torch.bfloat16, dist.ReduceOp.MAX)]):
            n0 = backend.allreduces_completed_in_check
            for i in range(5):
                both(lambda dev: values((300 * (1 + k), 257 + k), dt, 110 + 3 * k + i).to(dev),
                     lambda t, g: (dist.all_reduce(t, op=op, group=g), [t])[1])
            rides.append(backend.allreduces_completed_in_check - n0)
        # The same all_reduce after it twice in a row predicts it: the 4th and
        # 5th calls of each loop complete within their check.
        assert rides == [2] * 7, rides
        # A prediction that a different collective meets (a broadcast, a view
        # whose tensor is part of a larger storage) still gives right results.
        for i in range(4):
            both(lambda dev: values((6,), torch.float32, 120 + i).to(dev),
                 lambda t, g: (dist.all_reduce(t, group=g), [t])[1])
        both(lambda dev: values((6,), torch.float32, 125).to(dev),
             lambda t, g: (dist.broadcast(t, 2, group=g), [t])[1])
        for i in range(4):
            both(lambda dev: values((4, 6), torch.float32, 130 + i).to(dev),
                 lambda t, g: (dist.all_reduce(t[1], group=g), [t])[1])

    @case("empty and 0-d tensors")
    def _():
        both(lambda dev: values((0, 3), torch.float32, 31).to(dev), lambda t, g: (dist.all_reduce(t, group=g), [t])[1])
        both(lambda dev: values((), torch.int64, 32).to(dev), lambda t, g: (dist.all_reduce(t, group=g), [t])[1])

    @case("async work: wait() and the future's value")
    def _():
        t = values((6,), torch.float32, 33).to("tpu")
        ref = values((6,), torch.float32, 33)
        dist.all_reduce(ref, group=GLOO)
        work = dist.all_reduce(t, async_op=True)
        assert work.wait()
        assert work.is_completed() and work.is_success()
        fut = work.get_future()
        same(fut.wait(), [ref])
        same(fut.then(lambda f: [f.value()[0] * 2]).wait(), [ref * 2])

    @case("functional collectives (DTensor's path)")
    def _():
        t = values((W * 2, 3), torch.float32, 34)
        ref_sum = t.clone()
        dist.all_reduce(ref_sum, group=GLOO)
        ref_gather = torch.empty((W * W * 2, 3))
        dist.all_gather_into_tensor(ref_gather, t, group=GLOO)
        ref_rs = torch.empty((2, 3))
        dist.reduce_scatter_tensor(ref_rs, t, group=GLOO)
        ref_a2a = torch.empty_like(t)
        dist.all_to_all_single(ref_a2a, t, group=GLOO)
        x = t.to("tpu")
        group = dist.group.WORLD
        same([funcol.all_reduce(x, "sum", group).wait()], [ref_sum])
        same([funcol.all_gather_tensor(x, 0, group).wait()], [ref_gather])
        same([funcol.reduce_scatter_tensor(x, "sum", 0, group).wait()], [ref_rs])
        same([funcol.all_to_all_single(x, None, None, group).wait()], [ref_a2a])

    @case("functional collectives inside torch.compile(backend='tpu')")
    def _():
        t = values((4, 3), torch.float32, 35)
        ref = t * 2
        dist.all_reduce(ref, group=GLOO)
        group = dist.group.WORLD

        def f(x):
            return funcol.all_reduce(x * 2, "sum", group) + 1
        same([torch.compile(f, backend="tpu")(t.to("tpu"))], [ref + 1])

    # Errors: every rank gets the same clear error, none hangs, and the group
    # still works afterwards (nothing was sent).
    def expect_error(name, call, *needles):
        @case(name)
        def _():
            try:
                call()
            except dist.DistBackendError as e:
                msg = str(e)
                assert all(n in msg for n in needles), msg
            else:
                raise AssertionError("no error")

    expect_error("a rank with a tensor of the wrong shape",
                 lambda: dist.all_reduce(torch.ones(6 if RANK == 0 else 4, device="tpu")),
                 "disagree", "shapes", "rank 0: ALLREDUCE with Float[6]", "rank 1: ALLREDUCE with Float[4]")
    expect_error("a rank with a larger tensor after all_reduces that rode on their checks",
                 lambda: [dist.all_reduce(torch.ones(4, device="tpu")) for _ in range(4)]
                 + [dist.all_reduce(torch.ones(5 if RANK == 0 else 4, device="tpu"))],
                 "disagree", "shapes", "rank 0: ALLREDUCE with Float[5]", "rank 1: ALLREDUCE with Float[4]")
    expect_error("a rank with a different dtype",
                 lambda: dist.all_reduce(torch.ones(4, device="tpu", dtype=torch.int32 if RANK == 3 else torch.float32)),
                 "dtypes", "rank 3: ALLREDUCE with Int[4]")
    def different_collectives():
        for _ in range(4):  # the ranks now predict this all_reduce
            dist.all_reduce(torch.ones(4, device="tpu"))
        if RANK == 1:
            dist.broadcast(torch.ones(4, device="tpu"), 0)
        else:
            dist.all_reduce(torch.ones(4, device="tpu"))

    expect_error("ranks in different collectives (where an all_reduce is predicted)", different_collectives,
                 "the collective", "rank 1: BROADCAST")
    expect_error("all_to_all splits that do not pair up",
                 lambda: dist.all_to_all_single(torch.empty(W, device="tpu"), torch.ones(W, device="tpu"),
                                                [1] * W, [2, 0] + [1] * (W - 2) if RANK == 0 else [1] * W),
                 "split sizes", "rank 0 sends 2 elements to rank 0")

    @case("the group works after the errors")
    def _():
        both(lambda dev: values((3,), torch.float32, 36).to(dev), lambda t, g: (dist.all_reduce(t, group=g), [t])[1])

    dist.barrier()
    if failures:
        say("\n".join(failures))
        raise SystemExit(1)
    say(f"WORKER OK rank {RANK}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
