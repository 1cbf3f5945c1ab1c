"""python -m torch_tpu.conformance: sweep op_db on tpu against the CPU, write the report."""
import argparse
import datetime
import fnmatch
import json
import os
import pathlib
import shlex
import sys
import time

import torch

from . import report, runner, workers

# Defaults chosen so the whole op_db sweep fits in about 45 min with 2 workers
# on a 2-core machine (see the report header for the measured time).
DEFAULT_MAX_SAMPLES = 4
DEFAULT_JOBS = 2
DEFAULT_CASE_TIMEOUT_S = 240


def _default_report_path():
    root = pathlib.Path(__file__).resolve().parents[2]
    base = root if (root / "pyproject.toml").exists() else pathlib.Path.cwd()
    return base / "docs" / "conformance.md"


def _select(ops, patterns):
    if not patterns:
        return list(ops)
    pats = [p.strip() for p in patterns.split(",") if p.strip()]
    chosen = [name for name in ops if any(fnmatch.fnmatchcase(name, p) for p in pats)]
    missing = [p for p in pats if not any(fnmatch.fnmatchcase(n, p) for n in ops)]
    if missing:
        sys.exit(f"no OpInfo matches: {', '.join(missing)}")
    return chosen


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m torch_tpu.conformance", description=__doc__)
    p.add_argument("--ops", help="comma-separated OpInfo full names or globs (default: all of op_db)")
    p.add_argument("--dtypes", default=",".join(runner.DEFAULT_DTYPES),
                   help="comma-separated dtypes (default: %(default)s); each op runs those it supports on CPU")
    p.add_argument("--max-samples", type=int, default=DEFAULT_MAX_SAMPLES,
                   help="samples per (op, dtype), the first ones of op.sample_inputs (default: %(default)s)")
    p.add_argument("--jobs", type=int, default=DEFAULT_JOBS, help="worker processes (default: %(default)s)")
    p.add_argument("--timeout", type=int, default=DEFAULT_CASE_TIMEOUT_S,
                   help="seconds per (op, dtype) before its worker is killed (default: %(default)s)")
    p.add_argument("--no-backward", action="store_true", help="forward only")
    p.add_argument("--json", metavar="PATH", help="also write every (op, dtype) result as JSON")
    p.add_argument("--report", metavar="PATH",
                   help="markdown report (default: docs/conformance.md for a full sweep, none with --ops)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    args = p.parse_args(argv)

    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    for d in dtypes:
        if not isinstance(getattr(torch, d, None), torch.dtype):
            sys.exit(f"unknown dtype: {d}")
    ops = runner.load_op_db()
    names = _select(ops, args.ops)
    jobs = [{"op": n, "dtype": d} for n in names for d in runner.case_dtypes(ops[n], dtypes)]
    opts = {"max_samples": args.max_samples, "backward": not args.no_backward}

    def progress(done, total, r):
        if not args.quiet:
            print(f"[{done}/{total}] {r['op']} {r['dtype']}: {r['status']} ({r.get('seconds', 0)} s)"
                  + (f" {r['reason'][:100]}" if r.get("reason") and r["status"] != "pass" else ""),
                  file=sys.stderr, flush=True)

    start = time.monotonic()
    results = workers.run_cases(jobs, opts, args.jobs, args.timeout, progress)
    seconds = time.monotonic() - start

    import torch_tpu
    meta = {
        "command": "python -m torch_tpu.conformance" + "".join(" " + shlex.quote(a) for a in (argv or sys.argv[1:])),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "torch": torch.__version__, "torch_tpu": torch_tpu.__version__,
        "platform": os.environ.get("TORCH_TPU_PLUGIN", "XLA CPU PJRT plugin (default)"),
        "dtypes": dtypes, "max_samples": args.max_samples, "backward": not args.no_backward,
        "jobs": args.jobs, "case_timeout_s": args.timeout, "seconds": seconds, "n_ops": len(names),
    }
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"meta": meta, "cases": results}, indent=1))
    out = args.report or (None if args.ops else _default_report_path())
    if out:
        path = pathlib.Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(report.render(results, meta))
    print(report.summary_line(results))
    print("by dtype family: " + ", ".join(f"{k} {v:.1f}%" for k, v in report.family_summary(results).items()))


if __name__ == "__main__":
    main()
