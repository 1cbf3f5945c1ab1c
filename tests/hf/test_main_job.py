"""The main job end to end (`python -m torch_tpu.examples.generate`, what
scripts/main_job.sh runs), shortened: a smaller Qwen3 trained for fewer
steps, through the same code: tokenizer and model built from the shipped
corpus, trained on tpu, cached with save_pretrained, loaded back with
from_pretrained(device_map="tpu"), generated on tpu eager, compiled and CPU.
TORCH_TPU_FALLBACK=error (tests/hf/conftest.py): nothing ran on the CPU."""
import torch

import torch_tpu.examples.generate as example
from torch_tpu.examples import tiny_checkpoint, train_tiny

# Half the main job's width and depth: the same recipe memorizes the corpus
# in 80 steps (loss ~6.3 -> ~0.07) and keeps the test under a minute here.
SMALL = dict(tiny_checkpoint.CONFIG, hidden_size=128, intermediate_size=384, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2)
STEPS = 80


def test_main_job_trains_and_generates_the_corpus(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")  # as tests/hf/conftest.py does; explicit here
    monkeypatch.setenv("TORCH_TPU_CACHE", str(tmp_path))
    monkeypatch.setattr(tiny_checkpoint, "CONFIG", SMALL)
    result = example.main(["--steps", str(STEPS), "--max-new-tokens", "16"])
    out = capsys.readouterr().out

    assert result["path"] == tiny_checkpoint.default_folder(STEPS) and result["path"].startswith(str(tmp_path))
    log = train_tiny.read_log(result["path"])
    losses = log["losses"]
    assert log["device"] == "tpu"
    assert len(losses) == STEPS and losses[0] / losses[-1] >= 3, losses
    overlap = train_tiny.longest_corpus_overlap(result["text"])
    assert len(overlap) >= 20, result["text"]
    tokens = result["tokens"]
    assert torch.equal(tokens["tpu eager"], tokens["cpu eager"])
    assert torch.equal(tokens["tpu eager"], tokens["tpu compiled"])

    assert "metrics (training): compiles" in out and out.count("fallbacks 0") == 3
    for row in ("tpu eager", "tpu compiled", "cpu eager"):
        assert row in out
    assert all(line.isprintable() for line in out.splitlines())

    # A second run finds the checkpoint in the cache instead of training again.
    example.main(["--steps", str(STEPS), "--max-new-tokens", "2", "--skip-cpu"])
    assert "trained checkpoint, cached" in capsys.readouterr().out


def test_printable_escapes_control_characters():
    assert example.printable("ok\x05\x1b[2J") == "ok\\x05\\x1b[2J"


def test_longest_corpus_overlap():
    assert train_tiny.longest_corpus_overlap("zzEvery op iszz", "An op.\nEvery op is lowered") == "Every op is"
