"""Tiny checkpoints of the seed's architectures, built from configs with random
weights, saved with save_pretrained and loaded back from the folder (nothing is
downloaded from a hub)."""
import os

import torch

VOCAB = 128


def _common(**kw):
    base = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                max_position_embeddings=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    base.update(kw)
    return base


def config(arch):
    import transformers as tf
    if arch == "qwen3":
        return tf.Qwen3Config(**_common())
    if arch == "llama":
        return tf.LlamaConfig(**_common())
    if arch == "gemma3":
        # Alternating sliding-window and global layers, as in the real models.
        return tf.Gemma3TextConfig(**_common(num_hidden_layers=3, sliding_window=8,
                                             layer_types=["sliding_attention", "sliding_attention",
                                                          "full_attention"]))
    if arch == "qwen3_moe":
        return tf.Qwen3MoeConfig(**_common(num_experts=4, num_experts_per_tok=2,
                                           moe_intermediate_size=32, decoder_sparse_step=1))
    if arch == "bert":
        return tf.BertConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=96,
                             num_hidden_layers=2, num_attention_heads=4,
                             max_position_embeddings=128, pad_token_id=0)
    raise ValueError(arch)


CAUSAL_LM = ["qwen3", "llama", "gemma3", "qwen3_moe"]
ALL = CAUSAL_LM + ["bert"]


def model_class(arch):
    import transformers as tf
    if arch == "bert":
        return tf.BertForMaskedLM
    if arch == "gemma3":
        return tf.Gemma3ForCausalLM
    return tf.AutoModelForCausalLM


def build(arch, folder, seed=0):
    """Writes a random-weight checkpoint of `arch` into `folder` (once) and returns it."""
    folder = os.fspath(folder)
    if not os.path.exists(os.path.join(folder, "config.json")):
        torch.manual_seed(seed)
        cls = model_class(arch)
        model = cls.from_config(config(arch)) if hasattr(cls, "from_config") else cls(config(arch))
        model.save_pretrained(folder)
    return folder
