"""torch.tpu.ops.ragged_dot (tpu::ragged_dot and its weight gradient) against
a per-group torch.mm loop on the CPU: forward and both gradients, eager and
compiled, float32 and bfloat16 (the CPU loop in bfloat16, which accumulates
in float32 as the tpu rule does; assert_close's default tolerances for each
dtype), empty groups, sum(group_sizes) < M;
jax.lax.ragged_dot's semantics where JAX is installed; bad input."""
import math
import os
import re
import subprocess
import sys

import pytest
import torch
from torch.testing import assert_close

import torch_tpu

# (M, K, N, group sizes): empty groups, sum < M, one group, a group past a tile.
CASES = [
    (16, 8, 12, [3, 0, 5, 8]),
    (37, 6, 7, [3, 0, 20, 9, 1]),
    (40, 16, 8, [0, 0, 11, 0, 2, 0]),           # sum 13 < 40: rows 13.. are zero
    (9, 4, 5, [9]),
    (300, 32, 24, [0, 140, 3, 0, 17, 90, 0, 1]),  # groups spanning many tiles
    (24, 5, 3, [0, 0, 0]),                        # no rows at all
    (200, 12, 10, [0] * 5 + [190] + [0] * 10),    # one group far past the capacity: overflow tiles
]
IDS = [f"M{c[0]}-G{len(c[3])}" for c in CASES]


def loop_reference(x, w, sizes, transpose_rhs=False):
    """out rows of group g = x rows @ w[g]; rows past the sum stay zero."""
    parts, start = [], 0
    for g, n in enumerate(sizes):
        wg = w[g].t() if transpose_rhs else w[g]
        parts.append(x[start:start + n] @ wg)
        start += n
    n_out = w.shape[1] if transpose_rhs else w.shape[2]
    parts.append(x[start:].new_zeros((x.shape[0] - start, n_out)) * x[start:, :1])  # keeps x's grad defined
    return torch.cat(parts)


