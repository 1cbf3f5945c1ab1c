"""Two tiers of a parametrized product. CI's suite (scripts/test.sh) runs
`-m "not long"`: every test of a family, each over the values named fast
(one real and one complex dtype, say); `bash scripts/test_long.sh` runs the
rest of each product (every dtype x driver x shape). Run the long tier after
changing a rule those tests cover; the README lists it with the other long
commands."""
import pytest


def tiered(values, fast):
    """`values` for pytest.mark.parametrize: those in `fast` in both tiers,
    the others only in the long tier."""
    return [v if v in fast else pytest.param(v, marks=pytest.mark.long) for v in values]
