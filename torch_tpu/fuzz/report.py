"""Tables of a fuzz run (Markdown, printed by the long mode and the CI suite)."""
import collections
import re

from . import check as ck
from .known import classify

COLUMNS = [ck.EQUAL, ck.BOTH_RAISED, ck.DEVICE_REJECTED, ck.UNDEFINED, ck.EXC_TYPE, ck.TPU_RAISED, ck.CPU_RAISED,
           ck.MISMATCH, ck.CRASH, ck.CPU_CRASH, ck.TIMEOUT, ck.HARNESS]


def summary_table(stats):
    head = ["draws", "ops"] + COLUMNS + ["fell back to CPU", "seconds"]
    row = [stats.draws, len(stats.ops)] + [stats.counts.get(c, 0) for c in COLUMNS] + [
        stats.fallbacks, f"{getattr(stats, 'seconds', 0):.0f}"]
    return "\n".join(["| " + " | ".join(head) + " |", "|" + " --- |" * len(head),
                      "| " + " | ".join(str(v) for v in row) + " |"])


def _shape_free(detail):
    """A detail with sizes and numbers blanked, to group alike records."""
    return re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", detail or "")[:160]


def groups(records):
    """[(op, outcome, class, count, first detail, first record)] grouped by op, outcome and detail shape."""
    g = collections.OrderedDict()
    for r in records:
        key = (r["target"], r["outcome"], _shape_free(r["detail"]))
        if key not in g:
            g[key] = [r, 0]
        g[key][1] += 1
    return [(k[0], k[1], classify(v[0]), v[1], v[0]["detail"], v[0]) for k, v in g.items()]


def differences_table(records):
    if not records:
        return "(no differences)"
    lines = ["| op | outcome | class | draws | first detail |", "| --- | --- | --- | --- | --- |"]
    for op, outcome, cls, n, detail, _ in groups(records):
        d = (detail or "").replace("|", "/")[:200]
        lines.append(f"| `{op}` | {outcome} | {cls} | {n} | {d} |")
    return "\n".join(lines)
