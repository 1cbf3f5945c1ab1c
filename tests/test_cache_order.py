"""Cache-order property test (issue 18, item 3).

The eager executor compiles one program per cache key; a key that misses a
fact the result depends on lets a later call reuse a program built for another
call (`c0 - t0` running `t0 - c0`'s program). Here every lowered op with several
operands is called with each operand as a device tensor, a 0-d device tensor, a
0-d CPU tensor (several dtypes) or a Python scalar (int/float/bool/complex), in
both positions, with int/float/bool tensors and the default dtype switched
between float32 and float64 (cases in tests/cache_order_cases.py). The calls run

  * in one process, forward and then reversed (each order compiles some keys
    first and hits them later), every call compared with the CPU: exact dtype,
    assert_close values, the same exception type where the CPU raises;
  * in a fresh process in a seeded shuffled order, compared bitwise with the
    in-process results.

A difference seen in only some orders is a cache key gap; one seen in every
order (a fresh process too) is a lowering rule bug. Calls that reach no tpu
lowering (the CPU fallback, an error under TORCH_TPU_FALLBACK=error) are not
counted as native and are listed in a warning, never skipped silently.
"""
import collections
import os
import re
import subprocess
import sys
import time
import warnings

import pytest
import torch

import torch_tpu

sys.path.insert(0, os.path.dirname(__file__))
import cache_order_cases as cases_mod  # noqa: E402

MIN_OPS = 150
SHUFFLE = "shuffle:20261203"

# CPU-parity differences the harness found that remain (rule-level: the same
# in every order and in a fresh process), each with why it is still open. Any
# difference not listed here, and every order-dependent one (a cache-key gap),
# fails the test. Empty: every call matches the CPU.
KNOWN_CPU_DIFFERENCES = {}


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")


def test_known_repros():
    """The two calls of issue 18 that hit the program of the call before them."""
    t0 = torch.tensor([1.0, 2.0], device="tpu")
    c0 = torch.tensor(10.0)
    torch.testing.assert_close((t0 - c0).cpu(), torch.tensor([-9.0, -8.0]))
    torch.testing.assert_close((c0 - t0).cpu(), torch.tensor([9.0, 8.0]))
    y = torch.tensor([1, 2], device="tpu")
    assert (y * 1.5).dtype == torch.float32
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        r = y * 1.5
        assert r.dtype == torch.float64
        torch.testing.assert_close(r.cpu(), torch.tensor([1.5, 3.0], dtype=torch.float64))
    finally:
        torch.set_default_dtype(old)


def _fallback_op(err):
    m = re.search(r"(aten::\S+) has no tpu lowering", err.msg)
    return m.group(1) if m else err.msg[:80]


def _load_fresh(path):
    data = torch.load(path, weights_only=False)
    results = {}
    for k, (v, where) in data["results"].items():
        if isinstance(v, tuple) and len(v) == 3 and v[0] == "__error__":
            e = cases_mod.Error.__new__(cases_mod.Error)
            e.type, e.msg = v[1], v[2]
            v = e
        results[k] = (v, where)
    return data, results


def _last_line(path):
    try:
        with open(path) as f:
            lines = f.read().splitlines()
        return lines[-1] if lines else "(none)"
    except OSError:
        return "(none)"


