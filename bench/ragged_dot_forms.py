"""Which form of a ragged product XLA's CPU backend runs fastest, and so which tpu::ragged_dot takes (issue 13).

    python bench/ragged_dot_forms.py [--repeats N]

One MoE-decode-sized ragged product, lhs [512, 256] in 64 groups (random routing, 1..15 rows each)
times Transformers-layout expert weights [64, out 256, in 256] (x_g @ W_g^T), float32, HIGHEST precision.
Prints the median time of:
  * torch_tpu's tpu::ragged_dot (one program, eager; with 8 rows per group its decode form: on the
    CPU plugin the host kernel csrc/host_kernels/ragged_dot_rows.cpp, with TORCH_TPU_HOST_KERNELS=0
    the row form below);
  * the same computation written other ways in JAX, jitted on the very PJRT plugin the tpu device
    uses (xla_cpu_pjrt), so each line is what XLA's CPU backend makes of that formulation;
  * the parts: 64 weight-block copies, plain and transposed, and 96 [8, 256] x [256, 256] dots;
  * PyTorch CPU's grouped_mm and one dense [512, 256] x [256, 256] mm (the FLOPs of the ideal).
Every variant's result is checked against a per-group NumPy product. Needs jax (pip install 'torch_tpu[jax]').
"""
import argparse
import os
import statistics
import time

import numpy as np
import torch

import torch_tpu  # noqa: F401  (the tpu device)
from jax_plugin import plugin_device

M, K, N, G, T = 512, 256, 256, 64, 8
# The one form given the weights already stored [G, K, N] (transposed once, outside the timed call).
STORED_KN = "weights stored [G, K, N]: plain blocks"


def median_ms(fn, repeats):
    fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e3


