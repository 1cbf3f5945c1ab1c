"""Run Transformers' own model tests on the `tpu` device and summarize them.

Usage:
    python tests/hf/run_transformers_suite.py PATH_TO_TRANSFORMERS_CHECKOUT
        [--families qwen3,llama,gemma3,qwen3_moe,bert] [--test-timeout 300]
        [--family-timeout 3600] [--out DIR] [-k EXPR] [--top 15]

Get a checkout that matches the installed transformers (5.23.0):
    git clone --depth 1 --branch v5.23.0 https://github.com/huggingface/transformers
Its test modules also need: pip install parameterized pytest-timeout pytest-xdist httpx
(pytest-xdist only because the checkout's conftest.py registers an xdist hook;
tests run in one process).  The checkout's conftest.py puts its src/ first on
sys.path, so the checkout's version must match the installed one.

For each family this runs tests/models/<family>/test_modeling_<family>.py in a
pytest subprocess (cwd = the checkout, `-q -rf -p no:cacheprovider`, a JUnit XML
per family in --out) with TRANSFORMERS_TEST_DEVICE=tpu; `import torch`
autoloads torch_tpu.  Nothing is downloaded: HF_HUB_OFFLINE=1 and
TRANSFORMERS_OFFLINE=1, and RUN_SLOW / RUN_PIPELINE_TESTS are removed from the
environment, so hub-weight integration tests skip (they are counted as skipped).
CPU fallbacks stay allowed (torch_tpu's default), so an op without a lowering
runs on the CPU; the ops that fell back are listed from torch_tpu.metrics().

A small pytest plugin (written to a temporary folder) streams every test's
outcome to a JSON-lines file, so a hard crash or a hang loses only the test in
flight: that test is counted as failed ("crashed"/"hung") and pytest is
restarted on the remaining tests of the family.  pytest-timeout, when it is
installed, bounds each test (--test-timeout); --family-timeout bounds each
pytest process.

Output: a per-family table (passed, failed, errors, skipped, xfailed, crashed),
the top failure reasons grouped by exception message (digits masked for
grouping, one raw example kept), the top skip reasons, the ops that fell back to
the CPU, and as the last line `N passed, N failed` (failed counts failures,
setup/teardown errors, crashes and hangs; skipped tests are in neither).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FAMILIES = ("qwen3", "llama", "gemma3", "qwen3_moe", "bert")

# The plugin runs inside the pytest subprocess.  It appends one JSON object
# per event to $TPU_SUITE_RESULTS and drops the test ids listed in
# $TPU_SUITE_DONE (tests already run before a crash).
PLUGIN = r'''
import json, os

_out = open(os.environ["TPU_SUITE_RESULTS"], "a", buffering=1)
_done = set()
if os.environ.get("TPU_SUITE_DONE") and os.path.exists(os.environ["TPU_SUITE_DONE"]):
    with open(os.environ["TPU_SUITE_DONE"]) as f:
        _done = {line.rstrip("\n") for line in f if line.strip()}


def _fallbacks():
    try:
        import torch_tpu
        m = torch_tpu.metrics()
    except Exception:
        return {}
    out = {}
    for k, v in m.items():
        if "fallback" in k and not k.startswith("graph_"):
            if isinstance(v, dict):
                out.update({f"{k}:{op}": n for op, n in v.items()})
            elif isinstance(v, (int, float)):
                out[k] = v
    return out


_before = {}


def pytest_collection_modifyitems(session, config, items):
    if _done:
        keep = [it for it in items if it.nodeid not in _done]
        config.hook.pytest_deselected(items=[it for it in items if it.nodeid in _done])
        items[:] = keep
    _out.write(json.dumps({"ev": "collected", "n": len(items)}) + "\n")


def pytest_collectreport(report):
    if report.failed:
        _out.write(json.dumps({"ev": "report", "nodeid": report.nodeid or "<collection>", "when": "collect",
                               "outcome": "failed", "reason": _reason(report)[:2000]}) + "\n")


def pytest_runtest_logstart(nodeid, location):
    global _before
    _before = _fallbacks()
    _out.write(json.dumps({"ev": "start", "nodeid": nodeid}) + "\n")


def _reason(report):
    lr = report.longrepr
    if lr is None:
        return ""
    if isinstance(lr, tuple) and len(lr) == 3:  # skip: (path, line, reason)
        return str(lr[2])
    crash = getattr(lr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return crash.message
    return str(lr).strip().splitlines()[-1] if str(lr).strip() else ""


def pytest_runtest_logreport(report):
    rec = {
        "ev": "report",
        "nodeid": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "duration": round(report.duration, 3),
    }
    if hasattr(report, "wasxfail"):
        rec["wasxfail"] = str(report.wasxfail)
    if report.outcome != "passed":
        rec["reason"] = _reason(report)[:2000]
    if report.outcome == "failed":
        crash = getattr(report.longrepr, "reprcrash", None)
        if crash is not None:
            rec["where"] = f"{crash.path}:{crash.lineno}"
        rec["tb"] = str(report.longrepr)[-4000:]  # tail of the traceback, for digging
    if report.when == "teardown":
        after = _fallbacks()
        grown = {k: v - _before.get(k, 0) for k, v in after.items() if v - _before.get(k, 0) > 0}
        if grown:
            rec["fallbacks"] = grown
    _out.write(json.dumps(rec) + "\n")
'''


def _clean_env(checkout: Path, plugin_dir: str) -> dict:
    env = dict(os.environ)
    for var in ("RUN_SLOW", "RUN_PIPELINE_TESTS", "RUN_CUSTOM_TOKENIZERS", "RUN_TRAINING_TESTS", "RUN_FLAKY"):
        env.pop(var, None)
    env.update(
        TRANSFORMERS_TEST_DEVICE="tpu",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        PYTHONPATH=os.pathsep.join(p for p in (plugin_dir, env.get("PYTHONPATH", "")) if p),
        PYTHONFAULTHANDLER="1",
    )
    return env


def _have_pytest_timeout() -> bool:
    try:
        import pytest_timeout  # noqa: F401
    except ImportError:
        return False
    return True


def _read_events(path: Path) -> list[dict]:
    if not path.exists():
        return []
    events = []
    with open(path) as f:
        for line in f:
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:  # a line cut by a crash
                pass
    return events


def _finished_ids(events: list[dict]) -> set[str]:
    return {e["nodeid"] for e in events if e["ev"] == "report" and e["when"] == "teardown"}


def run_family(family, checkout, out_dir, plugin_dir, args) -> tuple[list[dict], dict]:
    test_file = Path("tests") / "models" / family / f"test_modeling_{family}.py"
    if not (checkout / test_file).exists():
        return [], {"missing": str(test_file)}
    results = out_dir / f"{family}.jsonl"
    done_file = out_dir / f"{family}.done"
    results.unlink(missing_ok=True)
    done_file.unlink(missing_ok=True)
    env = _clean_env(checkout, plugin_dir)
    env["TPU_SUITE_RESULTS"] = str(results)
    env["TPU_SUITE_DONE"] = str(done_file)
    info = {"restarts": 0, "rc": [], "log": str(out_dir / f"{family}.log")}
    deadline = time.monotonic() + args.family_timeout
    log = open(out_dir / f"{family}.log", "w")
    attempt = 0
    while True:
        cmd = [sys.executable, "-m", "pytest", str(test_file), "-q", "-rf", "-p", "no:cacheprovider",
               "-p", "_tpu_suite_plugin", f"--junitxml={out_dir / f'{family}.{attempt}.xml'}"]
        if args.test_timeout and _have_pytest_timeout():
            cmd += [f"--timeout={args.test_timeout}", "--timeout_method=signal"]
        if args.k:
            cmd += ["-k", args.k]
        cmd += args.pytest_args
        log.write(f"$ {' '.join(cmd)}\n")
        log.flush()
        left = deadline - time.monotonic()
        if left <= 0:
            info["timed_out"] = True
            break
        proc = subprocess.Popen(cmd, cwd=checkout, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=left)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = "killed (family timeout)"
            info["timed_out"] = True
        info["rc"].append(rc)
        events = _read_events(results)
        started = [e["nodeid"] for e in events if e["ev"] == "start"]
        finished = _finished_ids(events)
        in_flight = [n for n in started if n not in finished]
        if rc in (0, 1, 5) or not in_flight:  # normal end (all passed / some failed / none collected)
            break
        if info.get("timed_out"):  # out of time: the test in flight is not counted at all
            info["cut_short"] = in_flight
            break
        # Crash: blame the test in flight, then resume after it.
        for nodeid in in_flight:
            how = f"crashed (pytest exit {rc})"
            with open(results, "a") as f:
                f.write(json.dumps({"ev": "report", "nodeid": nodeid, "when": "call",
                                    "outcome": "crashed", "reason": how}) + "\n")
                f.write(json.dumps({"ev": "report", "nodeid": nodeid, "when": "teardown",
                                    "outcome": "passed"}) + "\n")
        if attempt >= args.max_restarts:
            break
        with open(done_file, "w") as f:
            f.write("\n".join(sorted(_finished_ids(_read_events(results)))) + "\n")
        attempt += 1
        info["restarts"] = attempt
    log.close()
    return _read_events(results), info


def classify(events: list[dict]) -> dict[str, tuple[str, str]]:
    """nodeid -> (outcome, reason); outcome in passed/failed/error/skipped/xfailed/xpassed/crashed."""
    per = collections.OrderedDict()
    for e in events:
        if e["ev"] != "report":
            continue
        nid, when, out = e["nodeid"], e["when"], e["outcome"]
        cur = per.get(nid)
        if out == "crashed":
            per[nid] = ("crashed", e.get("reason", ""))
        elif cur and cur[0] in ("failed", "error", "crashed"):
            continue
        elif out == "failed":
            per[nid] = ("failed" if when == "call" else "error", e.get("reason", ""))
            if when == "collect":
                per[nid] = ("error", "collection error: " + e.get("reason", ""))
        elif out == "skipped":
            if "wasxfail" in e:
                per[nid] = ("xfailed", e["wasxfail"])
            else:
                per[nid] = ("skipped", e.get("reason", ""))
        elif out == "passed" and when == "call":
            per[nid] = ("xpassed", "") if "wasxfail" in e else ("passed", "")
        elif nid not in per:
            per[nid] = ("passed", "") if when != "setup" else ("pending", "")
    return {k: v for k, v in per.items() if v[0] != "pending"}


_HEX = re.compile(r"0x[0-9a-fA-F]+")
_NUM = re.compile(r"(?<![A-Za-z_])[-+]?\d+(\.\d+)?(e[-+]?\d+)?")


def reason_key(reason: str) -> str:
    """Group key: the first non-empty line, addresses and numbers masked."""
    lines = [ln.strip() for ln in reason.splitlines() if ln.strip()]
    first = lines[0] if lines else "(no message)"
    first = _HEX.sub("0x?", first)
    first = _NUM.sub("N", first)
    return first[:240]


def short(reason: str, limit=400) -> str:
    text = " | ".join(ln.strip() for ln in reason.splitlines() if ln.strip())
    return text[:limit] + ("..." if len(text) > limit else "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkout", type=Path, help="root of a transformers checkout (has tests/models/)")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--test-timeout", type=int, default=300, help="seconds per test (pytest-timeout); 0 = none")
    ap.add_argument("--family-timeout", type=int, default=3 * 3600, help="seconds for all pytest runs of a family")
    ap.add_argument("--max-restarts", type=int, default=25, help="restarts of a family after crashes")
    ap.add_argument("--out", type=Path, default=None, help="folder for logs, JSON lines and JUnit XML")
    ap.add_argument("-k", default=None, help="pytest -k expression")
    ap.add_argument("--top", type=int, default=15, help="how many failure reasons to list")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args(argv)

    checkout = args.checkout.resolve()
    if not (checkout / "tests" / "models").is_dir():
        ap.error(f"{checkout} has no tests/models/: not a transformers checkout")
    out_dir = (args.out or Path(tempfile.mkdtemp(prefix="tpu-hf-suite-"))).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    plugin_dir = tempfile.mkdtemp(prefix="tpu-suite-plugin-")
    Path(plugin_dir, "_tpu_suite_plugin.py").write_text(PLUGIN)
    if args.test_timeout and not _have_pytest_timeout():
        print("note: pytest-timeout is not installed; no per-test timeout", flush=True)

    families = [f.strip() for f in args.families.split(",") if f.strip()]
    table, failures, skips, fallbacks = {}, {}, collections.Counter(), collections.Counter()
    for fam in families:
        t0 = time.monotonic()
        print(f"== {fam}: running ...", flush=True)
        events, info = run_family(fam, checkout, out_dir, plugin_dir, args)
        if "missing" in info:
            print(f"== {fam}: {info['missing']} not found in the checkout", flush=True)
            table[fam] = None
            continue
        outcomes = classify(events)
        wheres = {e["nodeid"]: e["where"] for e in events if e.get("where")}
        counts = collections.Counter(o for o, _ in outcomes.values())
        counts["seconds"] = int(time.monotonic() - t0)
        counts["restarts"] = info["restarts"]
        counts["timed_out"] = int(bool(info.get("timed_out")))
        counts["collected"] = next((e["n"] for e in events if e["ev"] == "collected"), 0)
        table[fam] = counts
        for nid, (o, reason) in outcomes.items():
            if o in ("failed", "error", "crashed", "xpassed"):
                key = reason_key(reason) if o != "xpassed" else "XPASS (expected failure passed)"
                g = failures.setdefault(key, {"n": 0, "families": collections.Counter(), "example": reason, "test": nid,
                                              "where": wheres.get(nid, "")})
                g["n"] += 1
                g["families"][fam] += 1
            elif o == "skipped":
                skips[reason_key(reason)] += 1
        for e in events:
            for k, n in (e.get("fallbacks") or {}).items():
                fallbacks[k] += 1
        print(f"== {fam}: {counts['passed']} passed, {counts['failed'] + counts['error'] + counts['crashed']} failed, "
              f"{counts['skipped']} skipped ({counts['seconds']} s, log {info['log']})", flush=True)

    cols = ("passed", "failed", "error", "crashed", "skipped", "xfailed", "xpassed")
    print("\nPer family (failed = assertion/exception in the test; error = in setup/teardown; "
          "crashed = process died or hung in that test):")
    print(f"  {'family':<10}" + "".join(f"{c:>9}" for c in cols) + f"{'seconds':>9}  notes")
    for fam, c in table.items():
        if c is None:
            print(f"  {fam:<10}  test module missing")
            continue
        notes = []
        if c["restarts"]:
            notes.append(f"{c['restarts']} restarts")
        if c["timed_out"]:
            notes.append(f"family timeout hit: {sum(c[k] for k in cols)} of {c['collected']} tests run")
        print(f"  {fam:<10}" + "".join(f"{c[k]:>9}" for k in cols) + f"{c['seconds']:>9}  {', '.join(notes)}")

    if failures:
        print(f"\nTop failure reasons (of {len(failures)} distinct; grouped by first message line, digits masked):")
        for key, g in sorted(failures.items(), key=lambda kv: -kv[1]["n"])[: args.top]:
            fams = ", ".join(f"{f} {n}" for f, n in g["families"].most_common())
            print(f"  {g['n']:>4}  [{fams}]  {short(g['example'])}")
            print(f"        e.g. {g['test']}" + (f"  (raised at {g['where']})" if g["where"] else ""))
    if skips:
        print("\nTop skip reasons:")
        for key, n in skips.most_common(8):
            print(f"  {n:>4}  {key}")
    if fallbacks:
        print("\nCPU fallbacks (counter: number of tests where it grew):")
        for k, n in fallbacks.most_common(20):
            print(f"  {n:>4}  {k}")
    print(f"\nlogs, JSON lines and JUnit XML: {out_dir}")
    total = collections.Counter()
    for c in table.values():
        if c:
            total.update(c)
    print(f"skipped: {total['skipped']}, xfailed: {total['xfailed']} (in neither count below)")
    n_failed = total["failed"] + total["error"] + total["crashed"] + total["xpassed"]
    print(f"{total['passed']} passed, {n_failed} failed")
    return 0 if n_failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
