"""A small Qwen3-architecture checkpoint with random weights and a byte-level
BPE tokenizer trained on a few sentences, written once into a cache folder.
Nothing is downloaded: the main job runs on a machine with no hub access."""
import os

import torch

CORPUS = [
    "PyTorch programs run on XLA devices through the PJRT C API.",
    "A tensor on the tpu device lives in a storage slot that holds a device buffer.",
    "Every op is lowered to StableHLO, compiled once, and cached by its static facts.",
    "The model generates tokens one at a time with a static key value cache.",
    "Eager execution is the default; torch.compile lowers whole graphs.",
] * 20

CONFIG = dict(vocab_size=512, hidden_size=256, intermediate_size=768, num_hidden_layers=4,
              num_attention_heads=8, num_key_value_heads=4, head_dim=32, max_position_embeddings=512,
              tie_word_embeddings=True)


def default_folder() -> str:
    root = os.environ.get("TORCH_TPU_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "torch_tpu"))
    return os.path.join(root, "qwen3-tiny-random")


def build_tokenizer(vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    special = ["<pad>", "<s>", "</s>", "<unk>"]
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>")


def build(folder: str | None = None) -> str:
    """Writes the checkpoint (model + tokenizer) into `folder` unless it is there."""
    from transformers import AutoModelForCausalLM, Qwen3Config

    folder = folder or default_folder()
    if os.path.exists(os.path.join(folder, "config.json")):
        return folder
    tokenizer = build_tokenizer(CONFIG["vocab_size"])
    config = Qwen3Config(**CONFIG, pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    tmp = folder + ".partial"
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    os.replace(tmp, folder)
    return folder
