"""Float32 matmul precision (torch_tpu/precision.py): torch.set_float32_matmul_precision
and torch.tpu.precision() set the precision_config of float32 dots and
convolutions (HIGHEST / HIGH / DEFAULT), in eager and compiled programs, as a
cache-key fact; float64 stays HIGHEST and results stay within a bf16 pass."""
import os
import re
import subprocess
import sys
import textwrap
import threading

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

import torch_tpu
from torch_tpu import _C

TPU = "tpu"
NAMES = {"highest": "HIGHEST", "high": "HIGH", "medium": "DEFAULT"}
# One bf16 pass keeps 8 mantissa bits; products of O(1) values summed over k
# terms stay well inside this on a TPU (the CPU plugin computes exactly).
BF16_PASS = dict(rtol=2e-2, atol=2e-2)


@pytest.fixture
def programs(tmp_path):
    """The texts of the programs compiled inside the test, oldest first."""
    _C._set_program_dump_dir(str(tmp_path))
    saved = torch.get_float32_matmul_precision()

    def read():
        files = sorted(tmp_path.glob("*.mlir"), key=lambda p: int(p.stem.split("-")[1]))
        return [p.read_text() for p in files]

    yield read
    _C._set_program_dump_dir("")
    torch.set_float32_matmul_precision(saved)


def precisions_in(texts):
    return [m for t in texts for m in re.findall(r"#stablehlo<precision (\w+)>", t)]


def ops_of(seed, *shapes, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g).to(dtype) for s in shapes]


CASES = {
    "mm": (lambda a, b: a @ b, [(5, 7), (7, 3)]),
    "bmm": (torch.bmm, [(2, 5, 7), (2, 7, 3)]),
    "addmm": (lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0), [(3,), (5, 7), (7, 3)]),
    "linear_noncontig": (lambda x, w: F.linear(x.transpose(0, 1), w), [(7, 5), (4, 7)]),
    "conv2d": (lambda x, w: F.conv2d(x, w, padding=1), [(2, 3, 6, 6), (4, 3, 3, 3)]),
}


