"""Small Stable Diffusion 3 and Flux pipelines with random weights, built from
configs and written once into a cache folder with save_pretrained, so they
load back with from_pretrained like a downloaded checkpoint. Nothing is
downloaded: the tokenizers are built here too (a byte-level CLIP BPE vocabulary
and a word-level T5 unigram vocabulary). The images are noise; the point is
the path (every component, scheduler and tokenizer of the real pipelines).

Sizes: the VAE has four blocks (scale factor 8, like the real ones), so a
64x64 image is an 8x8 latent: SD3 patches it 2x2 into 16 tokens, Flux packs it
2x2 into 16 tokens. Text: 32 CLIP tokens (one per character: no merges) plus `max_sequence_length` T5 tokens.
"""
import os

import torch

VERSION = 1  # bump when a config changes: the folder name carries it
KINDS = ("sd3", "flux")

# A few words for the T5 vocabulary (other words fall back to letters).
WORDS = ("a photo of the cat dog squirrel eating burger painting tpu chip red blue green on in with and "
         "astronaut riding horse moon").split()

CLIP_MAX_LENGTH = 32  # the real CLIP uses 77; the pipelines read it from the tokenizer


def default_folder(kind: str) -> str:
    root = os.environ.get("TORCH_TPU_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "torch_tpu"))
    return os.path.join(root, f"{kind}-tiny-random-v{VERSION}")


def clip_tokenizer():
    """CLIP's byte-level BPE with every byte (alone and word-final) in the vocabulary and no merges:
    each word becomes its characters, which is all a random-weight encoder needs."""
    from tokenizers import pre_tokenizers
    from transformers import CLIPTokenizer

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for ch in alphabet:
        vocab[ch] = len(vocab)
    for ch in alphabet:
        vocab[ch + "</w>"] = len(vocab)
    return CLIPTokenizer(vocab=vocab, merges=[], model_max_length=CLIP_MAX_LENGTH)


def t5_tokenizer():
    """T5's unigram tokenizer over WORDS and single letters (word pieces score higher than letters)."""
    from transformers import T5Tokenizer

    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("\u2581", -2.0)]
    vocab += [("\u2581" + w, -1.0) for w in WORDS]
    vocab += [(c, -3.0) for c in "abcdefghijklmnopqrstuvwxyz0123456789.,"]
    return T5Tokenizer(vocab=vocab, extra_ids=0)


T5_VOCAB = 128  # >= len(t5_tokenizer())
CLIP_VOCAB = 520  # >= len(clip_tokenizer()) = 514


def _clip_config():
    from transformers import CLIPTextConfig

    return CLIPTextConfig(vocab_size=CLIP_VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                          num_attention_heads=4, max_position_embeddings=CLIP_MAX_LENGTH, projection_dim=32,
                          hidden_act="gelu", bos_token_id=0, eos_token_id=1, pad_token_id=1)


def _t5_encoder():
    from transformers import T5Config, T5EncoderModel

    config = T5Config(vocab_size=T5_VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                      relative_attention_num_buckets=8, relative_attention_max_distance=32,
                      feed_forward_proj="gated-gelu", pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    return T5EncoderModel(config)


def _vae(latent_channels: int, shift_factor: float, scaling_factor: float):
    from diffusers import AutoencoderKL

    return AutoencoderKL(in_channels=3, out_channels=3, latent_channels=latent_channels,
                         down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4,
                         block_out_channels=(8, 8, 16, 16), layers_per_block=1, norm_num_groups=4,
                         sample_size=64, use_quant_conv=False, use_post_quant_conv=False,
                         shift_factor=shift_factor, scaling_factor=scaling_factor)


def build_sd3_components() -> dict:
    from diffusers import FlowMatchEulerDiscreteScheduler, SD3Transformer2DModel
    from transformers import CLIPTextModelWithProjection

    torch.manual_seed(0)
    # joint_attention_dim = T5's d_model; pooled = both CLIPs' projections; inner dim 4 x 8 = 32.
    transformer = SD3Transformer2DModel(sample_size=8, patch_size=2, in_channels=4, out_channels=4, num_layers=2,
                                        attention_head_dim=8, num_attention_heads=4, joint_attention_dim=32,
                                        caption_projection_dim=32, pooled_projection_dim=64, pos_embed_max_size=32)
    text_encoder = CLIPTextModelWithProjection(_clip_config())
    text_encoder_2 = CLIPTextModelWithProjection(_clip_config())
    text_encoder_3 = _t5_encoder()
    vae = _vae(4, shift_factor=0.0609, scaling_factor=1.5035)
    return dict(transformer=transformer, vae=vae, scheduler=FlowMatchEulerDiscreteScheduler(shift=3.0),
                text_encoder=text_encoder, tokenizer=clip_tokenizer(),
                text_encoder_2=text_encoder_2, tokenizer_2=clip_tokenizer(),
                text_encoder_3=text_encoder_3, tokenizer_3=t5_tokenizer())


def build_flux_components() -> dict:
    from diffusers import FlowMatchEulerDiscreteScheduler, FluxTransformer2DModel
    from transformers import CLIPTextModel

    torch.manual_seed(0)
    # in_channels = 4 latent channels x the 2x2 packing; rope axes sum to the head dim.
    transformer = FluxTransformer2DModel(patch_size=1, in_channels=16, num_layers=1, num_single_layers=2,
                                         attention_head_dim=16, num_attention_heads=2, joint_attention_dim=32,
                                         pooled_projection_dim=32, axes_dims_rope=[4, 4, 8])
    scheduler = FlowMatchEulerDiscreteScheduler(use_dynamic_shifting=True, base_shift=0.5, max_shift=1.15,
                                                base_image_seq_len=16, max_image_seq_len=256)
    return dict(transformer=transformer, vae=_vae(4, shift_factor=0.1159, scaling_factor=0.3611),
                scheduler=scheduler, text_encoder=CLIPTextModel(_clip_config()), tokenizer=clip_tokenizer(),
                text_encoder_2=_t5_encoder(), tokenizer_2=t5_tokenizer(), image_encoder=None, feature_extractor=None)


def pipeline_class(kind: str):
    import diffusers

    return {"sd3": diffusers.StableDiffusion3Pipeline, "flux": diffusers.FluxPipeline}[kind]


def build(kind: str, folder: str | None = None) -> str:
    """Writes the pipeline `kind` ("sd3" or "flux") into `folder` unless it is there; returns the folder."""
    folder = folder or default_folder(kind)
    if os.path.exists(os.path.join(folder, "model_index.json")):
        return folder
    components = {"sd3": build_sd3_components, "flux": build_flux_components}[kind]()
    pipe = pipeline_class(kind)(**components)
    tmp = f"{folder}.partial-{os.getpid()}"
    pipe.save_pretrained(tmp)
    os.makedirs(os.path.dirname(os.path.abspath(folder)), exist_ok=True)
    try:
        os.replace(tmp, folder)
    except OSError:  # another process wrote it first
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return folder

