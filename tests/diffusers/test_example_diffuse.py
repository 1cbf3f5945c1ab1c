"""`python -m torch_tpu.examples.diffuse` on a fresh cache: builds the tiny SD3
pipeline, writes a viewable PNG, prints seconds per image for every row."""
import os
import re
import subprocess
import sys

import PIL.Image


def test_example_writes_a_png(tmp_path):
    out = tmp_path / "image.png"
    env = dict(os.environ, TORCH_TPU_CACHE=str(tmp_path / "cache"), TORCH_TPU_FALLBACK="error")
    proc = subprocess.run([sys.executable, "-m", "torch_tpu.examples.diffuse", "--out", str(out), "--steps", "1",
                           "--size", "32"], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    for row in ("tpu eager, first call", "tpu eager, later call", "tpu compiled, first call",
                "tpu compiled, later call", "cpu eager"):
        assert row in proc.stdout and "s/image" in proc.stdout.split(row)[1].splitlines()[0], proc.stdout
    compiled = re.search(r"graph compiles (\d+) on the first call, (\d+) on the later call; fallbacks 0", proc.stdout)
    assert compiled and int(compiled[1]) > 0 and int(compiled[2]) == 0, proc.stdout
    with PIL.Image.open(out) as image:
        image.load()
        assert image.format == "PNG" and image.size == (32, 32) and image.mode == "RGB"