@pytest.mark.parametrize("setting", ["highest", "high", "medium"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_global_setting_sets_program_precision(programs, case, setting):
    fn, shapes = CASES[case]
    xs = ops_of(len(case), *shapes)
    torch.set_float32_matmul_precision(setting)
    got = fn(*[x.to(TPU) for x in xs]).cpu()
    assert_close(got, fn(*xs), **BF16_PASS)
    found = precisions_in(programs())
    # Each precision gets its own program (the setting is in the cache key).
    assert found and set(found) == {NAMES[setting]}, found


def test_float64_and_half_types_stay_exact(programs):
    torch.set_float32_matmul_precision("medium")
    a, b = ops_of(0, (4, 6), (6, 2), dtype=torch.float64)
    assert_close((a.to(TPU) @ b.to(TPU)).cpu(), a @ b)
    assert set(precisions_in(programs())) == {"HIGHEST"}
    h, k = ops_of(1, (4, 6), (6, 3), dtype=torch.bfloat16)
    n = len(programs())
    assert_close((h.to(TPU) @ k.to(TPU)).cpu(), h @ k)
    # Widened from bf16: exact in one pass, so no precision is requested.
    assert precisions_in(programs()[n:]) == []


def test_context_overrides_per_thread_and_nests(programs):
    a, b = ops_of(2, (3, 8), (8, 2))
    ta, tb = a.to(TPU), b.to(TPU)
    assert torch.tpu.current_precision() is torch.tpu.Precision.HIGHEST
    seen_in_thread = []
    with torch.tpu.precision(torch.tpu.Precision.DEFAULT):
        assert torch.tpu.current_precision() is torch.tpu.Precision.DEFAULT
        t = threading.Thread(target=lambda: seen_in_thread.append(torch.tpu.current_precision()))
        t.start()
        t.join()
        assert_close((ta @ tb).cpu(), a @ b, **BF16_PASS)
        with torch.tpu.precision("high"):
            assert_close((ta @ tb).cpu(), a @ b, **BF16_PASS)
        assert torch.tpu.current_precision() is torch.tpu.Precision.DEFAULT
    assert torch.tpu.current_precision() is torch.tpu.Precision.HIGHEST
    assert_close((ta @ tb).cpu(), a @ b)
    assert seen_in_thread == [torch.tpu.Precision.HIGHEST]  # other threads keep the global setting
    assert precisions_in(programs()) == ["DEFAULT"] * 2 + ["HIGH"] * 2 + ["HIGHEST"] * 2


def test_context_restores_after_an_exception():
    with pytest.raises(KeyError):
        with torch.tpu.precision(torch.tpu.Precision.HIGH):
            raise KeyError("x")
    assert torch.tpu.current_precision() is torch.tpu.Precision.HIGHEST


@pytest.mark.parametrize("bad", ["low", "HIGHEST", 3, None])
def test_unknown_mode_is_a_value_error(bad):
    with pytest.raises(ValueError, match="torch.tpu.precision: expected a torch.tpu.Precision"):
        with torch.tpu.precision(bad):
            pass


def test_compiled_graph_follows_the_setting_at_run_time(programs):
    def f(x, w):
        return torch.tanh(x @ w) + F.conv1d(x.t().unsqueeze(0), w.t().unsqueeze(-1)).squeeze(0).t()

    x, w = ops_of(3, (4, 6), (6, 6))
    cf = torch.compile(f, backend="tpu", dynamic=False)
    tx, tw = x.to(TPU), w.to(TPU)
    expect = f(x, w)
    assert_close(cf(tx, tw).cpu(), expect)
    first = set(precisions_in(programs()))
    n = len(programs())
    with torch.tpu.precision("medium"):
        assert_close(cf(tx, tw).cpu(), expect, **BF16_PASS)
    torch.set_float32_matmul_precision("high")
    assert_close(cf(tx, tw).cpu(), expect, **BF16_PASS)
    texts = programs()[n:]
    assert first == {"HIGHEST"}
    assert set(precisions_in(texts[:1])) == {"DEFAULT"} and set(precisions_in(texts[1:])) == {"HIGH"}, texts


def test_mixed_legacy_and_new_api_keeps_full_precision(programs):
    """PyTorch refuses to name one precision when both APIs were used; the
    tpu ops keep working at full precision instead of raising."""
    code = """
        import torch
        torch.set_float32_matmul_precision("highest")
        torch.backends.cuda.matmul.fp32_precision = "tf32"
        try:
            torch.get_float32_matmul_precision()
        except RuntimeError:
            print("refused")
        a = torch.randn(3, 4)
        got = (a.to("tpu") @ a.t().to("tpu")).cpu()
        print(torch.tpu.current_precision().name, torch.allclose(got, (a.double() @ a.t().double()).float()))
    """
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["refused", "HIGHEST", "True"]


def test_validation_catches_the_precision_missing_from_the_key(tmp_path):
    code = """
        import torch
        a = torch.randn(3, 4, device="tpu")
        (a @ a.t()).cpu()
        torch.set_float32_matmul_precision("high")
        print((a @ a.t()).cpu().shape)
    """
    env = dict(os.environ, TORCH_TPU_DEBUG_NARROW_CACHE_KEY="matmul_precision", TORCH_TPU_VALIDATE_CACHE="1",
               TORCH_TPU_DUMP_PROGRAMS=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode != 0
    assert "mm: the cached program was built for a different call" in r.stderr, r.stderr[-2000:]
    assert "precision HIGH>" in r.stderr, r.stderr[-2000:]
    # The dump folder given by the environment received the programs.
    assert any("precision HIGHEST" in p.read_text() for p in tmp_path.glob("*.mlir"))
