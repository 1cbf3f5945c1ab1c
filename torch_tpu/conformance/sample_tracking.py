"""A cheap stand-in for PyTorch's OpInfo test-function lookup.

`OpInfo.sample_inputs` asks `torch.testing._internal.common_utils.extract_test_fn`
which unittest test is running (to attach the sample being tried to it for
error messages). That function calls `inspect.stack()`, which reads the source
file and resolves the module of every frame on the stack: ~30 ms a call under
pytest's deep stacks, several per (op, dtype). Generating the cache-order
cases (tests/cache_order_cases.py, ~1000 (op, dtype) pairs) spent 25–30 s of
its ~35 s there.

`find_running_test_fn` answers the same question from the frame objects alone
(no source, no module lookup): the first frame whose `self` is a
`unittest.TestCase` whose id names its own class and a `test*` method gives that
method's function; otherwise None. Samples, seeds and the order of draws are
unchanged (tests/test_sample_tracking.py compares it with PyTorch's).
"""
import sys
import unittest


def find_running_test_fn():
    frame = sys._getframe(1)
    while frame is not None:
        self_val = frame.f_locals.get("self")
        if isinstance(self_val, unittest.TestCase):
            try:
                *_, cls_name, test_name = self_val.id().rsplit(".", 2)
                if cls_name == type(self_val).__name__ and test_name.startswith("test"):
                    return getattr(self_val, test_name).__func__
            except Exception:  # noqa: BLE001  (PyTorch's version returns None on any error too)
                return None
        frame = frame.f_back
    return None


_replaced = []   # PyTorch's own function, once install() has replaced it


def pytorch_extract_test_fn():
    """PyTorch's `extract_test_fn`, installed or not (the tests compare with it)."""
    from torch.testing._internal import common_utils
    return _replaced[0] if _replaced else common_utils.extract_test_fn


def install():
    """Makes OpInfo's sample generation use `find_running_test_fn` (idempotent)."""
    from torch.testing._internal import common_utils
    from torch.testing._internal.opinfo import core
    if common_utils.extract_test_fn is not find_running_test_fn:
        _replaced.append(common_utils.extract_test_fn)
    common_utils.extract_test_fn = find_running_test_fn
    core.extract_test_fn = find_running_test_fn