def inputs(m, k, n, sizes, dtype, seed=0, transpose_rhs=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(m, k, generator=g).to(dtype)
    shape = (len(sizes), n, k) if transpose_rhs else (len(sizes), k, n)
    w = torch.randn(shape, generator=g).to(dtype)
    dy = torch.randn(m, n, generator=g).to(dtype)
    return x, w, dy, torch.tensor(sizes, dtype=torch.int32)


def run(fn, x, w, dy, sizes, device, transpose_rhs=False):
    """fn's output and the gradients of <fn(x, w), dy> in x and w, on `device`."""
    xd = x.detach().to(device).requires_grad_()
    wd = w.detach().to(device).requires_grad_()
    rhs = wd.transpose(1, 2) if transpose_rhs else wd
    y = fn(xd, rhs, sizes.to(device))
    y.backward(dy.to(device))
    return y.detach().cpu(), xd.grad.cpu(), wd.grad.cpu()


def cpu_loop(x, rhs, sizes):
    return loop_reference(x, rhs, sizes.tolist())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_eager_forward_and_gradients_match_the_cpu_loop(case, dtype):
    m, k, n, sizes = case
    x, w, dy, gs = inputs(m, k, n, sizes, dtype)
    expect = run(cpu_loop, x, w, dy, gs, "cpu")
    got = run(torch.tpu.ops.ragged_dot, x, w, dy, gs, "tpu")
    for e, g, what in zip(expect, got, ("out", "d lhs", "d rhs")):
        assert g.dtype == dtype, what
        assert_close(g, e, msg=lambda s: f"{what}: {s}")
    assert got[0][sum(sizes):].eq(0).all()


def random_sizes(seed):
    """G in [1, 12], M in [1, 120]; sizes from routing-like draws with empty
    groups, summing to M or less."""
    g = torch.Generator().manual_seed(seed)
    groups = int(torch.randint(1, 13, (1,), generator=g))
    m = int(torch.randint(1, 121, (1,), generator=g))
    used = int(torch.randint(m // 2, m + 1, (1,), generator=g))
    probs = torch.rand(groups, generator=g) * (torch.rand(groups, generator=g) > 0.3)  # ~30% empty groups
    if probs.sum() == 0:
        probs[0] = 1
    ids = torch.multinomial(probs, used, replacement=True, generator=g) if used else torch.zeros(0, dtype=torch.long)
    return m, torch.bincount(ids, minlength=groups).tolist()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("seed", range(8))
def test_random_group_sizes_match_the_cpu_loop(seed, dtype):
    m, sizes = random_sizes(seed)
    x, w, dy, gs = inputs(m, 16, 12, sizes, dtype, seed=seed)
    expect = run(cpu_loop, x, w, dy, gs, "cpu")
    got = run(torch.tpu.ops.ragged_dot, x, w, dy, gs, "tpu")
    for e, g in zip(expect, got):
        assert_close(g, e)


# [E, out, in] weights take the row form while M <= 8 G (decoding: a few
# rows per expert) and the tiles above that; both, with empty groups.
DECODE_LIKE = (64, 32, 24, [5, 0, 9, 1, 0, 13, 2, 7, 0, 4, 8, 3, 0, 6, 1, 2])  # sum 61 < 64


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", [CASES[1], DECODE_LIKE, CASES[4]], ids=["rows-M37-G5", "rows-M64-G16", "tiles-M300-G8"])
def test_transposed_weights_are_read_in_place(case, dtype):
    # Transformers stores experts as [E, out, in]: rhs = w.transpose(1, 2).
    m, k, n, sizes = case
    x, w, dy, gs = inputs(m, k, n, sizes, dtype, seed=3, transpose_rhs=True)
    expect = run(cpu_loop, x, w, dy, gs, "cpu", transpose_rhs=True)
    got = run(torch.tpu.ops.ragged_dot, x, w, dy, gs, "tpu", transpose_rhs=True)
    for e, g in zip(expect, got):
        assert_close(g, e)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", [CASES[1], CASES[2], CASES[4]], ids=[IDS[1], IDS[2], IDS[4]])
def test_compiled_forward_and_gradients_match_the_cpu_loop(case, dtype):
    torch._dynamo.reset()
    m, k, n, sizes = case
    x, w, dy, gs = inputs(m, k, n, sizes, dtype, seed=5)

    def f(a, b, s):
        return torch.tpu.ops.ragged_dot(a * 1, b, s) + 1

    compiled = torch.compile(f, backend="tpu", fullgraph=True)
    torch_tpu.reset_metrics()
    expect = run(lambda a, b, s: cpu_loop(a, b, s) + 1, x, w, dy, gs, "cpu")
    got = run(compiled, x, w, dy, gs, "tpu")
    for e, g in zip(expect, got):
        assert_close(g, e)
    m1 = torch_tpu.metrics()
    assert m1["graph_compiles"] == 2  # forward and backward, each one program (a graph fallback would raise here)
    # New group sizes are values, not shapes: no recompile.
    other = torch.tensor(list(reversed(sizes)), dtype=torch.int32)
    expect = run(lambda a, b, s: cpu_loop(a, b, s) + 1, x, w, dy, other, "cpu")
    got = run(compiled, x, w, dy, other, "tpu")
    for e, g in zip(expect, got):
        assert_close(g, e)
    assert torch_tpu.metrics()["graph_compiles"] == 2


def test_group_sizes_never_reach_the_host():
    x, w, _, gs = inputs(300, 32, 24, CASES[4][3], torch.float32)
    x, w, gs = x.to("tpu"), w.to("tpu"), gs.to("tpu")
    torch.tpu.ops.ragged_dot(x, w, gs)
    torch.tpu.synchronize()
    before = torch_tpu.metrics()["device_to_host_bytes"]
    for _ in range(3):
        y = torch.tpu.ops.ragged_dot(x, w, gs)
        torch.ops.tpu.ragged_dot_weight_grad(x, y, gs)
    torch.tpu.synchronize()
    assert torch_tpu.metrics()["device_to_host_bytes"] == before


def test_int64_group_sizes_and_sum_past_m():
    # Rows are assigned by the running sum: a sum past M cuts the last groups.
    x, w, _, _ = inputs(10, 4, 3, [0] * 3, torch.float32)
    for sizes in ([4, 0, 9], [12, 1, 1], [0, 10, 0]):
        gs = torch.tensor(sizes, dtype=torch.int64)
        clipped, left = [], 10
        for s in sizes:
            clipped.append(min(s, left))
            left -= clipped[-1]
        got = torch.tpu.ops.ragged_dot(x.to("tpu"), w.to("tpu"), gs.to("tpu")).cpu()
        assert_close(got, loop_reference(x, w, clipped))


def test_matches_jax_ragged_dot():
    jax = pytest.importorskip("jax")
    import numpy as np
    jnp = jax.numpy
    for m, k, n, sizes in CASES + [(10, 4, 3, [4, 0, 9])]:
        x, w, _, gs = inputs(m, k, n, sizes, torch.float32, seed=7)
        want = np.asarray(jax.lax.ragged_dot(jnp.asarray(x.numpy()), jnp.asarray(w.numpy()),
                                             jnp.asarray(gs.numpy())))
        got = torch.tpu.ops.ragged_dot(x.to("tpu"), w.to("tpu"), gs.to("tpu")).cpu()
        assert_close(got, torch.from_numpy(np.array(want)), rtol=1e-5, atol=1e-5)


def test_empty_shapes():
    for m, k, n, g in [(0, 4, 3, 2), (5, 0, 3, 2), (5, 4, 0, 2), (5, 4, 3, 0)]:
        x, w = torch.randn(m, k), torch.randn(g, k, n)
        gs = torch.full((g,), 1, dtype=torch.int32)
        got = torch.tpu.ops.ragged_dot(x.to("tpu"), w.to("tpu"), gs.to("tpu")).cpu()
        assert got.shape == (m, n) and got.eq(0).all()


@pytest.mark.parametrize("bad", [
    ("lhs must be 2-d", lambda x, w, s: (x[0], w, s)),
    ("rhs must be 3-d", lambda x, w, s: (x, w[0], s)),
    ("group_sizes must be a 1-d integer", lambda x, w, s: (x, w, s.float())),
    ("group_sizes must be a 1-d integer", lambda x, w, s: (x, w, s[None])),
    ("groups, expected", lambda x, w, s: (x, w, s[:2])),
    ("same dtype", lambda x, w, s: (x, w.double(), s)),
    ("lhs must be float16, bfloat16, float32 or float64", lambda x, w, s: (x.long(), w.long(), s)),
    ("differ in K", lambda x, w, s: (x[:, :3], w, s)),
], ids=lambda b: b[0] if isinstance(b, tuple) else None)
def test_bad_input_names_the_op(bad):
    message, edit = bad
    x, w, _, gs = inputs(16, 8, 12, CASES[0][3], torch.float32)
    args = edit(x.to("tpu"), w.to("tpu"), gs.to("tpu"))
    with pytest.raises(RuntimeError, match=r"tpu\.ragged_dot: .*" + message):
        torch.tpu.ops.ragged_dot(*args)


def test_negative_group_sizes_raise_at_synchronization():
    x, w, _, _ = inputs(8, 4, 3, [0, 0], torch.float32)
    gs = torch.tensor([3, -1], dtype=torch.int32)
    with pytest.raises(ValueError, match="ragged_dot.*group_sizes must be non-negative"):
        torch.tpu.ops.ragged_dot(x.to("tpu"), w.to("tpu"), gs.to("tpu"))
        torch.tpu.synchronize()


def test_reference_cpu_kernel_is_the_loop():
    m, k, n, sizes = CASES[1]
    x, w, _, gs = inputs(m, k, n, sizes, torch.float32)
    assert_close(torch.tpu.ops.ragged_dot(x, w, gs), loop_reference(x, w, sizes))


@pytest.fixture
def programs(tmp_path):
    """The texts of the programs compiled inside the test."""
    torch_tpu._C._set_program_dump_dir(str(tmp_path))
    yield lambda: [p.read_text() for p in tmp_path.glob("*.mlir")]
    torch_tpu._C._set_program_dump_dir("")


def dot_flops(text):
    """Multiply-adds of each dot_general in a program (a loop body's once)."""
    flops = []
    for line in text.splitlines():
        if '"stablehlo.dot_general"' not in line:
            continue
        contract = [int(d) for d in re.search(r"lhs_contracting_dimensions = \[([0-9, ]+)\]", line).group(1).split(",")]
        shapes = [[int(d) for d in t.split("x")[:-1]] for t in re.findall(r"tensor<([0-9x]+x\w+)>", line)]
        lhs, result = shapes[0], shapes[-1]
        flops.append(math.prod(result) * math.prod(lhs[d] for d in contract))
    return flops


def test_work_is_tiles_not_the_dense_expansion(programs):
    # 512 rows in 64 groups of 8: the products are tiles of 8 rows times one
    # group's block inside while loops (the weight gradient: 8 rows summed into
    # a [K, N] block), never the dense G*M*K*N (64x the ideal M*K*N) of a
    # masked product; a program holds no dot of more than a few tiles' work.
    m, k, n, g = 512, 32, 24, 64
    x, w = torch.randn(m, k).to("tpu"), torch.randn(g, k, n).to("tpu")
    gs = torch.full((g,), m // g, dtype=torch.int32).to("tpu")
    with torch.tpu.set_eager_mode("strict"):  # one program per op (fused mode would join the two)
        y = torch.tpu.ops.ragged_dot(x, w, gs)
        torch.ops.tpu.ragged_dot_weight_grad(x, y, gs)
    torch.tpu.synchronize()
    texts = [t for t in programs() if "dot_general" in t]
    assert len(texts) == 2
    for text in texts:
        assert "stablehlo.while" in text
        assert sum(dot_flops(text)) <= m * k * n // 16, dot_flops(text)


def test_few_rows_per_group_take_one_row_at_a_time(programs):
    # [E, out, in] weights with 8 rows per group (decoding) in float16 (the
    # host kernel below takes float32 and bfloat16): a loop over the rows, each
    # a vector times its group's block, read in place (no transpose of a
    # block, no dot of more than one row's work).
    m, k, n, g = 512, 32, 24, 64
    x, w = torch.randn(m, k).half(), torch.randn(g, n, k).half()
    gs = torch.full((g,), m // g, dtype=torch.int32).to("tpu")
    with torch.tpu.set_eager_mode("strict"):
        y = torch.tpu.ops.ragged_dot(x.to("tpu"), w.to("tpu").transpose(1, 2), gs)
    assert_close(y.cpu(), loop_reference(x, w.transpose(1, 2), [m // g] * g))
    (text,) = [t for t in programs() if "dot_general" in t]
    assert "stablehlo.while" in text and "stablehlo.transpose" not in text
    assert dot_flops(text) == [k * n]


# The CPU plugin runs that form in float32 and bfloat16 as one call of a host kernel
# (csrc/host_kernels/ragged_dot_rows.cpp, an XLA FFI custom call): groups of
# more and fewer than its 8-row tiles, K not a multiple of its 8 lanes (and
# below 8), empty groups, sum(group_sizes) < M and > M, int64 sizes, and
# shapes big enough that it splits the groups across the plugin's threads.
HOST_KERNEL_CASES = [
    (35, 6, 7, [3, 0, 20, 9, 1], torch.int32),        # sum 33 < 35
    (64, 13, 10, DECODE_LIKE[3], torch.int64),
    (41, 16, 8, [0, 0, 11, 0, 2, 0], torch.int32),
    (20, 9, 5, [10, 15, 4], torch.int32),             # sum 29 > 20: the last groups are cut at M
    (512, 256, 96, "random", torch.int32),           # ~12M multiply-adds: the threaded path
    (512, 128, 256, [8] * 64, torch.int64),          # a Qwen3-MoE down projection
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", HOST_KERNEL_CASES, ids=lambda c: f"M{c[0]}-K{c[1]}-N{c[2]}" if isinstance(c, tuple) else None)
def test_host_kernel_matches_the_cpu_loop(case, dtype, programs):
    assert torch_tpu._C._host_kernels_state() == "on"
    m, k, n, sizes, size_dtype = case
    if sizes == "random":
        sizes = torch.bincount(torch.randint(0, 64, (500,), generator=torch.Generator().manual_seed(5)),
                               minlength=64).tolist()  # empty groups likely, sum 500 < 512
    x, w, dy, _ = inputs(m, k, n, sizes, dtype, seed=7, transpose_rhs=True)
    clipped, left = [], m  # a sum past M cuts the last groups
    for s in sizes:
        clipped.append(min(s, left))
        left -= clipped[-1]
    expect = run(cpu_loop, x, w, dy, torch.tensor(clipped), "cpu", transpose_rhs=True)
    with torch.tpu.set_eager_mode("strict"):
        got = run(torch.tpu.ops.ragged_dot, x, w, dy, torch.tensor(sizes, dtype=size_dtype), "tpu",
                  transpose_rhs=True)
    for e, g in zip(expect, got):
        # float32 sums of up to max(K, M) products in another order than the
        # CPU's: rounding grows with the length (assert_close's defaults up to 32 terms).
        scale = max(1.0, max(k, m) / 32)
        if dtype == torch.float32:
            assert_close(g, e, rtol=1.3e-6, atol=1e-5 * scale)
        else:
            assert_close(g, e, rtol=1.6e-2, atol=1e-5 * scale)
    forward = [t for t in programs() if "torch_tpu_ragged_dot_rows" in t]
    assert forward and all("dot_general" not in t and "stablehlo.while" not in t for t in forward)


def test_host_kernel_reads_views_and_runs_compiled():
    # A non-contiguous lhs (every other column of a wider tensor) and weights
    # sliced out of a bigger [E, out, in] tensor; eager and compiled agree with the loop.
    m, k, n, sizes = 48, 24, 16, [7, 0, 12, 9, 3, 0, 8, 9]
    g = torch.Generator().manual_seed(11)
    wide, big_w = torch.randn(m, 2 * k, generator=g), torch.randn(len(sizes) + 2, n + 3, k, generator=g)
    x, w = wide[:, ::2], big_w[1:-1, 2:-1]
    gs = torch.tensor(sizes, dtype=torch.int32)
    expect = loop_reference(x, w.transpose(1, 2), sizes)
    xt, wt, gt = wide.to("tpu")[:, ::2], big_w.to("tpu")[1:-1, 2:-1], gs.to("tpu")
    assert not xt.is_contiguous() and not wt.is_contiguous()
    assert_close(torch.tpu.ops.ragged_dot(xt, wt.transpose(1, 2), gt).cpu(), expect)
    f = torch.compile(lambda a, b, c: torch.tpu.ops.ragged_dot(a * 1, b.transpose(1, 2), c) + 1, backend="tpu",
                      fullgraph=True)
    assert_close(f(xt, wt, gt).cpu(), expect + 1)


def test_host_kernel_negative_sizes_raise_at_synchronization():
    x, w = torch.randn(16, 8).to("tpu"), torch.randn(3, 4, 8).to("tpu")
    gs = torch.tensor([6, -2, 9], dtype=torch.int32).to("tpu")
    with pytest.raises(ValueError, match="ragged_dot.*group_sizes must be non-negative"):
        torch.tpu.ops.ragged_dot(x, w.transpose(1, 2), gs)
        torch.tpu.synchronize()


def test_without_host_kernels_the_decode_form_is_the_row_loop(tmp_path):
    # TORCH_TPU_HOST_KERNELS=0 (and plugins other than the CPU one): the same
    # float32 product lowers to the row loop, with the same results.
    script = f"""
import torch, torch_tpu
torch_tpu._C._set_program_dump_dir({str(tmp_path)!r})
print(torch_tpu._C._host_kernels_state())
g = torch.Generator().manual_seed(0)
x, w = torch.randn(64, 13, generator=g), torch.randn(16, 10, 13, generator=g)
sizes = {DECODE_LIKE[3]!r}
y = torch.tpu.ops.ragged_dot(x.to("tpu"), w.to("tpu").transpose(1, 2), torch.tensor(sizes).to("tpu")).cpu()
parts, start = [], 0
for e, c in enumerate(sizes):
    parts.append(x[start:start + c] @ w[e].t()); start += c
parts.append(torch.zeros(64 - start, 10))
torch.testing.assert_close(y, torch.cat(parts))
print("matches")
"""
    env = dict(os.environ, TORCH_TPU_HOST_KERNELS="0", TORCH_TPU_COMPILE_CACHE="0")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["off", "(TORCH_TPU_HOST_KERNELS=0)", "matches"]
    texts = [p.read_text() for p in tmp_path.glob("*.mlir")]
    rows = [t for t in texts if "dot_general" in t]
    assert rows and all("stablehlo.while" in t for t in rows)
    assert not any("torch_tpu_ragged_dot_rows" in t for t in texts)
