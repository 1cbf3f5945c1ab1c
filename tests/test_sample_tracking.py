"""torch_tpu.conformance.sample_tracking finds the running unittest test as
PyTorch's `extract_test_fn` does (without inspect.stack()), so OpInfo sample
generation behaves the same with it installed."""
import unittest

import torch

from torch_tpu.conformance import sample_tracking

PYTORCH_EXTRACT = sample_tracking.pytorch_extract_test_fn()
assert PYTORCH_EXTRACT is not sample_tracking.find_running_test_fn


def test_outside_a_testcase_both_find_nothing():
    assert PYTORCH_EXTRACT() is None
    assert sample_tracking.find_running_test_fn() is None


class _Case(unittest.TestCase):
    __test__ = False   # run by the tests below, not collected by pytest

    def test_inside(self):
        def nested():   # a frame without `self` between the test method and the lookup
            return PYTORCH_EXTRACT(), sample_tracking.find_running_test_fn()
        self.found = nested()

    def helper_not_a_test(self):
        self.found = (PYTORCH_EXTRACT(), sample_tracking.find_running_test_fn())


def test_inside_a_testcase_both_find_its_test_method():
    case = _Case("test_inside")
    case.test_inside()
    theirs, ours = case.found
    assert theirs is _Case.test_inside
    assert ours is theirs


def test_a_testcase_running_another_method_is_not_taken_for_a_test():
    case = _Case("helper_not_a_test")   # its id names a method that does not start with "test"
    case.helper_not_a_test()
    assert case.found == (None, None)


def test_installed_sampling_gives_the_same_samples():
    from torch.testing._internal.common_methods_invocations import op_db
    op = next(o for o in op_db if o.name == "addcmul")

    def draw():
        torch.manual_seed(0)
        return [(s.input, s.args, s.kwargs) for s in op.sample_inputs("cpu", torch.float32)]

    before = draw()
    sample_tracking.install()
    from torch.testing._internal.opinfo import core
    assert core.extract_test_fn is sample_tracking.find_running_test_fn
    after = draw()
    assert len(after) == len(before) > 0
    for (i0, a0, k0), (i1, a1, k1) in zip(before, after):
        torch.testing.assert_close(i1, i0, rtol=0, atol=0)
        assert len(a1) == len(a0) and k1.keys() == k0.keys()
        for x, y in zip(a1, a0):
            torch.testing.assert_close(x, y, rtol=0, atol=0)