def jax_forms(jax, jnp, lax):
    hi = lax.Precision.HIGHEST

    def bounds(s):
        ends = jnp.cumsum(s)
        return ends - s, ends

    def write_tile(out, y, start, row, end):
        r = start + jnp.arange(y.shape[0])
        keep = (r >= row) & (r < end)
        cur = lax.dynamic_slice(out, (start, 0), y.shape)
        return lax.dynamic_update_slice(out, jnp.where(keep[:, None], y, cur), (start, 0))

    def group_loop(block_of, product, t=T):
        """Outer loop over groups, inner loop over row tiles of t rows (torch_tpu's structure)."""
        def f(x, w, s):
            lo, hi_ = bounds(s)

            def per_group(g, out):
                wg = block_of(w, g)

                def per_tile(c):
                    row, out = c
                    start = jnp.minimum(row, M - t)
                    y = product(lax.dynamic_slice(x, (start, 0), (t, K)), wg)
                    return row + t, write_tile(out, y, start, row, hi_[g])
                return lax.while_loop(lambda c: c[0] < hi_[g], per_tile, (lo[g], out))[1]
            return lax.fori_loop(0, G, per_group, jnp.zeros((M, N), jnp.float32))
        return f

    def block(w, g):
        return lax.dynamic_index_in_dim(w, g, 0, keepdims=False)  # [N, K]

    def capacity(x, w, s, c=16):
        """Every group's first c rows in one batched dot over the weights in place (rows past c dropped:
        a lower bound on this formulation's cost)."""
        lo, hi_ = bounds(s)
        rows = lo[:, None] + jnp.arange(c)[None, :]
        valid = rows < hi_[:, None]
        tiles = jnp.take(x, jnp.minimum(rows, M - 1), axis=0)
        y = lax.dot_general(tiles, w, (((2,), (2,)), ((0,), (0,))), precision=hi)
        y = jnp.where(valid[..., None], y, 0)
        return jnp.zeros((M + 1, N), jnp.float32).at[jnp.where(valid, rows, M).reshape(-1)].add(
            y.reshape(-1, N))[:M]

    def pre_transposed(x, w, s):
        wt = jnp.swapaxes(w, 1, 2)  # the whole [G, K, N] once, then plain blocks
        return group_loop(block, lambda xt, wg: jnp.dot(xt, wg, precision=hi))(x, wt, s)

    def rows(x, w, s):
        """One loop over the rows: each row times its group's [N, K] block, read in place (XLA fuses the
        vector-matrix product with both slices)."""
        group = jnp.searchsorted(jnp.cumsum(s), jnp.arange(M), side="right")

        def per_row(r, out):
            y = lax.dot_general(lax.dynamic_slice(x, (r, 0), (1, K)), block(w, group[r]), (((1,), (1,)), ((), ())),
                                precision=hi)
            return lax.dynamic_update_slice(out, y, (r, 0))
        return lax.fori_loop(0, M, per_row, jnp.zeros((M, N), jnp.float32))

    forms = {
        "rows: vector x block in place (ours, M/G <= 8)": rows,
        "transposed block per group (ours when M/G > 8)": group_loop(
            lambda w, g: block(w, g).T, lambda xt, wg: jnp.dot(xt, wg, precision=hi)),
        "untransposed block, contract its minor dim": group_loop(
            block, lambda xt, wg: lax.dot_general(xt, wg, (((1,), (1,)), ((), ())), precision=hi)),
        "block as the dot's lhs against a tile^T": group_loop(
            block, lambda xt, wg: lax.dot_general(wg, xt, (((1,), (1,)), ((), ())), precision=hi).T),
        "per-group transposed block, 16-row tiles": group_loop(
            lambda w, g: block(w, g).T, lambda xt, wg: jnp.dot(xt, wg, precision=hi), t=16),
        "whole weight transposed first": pre_transposed,
        STORED_KN: group_loop(block, lambda xt, wg: jnp.dot(xt, wg, precision=hi)),
        "capacity 16: one batched dot (lower bound)": capacity,
    }
    parts = {
        "part: 64 plain block copies": lambda x, w, s: lax.fori_loop(
            0, G, lambda g, a: a + block(w, g), jnp.zeros((N, K), jnp.float32)),
        "part: 64 transposed block copies": lambda x, w, s: lax.fori_loop(
            0, G, lambda g, a: a + block(w, g).T, jnp.zeros((K, N), jnp.float32)),
        "part: 96 dots [8,256]x[256,256] (one block)": lambda x, w, s: (lambda wt: lax.fori_loop(
            0, 96, lambda i, a: a + jnp.dot(lax.dynamic_slice(x, (i, 0), (T, K)), wt, precision=hi),
            jnp.zeros((T, N), jnp.float32)))(w[1].T + 0),
    }
    return forms, parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=21)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((M, K)).astype(np.float32)
    w = (rng.standard_normal((G, N, K)) * 0.05).astype(np.float32)
    idx = np.sort(rng.integers(0, G, M))
    sizes = np.bincount(idx, minlength=G).astype(np.int32)
    ref = np.concatenate([x[idx == g] @ w[g].T for g in range(G)])
    print(f"lhs [{M}, {K}] in {G} groups of {sizes.min()}..{sizes.max()} rows, weights [{G}, {N}, {K}] (x_g @ W_g^T)")

    def show(name, ms, err=None):
        print(f"  {name:46s} {ms:8.3f} ms" + ("" if err is None else f"   max err {err:.1e}"))

    xt, wt, st = (torch.from_numpy(a).to("tpu") for a in (x, w, sizes.astype(np.int64)))
    out = {}

    def tpu_call():
        out["y"] = torch.ops.tpu.ragged_dot(xt, wt, st, True)
        torch.tpu.synchronize()
    ms = median_ms(tpu_call, args.repeats)
    show("torch_tpu tpu::ragged_dot", ms, float(np.abs(out["y"].cpu().numpy() - ref).max()))

    try:
        import jax
        import jax.numpy as jnp
        from jax import lax
    except ImportError as e:  # no JAX: say so, measure the rest
        print(f"JAX forms not measured: {e}")
        dev = None
    else:
        dev = plugin_device(jax)  # None (said) where this JAX refuses the plugin
    if dev is not None:
        xd, wd, sd = jax.device_put((x, w, sizes), dev)
        wd_kn = jax.device_put(np.ascontiguousarray(np.swapaxes(w, 1, 2)), dev)
        forms, parts = jax_forms(jax, jnp, lax)
        print("JAX on xla_cpu_pjrt:")
        for name, f in list(forms.items()) + list(parts.items()):
            jf = jax.jit(f)
            res = {}
            wf = wd_kn if name == STORED_KN else wd
            ms = median_ms(lambda: res.__setitem__("y", jf(xd, wf, sd).block_until_ready()), args.repeats)
            err = None if name.startswith("part") else float(np.abs(np.asarray(res["y"]) - ref).max())
            if name.startswith("capacity"):
                err = None  # rows past the capacity are dropped: timed, not a result
            show(name, ms, err)

    print("PyTorch CPU:")
    xc, wc = torch.from_numpy(x), torch.from_numpy(w)
    offs = torch.from_numpy(np.cumsum(sizes).astype(np.int32))
    show("grouped_mm", median_ms(lambda: torch._grouped_mm(xc, wc.transpose(1, 2), offs=offs), args.repeats),
         float(np.abs(torch._grouped_mm(xc, wc.transpose(1, 2), offs=offs).numpy() - ref).max()))
    show("dense mm [512,256]x[256,256] (the ideal's FLOPs)", median_ms(lambda: xc @ wc[0].T, args.repeats))
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
