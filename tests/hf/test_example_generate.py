"""The README's main job, shortened: builds its cached tiny Qwen3 checkpoint
(with its own tokenizer), generates on tpu eager and compiled, and reports."""
import torch_tpu.examples.generate as example
from torch_tpu.examples import tiny_checkpoint


def test_main_job_runs_without_fallback(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TORCH_TPU_CACHE", str(tmp_path))
    example.main(["--max-new-tokens", "4"])
    out = capsys.readouterr().out
    assert f"model: {tiny_checkpoint.default_folder()}" in out
    for row in ("tpu eager", "tpu compiled", "cpu eager"):
        assert row in out
    assert "tpu eager and compiled tokens identical: True" in out
    assert "tpu and cpu tokens identical: True" in out
    assert out.count("fallbacks 0") == 2
