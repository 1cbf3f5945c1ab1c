"""Trainer picks tpu:0 by itself and trains a tiny causal LM for 10 steps with
the same losses as the CPU run."""
import torch
from accelerate.state import AcceleratorState
from torch.testing import assert_close
from transformers import Trainer, TrainingArguments

import tiny_models as tm


class TokenDataset(torch.utils.data.Dataset):
    """Fixed random token sequences; labels are the inputs (causal LM)."""

    def __init__(self, n=40, length=16, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(3, tm.VOCAB, (n, length), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def train(folder, out_dir, use_cpu, bf16=False):
    # Accelerate keeps its device in a process-wide singleton; two Trainers
    # on different devices in one process need it reset in between.
    AcceleratorState._reset_state(reset_partial_state=True)
    model = tm.model_class("qwen3").from_pretrained(folder, dtype=torch.float32)
    args = TrainingArguments(output_dir=str(out_dir), max_steps=10, per_device_train_batch_size=4,
                             learning_rate=1e-3, logging_steps=1, save_strategy="no", report_to=[],
                             use_cpu=use_cpu, seed=0, dataloader_num_workers=0, disable_tqdm=True,
                             bf16=bf16)
    trainer = Trainer(model=model, args=args, train_dataset=TokenDataset())
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    return trainer.args.device, next(trainer.model.parameters()).device, losses


def test_trainer_uses_tpu_and_matches_cpu(checkpoints, tmp_path):
    cpu_device, _, cpu_losses = train(checkpoints["qwen3"], tmp_path / "cpu", use_cpu=True)
    tpu_device, param_device, tpu_losses = train(checkpoints["qwen3"], tmp_path / "tpu", use_cpu=False)
    assert cpu_device.type == "cpu"
    assert tpu_device == torch.device("tpu", 0) and param_device == torch.device("tpu", 0)
    assert len(tpu_losses) == 10
    assert_close(torch.tensor(tpu_losses), torch.tensor(cpu_losses), rtol=1e-4, atol=0)


def test_trainer_bf16_autocast_on_tpu_matches_cpu(checkpoints, tmp_path):
    """bf16=True: the Trainer's autocast region runs on tpu (AutocastPrivateUse1)."""
    _, _, cpu_losses = train(checkpoints["qwen3"], tmp_path / "cpu", use_cpu=True, bf16=True)
    tpu_device, _, tpu_losses = train(checkpoints["qwen3"], tmp_path / "tpu", use_cpu=False, bf16=True)
    assert tpu_device == torch.device("tpu", 0)
    assert len(tpu_losses) == 10
    # CPU autocast keeps softmax and norms in bfloat16, tpu (CUDA's op lists) in float32
    assert_close(torch.tensor(tpu_losses), torch.tensor(cpu_losses), rtol=1e-2, atol=0)
    _, _, f32_losses = train(checkpoints["qwen3"], tmp_path / "f32", use_cpu=False)
    assert tpu_losses != f32_losses, "bf16=True trained exactly like float32: autocast did not apply"
