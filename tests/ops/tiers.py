"""Two tiers of a parametrized product. CI's suite (scripts/test.sh) runs
`-m "not long"`; `bash scripts/test_long.sh` runs the rest of each product
(every dtype x driver x shape). Run the long tier after changing a rule
those tests cover; the README lists it with the other long commands.

Two ways to choose the CI tier:
  * `tiered(values, fast)`: one axis, the values named fast (one real and one
    complex dtype, say) in CI;
  * `pairwise(name, values, name, values, ...)`: several axes, CI runs a
    covering set in which every pair of values of any two axes meets in at
    least one case (so every value, and every two-way interaction: each dtype
    with each mode, each mode with each size...), the long tier the rest of
    the full product. Most of what a product finds is one value or two
    interacting; the long tier keeps the three-way rest checked."""
import itertools

import pytest


def tiered(values, fast):
    """`values` for pytest.mark.parametrize: those in `fast` in both tiers,
    the others only in the long tier."""
    return [v if v in fast else pytest.param(v, marks=pytest.mark.long) for v in values]


def _pairs(case):
    return {(i, case[i], j, case[j]) for i, j in itertools.combinations(range(len(case)), 2)}


def covering_cases(axes):
    """Indices into the full product (itertools.product order) of a set of
    cases covering every pair of value indices of any two axes: greedy, the
    case covering most uncovered pairs first, ties to the earliest, so the
    set is the same on every run (test ids stay stable)."""
    product = list(itertools.product(*(range(len(a)) for a in axes)))
    if len(axes) < 2:
        return set(range(len(product)))
    uncovered = set().union(*(_pairs(c) for c in product))
    chosen = set()
    while uncovered:
        best = max(range(len(product)), key=lambda k: (len(_pairs(product[k]) & uncovered), -k))
        chosen.add(best)
        uncovered -= _pairs(product[best])
    return chosen


def _id(value):
    if isinstance(value, tuple):
        return "-".join(map(_id, value)) if value else "()"
    return str(value)


def pairwise(*names_and_values):
    """Arguments for pytest.mark.parametrize over the full product of the
    axes given as name, values, name, values...; a name may join several
    arguments ("nd,mode") whose values are tuples. Cases outside the pairwise
    covering set are marked long. Ids join each value's str."""
    names, axes = names_and_values[0::2], [list(v) for v in names_and_values[1::2]]
    assert len(names) == len(axes) and all(axes), "pairwise(name, values, name, values, ...)"
    chosen = covering_cases(axes)
    params = []
    for k, case in enumerate(itertools.product(*axes)):
        flat = tuple(itertools.chain.from_iterable(v if "," in n else (v,) for n, v in zip(names, case)))
        marks = () if k in chosen else (pytest.mark.long,)
        params.append(pytest.param(*flat, marks=marks, id="-".join(_id(v) for v in case)))
    return ",".join(names), params
