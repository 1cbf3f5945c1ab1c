"""Property-based fuzzing against the CPU (issue 16 item 1; torch_tpu/fuzz).

test_fuzz_lowered_ops draws DRAWS random calls (4 or 5 of every op in the
backend's lowered registry; functional, out= and in-place; random shapes,
dtypes, strides, views, storage offsets, broadcasting, bad indices and dims,
CPU operands, out= of the wrong shape or dtype or aliasing an input) from a
fixed seed, in two worker subprocesses (a crash is counted, not fatal), and
requires every draw to match the CPU: equal values (exact dtype), or the
same exception type. A difference passes only if it is a documented accepted
one or an open known bug (torch_tpu/fuzz/known.py; each known bug has its own
failing test in known_bugs.py, which CI does not collect:
`python -m pytest tests/fuzz/known_bugs.py`). The table it prints is the run's.
"""
import os
import re

import torch

from torch_tpu.fuzz import check as ck
from torch_tpu.fuzz import engine, known, report
from torch_tpu.fuzz.targets import Call, lowered_targets
from torch_tpu.fuzz.tensors import TensorSpec

SEED = 20261204
DRAWS = 2050            # 4 or 5 per lowered op: the bound keeps the suite under 3 minutes on 2 cores
MIN_DRAWS, MIN_OPS = 2000, 150
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_fuzz_lowered_ops():
    names = [t.name for t in lowered_targets()]
    per_op, extra = divmod(DRAWS, len(names))
    draws = {n: per_op + (i < extra) for i, n in enumerate(sorted(names, key=lambda n: engine.job_seed(SEED, n, 0)))}
    stats = engine.run(names, draws_per_job=draws, rounds=1, seed=SEED, workers=2)
    print("\n" + report.summary_table(stats) + "\n\n" + report.differences_table(stats.records))
    assert stats.draws >= MIN_DRAWS, stats.draws
    assert len(stats.ops) >= MIN_OPS, len(stats.ops)
    failures = [r for r in stats.records if known.is_failure(r)]
    msg = "\n\n".join(f"{r['target']}: {r['outcome']}: {r['detail']}\n{r['call']}\n{r['repro']}" for r in failures[:5])
    assert not failures, f"{len(failures)} draws differ from the CPU unexplained; the first:\n{msg}"


def test_a_crash_is_counted_not_fatal():
    """A worker that dies mid-draw is one crash; a fresh worker runs the next job."""
    stats = engine.run(["add.Tensor"], draws_per_job=2, rounds=1, seed=1, workers=1, inject_crash=True)
    assert stats.counts[ck.CRASH] == 1, stats.counts
    assert stats.draws == 3, stats.counts   # the crash and the two draws after it
    assert stats.records[0]["repro"].startswith("import os")


def _add(self_values, other):
    spec = TensorSpec((3,), torch.float32, values=tuple(self_values))
    return Call("add.Tensor", "functional", torch.ops.aten.add.Tensor, [("self", spec, False), ("other", other, False)])


def test_the_oracle_sees_a_wrong_value_and_an_exception_type():
    call = _add([1.0, 2.0, 3.0], TensorSpec((3,), torch.float32, values=(1.0, 1.0, 1.0)))
    cpu, tpu = ck.run_side(call, "cpu"), ck.run_side(call, "tpu")
    assert ck.compare(call, cpu, tpu)[0] == ck.EQUAL
    wrong = ([("tpu", tpu[0][0][1] + 1e-3)], tpu[1], tpu[2])
    assert ck.compare(call, cpu, wrong)[0] == ck.MISMATCH
    other_dtype = ([("tpu", tpu[0][0][1].double())], tpu[1], tpu[2])
    assert ck.compare(call, cpu, other_dtype)[0] == ck.MISMATCH
    bad = _add([1.0, 2.0, 3.0], TensorSpec((4,), torch.float32, values=(1.0,) * 4))   # shapes do not broadcast
    cpu, tpu = ck.run_side(bad, "cpu"), ck.run_side(bad, "tpu")
    assert ck.compare(bad, cpu, tpu)[0] == ck.BOTH_RAISED
    as_index_error = ck.Raised(IndexError("x"), "call")
    assert ck.compare(bad, cpu, as_index_error)[0] == ck.EXC_TYPE


def test_a_seed_makes_the_same_draws():
    target = next(t for t in lowered_targets() if t.name == "index_put")
    first = [c.describe() for c in engine.draw_calls(target, 8, SEED)]
    assert first == [c.describe() for c in engine.draw_calls(target, 8, SEED)]
    assert first != [c.describe() for c in engine.draw_calls(target, 8, SEED + 1)]


def test_every_remaining_difference_is_documented_and_every_known_bug_tested():
    with open(os.path.join(ROOT, "docs", "reliability.md")) as f:
        doc = f.read()
    with open(os.path.join(os.path.dirname(__file__), "known_bugs.py")) as f:
        bug_tests = set(re.findall(r"def (test_known_bug_\w+)", f.read()))
    for e in known.ACCEPTED + known.KNOWN_BUGS:
        assert e.name in doc, f"{e.name!r} is not in docs/reliability.md"
    with open(os.path.join(os.path.dirname(__file__), "test_regressions.py")) as f:
        regressions = re.findall(r"^def (test_\w+)", f.read(), re.M)
    undocumented = [t for t in regressions if f"`{t}`" not in doc]
    assert not undocumented, f"regression tests not in docs/reliability.md: {undocumented}"
    names = {"test_known_bug_" + e.name.replace("-", "_") for e in known.KNOWN_BUGS}
    assert names <= bug_tests, f"known bugs without a test: {sorted(names - bug_tests)}"
    assert bug_tests <= names, f"tests of no known bug (fixed? move them to test_regressions.py): " \
                               f"{sorted(bug_tests - names)}"
