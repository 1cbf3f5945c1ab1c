"""Small models shared by the compile tests and bench/compile.py."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d=16, h=32, out=5):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(d, h), nn.Linear(h, h), nn.Linear(h, out)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.gelu(self.fc1(x)))))


class Block(nn.Module):
    """A pre-norm transformer block on token ids: causal self-attention, SiLU
    gated MLP, RMSNorm and LayerNorm, tied to a vocabulary head."""

    def __init__(self, d=32, heads=4, vocab=50):
        super().__init__()
        self.heads = heads
        self.emb = nn.Embedding(vocab, d)
        self.norm1, self.norm2, self.norm_out = nn.RMSNorm(d), nn.LayerNorm(d), nn.RMSNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        self.up, self.gate, self.down = nn.Linear(d, 2 * d), nn.Linear(d, 2 * d), nn.Linear(2 * d, d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, tokens):
        x = self.emb(tokens)
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        x = x + self.down(F.silu(self.gate(h)) * self.up(h))
        return self.head(self.norm_out(x))
