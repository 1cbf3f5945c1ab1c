"""python -m torch_tpu.fuzz --minutes N: the long fuzz run.

Rounds over every lowered op (a few draws per op and job, new seeds each
round) in worker subprocesses until the time is up, then prints the table of
draws, outcomes, mismatches and crashes, and the differences grouped by op.
--repros DIR writes one script per non-parity group.
"""
import argparse
import json
import os
import re
import sys
import time


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m torch_tpu.fuzz", description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=None, help="run this long (default: one round)")
    p.add_argument("--rounds", type=int, default=1, help="without --minutes: rounds over the ops")
    p.add_argument("--per-job", type=int, default=5, help="draws per op and job")
    p.add_argument("--seed", type=int, default=None, help="default: time-based (printed)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--ops", default=None, help="regex: only the lowered ops it matches (search)")
    p.add_argument("--json", default=None, help="write the counts and records here")
    p.add_argument("--repros", default=None, help="write a repro script per difference group here")
    a = p.parse_args(argv)

    import warnings
    warnings.simplefilter("ignore")
    from . import engine, report
    from .targets import lowered_targets

    names = [t.name for t in lowered_targets()]
    if a.ops:
        names = [n for n in names if re.search(a.ops, n)]
    seed = a.seed if a.seed is not None else int(time.time()) % 100000
    print(f"fuzzing {len(names)} lowered ops, seed {seed}, {a.workers} workers, {a.per_job} draws per job",
          flush=True)
    last = [time.monotonic()]

    def progress(stats):
        if time.monotonic() - last[0] > 30:
            last[0] = time.monotonic()
            bad = sum(stats.counts.get(k, 0) for k in report.COLUMNS[4:])
            print(f"  {stats.draws} draws, {len(stats.ops)} ops, {bad} not parity, "
                  f"{time.monotonic() - stats.start:.0f} s", flush=True)

    if a.minutes is not None:
        stats = engine.run_for(a.minutes, names, seed=seed, workers=a.workers, draws_per_job=a.per_job,
                               progress=progress)
    else:
        stats = engine.run(names, draws_per_job=a.per_job, rounds=a.rounds, seed=seed, workers=a.workers,
                           progress=progress)
    print()
    print(report.summary_table(stats))
    print()
    print(report.differences_table(stats.records))
    if a.repros:
        os.makedirs(a.repros, exist_ok=True)
        for i, (op, outcome, cls, n, detail, rec) in enumerate(report.groups(stats.records)):
            with open(os.path.join(a.repros, f"{i:03d}_{re.sub(r'[^A-Za-z0-9_]', '_', op)}.py"), "w") as f:
                f.write(f"# {op}: {outcome} ({cls}), {n} draws\n# {detail}\n# {rec['call']}\n{rec['repro']}")
    slow = ", ".join(f"{op} {sec:.1f} s" for op, sec in stats.op_seconds.most_common(8))
    print(f"\nslowest ops (all their draws): {slow}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"seed": seed, "draws": stats.draws, "ops": sorted(stats.ops), "counts": dict(stats.counts),
                       "fallbacks": stats.fallbacks, "seconds": stats.seconds, "records": stats.records,
                       "op_seconds": dict(stats.op_seconds)}, f)
    crashed = stats.counts.get("crash", 0)
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