def test_cache_order(tmp_path):
    started = time.time()
    out = tmp_path / "fresh.pt"
    progress = tmp_path / "fresh_progress.txt"
    env = dict(os.environ, TORCH_TPU_FALLBACK="error", CACHE_ORDER_PROGRESS=str(progress))
    # The fresh process runs concurrently with this one (the machine has 2 cores).
    fresh = subprocess.Popen(
        [sys.executable, os.path.join(os.path.dirname(__file__), "cache_order_cases.py"),
         "--order", SHUFFLE, "--out", str(out)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # OpInfo samples and ops warn a lot; recording thousands of warnings is slow.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cases = cases_mod.all_cases()
            prints = cases_mod.case_fingerprints(cases)
            by_id = {c.id: c for c in cases}
            ref = {c.id: cases_mod.run(c, "cpu") for c in cases}
            fallbacks_before = dict(torch_tpu.metrics()["fallbacks_by_op"])

            runs, compiled = {}, {}
            for order in ("forward", "reverse"):
                runs[order], compiled[order] = cases_mod.run_in_order(cases, order)
            fallbacks_after = dict(torch_tpu.metrics()["fallbacks_by_op"])
        fresh_log, _ = fresh.communicate(timeout=600)
    finally:
        if fresh.poll() is None:
            fresh.kill()
            fresh.wait()
    if fresh.returncode != 0:
        pytest.fail(f"the fresh process (order {SHUFFLE}) failed with exit code {fresh.returncode} "
                    f"while running {_last_line(progress)!r}:\n{fresh_log[-3000:]}")
    data, fresh_results = _load_fresh(out)
    # Cases the fresh process generated identically (OpInfo sample order can
    # vary between processes, e.g. meshgrid's); the others are listed, and
    # checked in-process only.
    same = {k for k, v in prints.items() if data["fingerprints"].get(k) == v}
    not_fresh = sorted(set(prints) - same)
    assert len(not_fresh) <= len(prints) // 50, f"the fresh process generated different cases: {not_fresh[:20]}"
    runs["fresh"] = fresh_results

    # Calls that reach no tpu lowering where the CPU computes a result.
    not_native = collections.defaultdict(set)
    for c in cases:
        for order in runs:
            if c.id not in runs[order]:  # generated differently in the fresh process (listed below)
                continue
            r = runs[order][c.id][0]
            if cases_mod.is_fallback_error(r):
                not_native[_fallback_op(r)].add(c.op)

    failures = []
    known_seen = set()
    for c in cases:
        diffs = {}
        for order in runs:
            if c.id not in runs[order] or (order == "fresh" and c.id not in same):
                continue
            got = runs[order][c.id]
            if cases_mod.is_fallback_error(got[0]):
                continue   # no tpu lowering for this variant: listed in the warning, not compared
            d = cases_mod.compare(got, ref[c.id])
            if d:
                diffs[order] = d
        bitwise = None
        if c.id in same and not cases_mod.same_bits(runs["forward"][c.id], runs["fresh"][c.id]):
            if not (cases_mod.is_fallback_error(runs["forward"][c.id][0]) and
                    cases_mod.is_fallback_error(runs["fresh"][c.id][0])):
                bitwise = (f"in-process (forward) {_brief(runs['forward'][c.id])} != "
                           f"fresh process {_brief(runs['fresh'][c.id])}")
        if not diffs and bitwise is None:
            continue
        if diffs and len(diffs) == len(runs) - (c.id not in same):
            kind = "(b) wrong in every order, a fresh process too: lowering rule"
            if bitwise is None and c.id in KNOWN_CPU_DIFFERENCES:
                known_seen.add(c.id)
                continue
        else:
            kind = "(a) order-dependent: cache key gap"
        lines = [f"{kind}: {c.id}"]
        for order, d in diffs.items():
            reused = "" if compiled.get(order, {}).get(c.id) or order == "fresh" or len(diffs) == len(runs) else \
                " (compiled nothing: reused a program" + _earlier(cases, order, c, compiled) + ")"
            lines.append(f"    order {order if order != 'fresh' else 'fresh process ' + SHUFFLE}: {d}{reused}")
        ok_orders = [o for o in runs if o not in diffs]
        if diffs and ok_orders:
            lines.append(f"    right in order(s): {', '.join(ok_orders)}")
        if bitwise:
            lines.append(f"    bitwise: {bitwise}")
        failures.append(lines)

    native_ops = collections.Counter(op for r in compiled["forward"].values() for op in r)
    elapsed = time.time() - started
    summary = (f"cache order: {len(cases)} calls x 3 orders (forward, reverse, fresh {SHUFFLE}), "
               f"{len(native_ops)} ATen ops/overloads compiled natively, {len(failures)} differing calls "
               f"(plus {len(known_seen)} known CPU-parity differences of KNOWN_CPU_DIFFERENCES), {elapsed:.0f} s")
    fixed = sorted(set(KNOWN_CPU_DIFFERENCES) - known_seen)
    if fixed:
        summary += f"\nknown differences no longer seen (remove them from KNOWN_CPU_DIFFERENCES): {fixed}"
    print(summary)
    print("native ops:", " ".join(sorted(native_ops)))
    if not_fresh:
        warnings.warn(f"cache order: {len(not_fresh)} calls generated differently in the fresh process, "
                      f"checked in-process only: {not_fresh}")
    if not_native:
        text = "; ".join(f"{k} (from {', '.join(sorted(v)[:4])}{'...' if len(v) > 4 else ''})"
                         for k, v in sorted(not_native.items()))
        warnings.warn(f"cache order: variants not counted, no tpu lowering (CPU fallback) for: {text}")
    new_fallbacks = {k: v - fallbacks_before.get(k, 0) for k, v in fallbacks_after.items()
                     if v != fallbacks_before.get(k, 0)}
    assert not new_fallbacks, f"ops ran on the CPU fallback: {new_fallbacks}"
    if failures:
        failures.sort(key=lambda ls: ls[0])
        shown = failures[:60]
        by_op = collections.Counter(by_id[ls[0].split(": ", 2)[-1]].op if ls[0].split(": ", 2)[-1] in by_id
                                    else "?" for ls in failures)
        by_kind = collections.Counter(ls[0].split(":", 1)[0] for ls in failures)
        full = tmp_path / "cache_order_failures.txt"
        full.write_text("\n".join("\n".join(ls) for ls in failures) + "\n")
        summary += f"\nall {len(failures)} differences: {full}"
        pytest.fail(f"{summary}\nby category: {dict(by_kind)}\nby op: {dict(by_op)}\n" + "\n".join("\n".join(ls) for ls in shown) +
                    (f"\n... and {len(failures) - len(shown)} more" if len(failures) > len(shown) else ""))
    if not os.environ.get("CACHE_ORDER_ONLY"):  # (a filtered run checks only the ops it picked)
        assert len(native_ops) >= MIN_OPS, f"only {len(native_ops)} ATen ops ran natively: {sorted(native_ops)}"


def _brief(result):
    v, _ = result
    return repr(v) if isinstance(v, cases_mod.Error) else cases_mod._brief(v)


_SEQ = {}


def _earlier(cases, order, case, compiled):
    """The latest call before `case` in `order` that compiled the same ATen op: the likely owner of the program."""
    seq = _SEQ.setdefault(order, cases_mod.ordered(cases, order))
    i = _SEQ.setdefault(order + "#index", {c.id: k for k, c in enumerate(seq)})[case.id]
    ops = set(compiled[order].get(case.id) or [])
    for prev in reversed(seq[:i]):
        if prev.op == case.op and compiled[order].get(prev.id):
            if not ops or ops & set(compiled[order][prev.id]):
                return f"; latest earlier compile of this op: {prev.id}"
    return ""
