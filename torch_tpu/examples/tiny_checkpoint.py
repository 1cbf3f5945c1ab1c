"""A small Qwen3-architecture checkpoint and a byte-level BPE tokenizer, both
built here from the corpus this package ships (corpus.txt, the project's own
description of itself) and written once into a cache folder. Nothing is
downloaded: the main job runs on a machine with no hub access.

build() writes random weights (benchmarks, `--no-train`); build_trained()
trains them on `tpu` first (train_tiny.py)."""
import os
from importlib import resources

import torch

CONFIG = dict(vocab_size=512, hidden_size=256, intermediate_size=768, num_hidden_layers=4,
              num_attention_heads=8, num_key_value_heads=4, head_dim=32, max_position_embeddings=512,
              tie_word_embeddings=True)

# Bump the version when the corpus, CONFIG or the training recipe change, so
# that a checkpoint cached by an older version is not reused.
TRAINED_NAME = "qwen3-tiny-trained-v1"
RANDOM_NAME = "qwen3-tiny-random-v2"  # v1 had a tokenizer trained on other sentences


def corpus_text() -> str:
    return resources.files(__package__).joinpath("corpus.txt").read_text(encoding="utf-8")


def cache_root() -> str:
    return os.environ.get("TORCH_TPU_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "torch_tpu"))


def default_folder(steps: int | None = None) -> str:
    """The trained checkpoint's folder; a non-default step count gets its own."""
    from .train_tiny import DEFAULT_STEPS

    name = TRAINED_NAME if steps in (None, DEFAULT_STEPS) else f"{TRAINED_NAME}-{steps}steps"
    return os.path.join(cache_root(), name)


def build_tokenizer(vocab_size: int, text: str | None = None):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    special = ["<pad>", "<s>", "</s>", "<unk>"]
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator((text or corpus_text()).splitlines(), trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>")


def new_model(tokenizer, config: dict | None = None, seed: int = 0):
    """A Qwen3ForCausalLM with random weights (on the CPU)."""
    from transformers import AutoModelForCausalLM, Qwen3Config

    config = Qwen3Config(**(config or CONFIG), pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(seed)
    return AutoModelForCausalLM.from_config(config)


def save_atomically(folder: str, model, tokenizer, extra: dict | None = None) -> str:
    """save_pretrained into folder.partial, then one rename: an interrupted run
    never leaves a folder that looks complete."""
    import json
    import shutil

    tmp = folder + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)  # left by an interrupted run
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    for name, obj in (extra or {}).items():
        with open(os.path.join(tmp, name), "w") as f:
            json.dump(obj, f, indent=1)
    os.makedirs(os.path.dirname(folder) or ".", exist_ok=True)
    if os.path.exists(folder):  # retraining into an existing folder: os.replace needs it gone
        shutil.rmtree(folder)
    os.replace(tmp, folder)
    return folder


def is_built(folder: str) -> bool:
    return os.path.exists(os.path.join(folder, "config.json"))


def build(folder: str | None = None) -> str:
    """Writes a random-weight checkpoint (model + tokenizer) into `folder` unless it is there."""
    folder = folder or os.path.join(cache_root(), RANDOM_NAME)
    if not is_built(folder):
        tokenizer = build_tokenizer(CONFIG["vocab_size"])
        save_atomically(folder, new_model(tokenizer), tokenizer)
    return folder


def build_trained(folder: str | None = None, steps: int | None = None, **train_kw) -> str:
    """Writes a checkpoint trained on `tpu` for `steps` steps into `folder`
    unless it is there (see train_tiny.train_checkpoint for train_kw)."""
    from .train_tiny import DEFAULT_STEPS, train_checkpoint

    steps = DEFAULT_STEPS if steps is None else steps
    folder = folder or default_folder(steps)
    if not is_built(folder):
        train_checkpoint(folder, steps=steps, **train_kw)
    return folder
