"""Submissions written the way public GPT code is written (nanoGPT, Hugging Face, "LLMs from scratch"), each with
one definition that is right in one mode and wrong in another: in eval mode, under autograd, or when called again.

Each replaces one definition of the reference package with a whole rewrite (not an edit of the reference's text,
as the known mistakes are), so the hidden checks are tried on code shaped as the field shapes it.
"""

from __future__ import annotations

import ast
import shutil
from dataclasses import dataclass
from pathlib import Path

from autograder.spec.assignment import Assignment


@dataclass(frozen=True)
class FieldSubmission:
    """One definition written the field's way.

    Attributes:
        id: A name for the test ids.
        assignment: The assignment's name.
        module: The module holding the definition.
        name: The top-level definition it replaces.
        task: The one task it must cost points.
        source: The definition's text.
    """

    id: str
    assignment: str
    module: str
    name: str
    task: str
    source: str


NANOGPT_TINY_GPT = FieldSubmission("nanogpt_last_position_in_eval", "assignment3", "tiny_gpt", "TinyGPT",
                                   "tiny_gpt", '''
class TinyGPT(nn.Module):
    """GPT the nanoGPT way: in eval mode only the last position goes through the head."""

    def __init__(self, vocab: int = VOCAB, dim: int = 64, heads: int = 4, depth: int = 2) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.register_buffer("positions", sinusoidal_positions(MAX_LENGTH, dim))
        self.blocks = nn.ModuleList([TransformerBlock(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def embed(self, ids):
        b, t = ids.size()
        if t > self.positions.size(0):
            raise ValueError(f"Cannot forward sequence of length {t}, block size is only {self.positions.size(0)}")
        return self.tokens(ids) + self.positions[:t]

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x, causal=True)
        x = self.norm(x)
        if self.training:
            return self.head(x)
        # inference-time mini-optimization: only forward the head on the very last position
        return self.head(x[:, [-1], :])

    def attention_maps(self, ids):
        x = self.embed(ids)
        maps = []
        for block in self.blocks:
            maps.append(block.attn.attention_weights(block.norm1(x), causal=True))
            x = block(x, causal=True)
        return maps
''')

NO_GRAD_EMBEDDING_TINY_GPT = FieldSubmission("embedding_under_no_grad", "assignment3", "tiny_gpt", "TinyGPT",
                                             "tiny_gpt", '''
class TinyGPT(nn.Module):
    """The positions are fixed, so the embedding is computed without autograd (the token table then never learns)."""

    def __init__(self, vocab=VOCAB, dim=64, heads=4, depth=2):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.register_buffer("positions", sinusoidal_positions(MAX_LENGTH, dim))
        self.blocks = nn.ModuleList(TransformerBlock(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    @torch.no_grad()
    def embed(self, ids):
        if ids.shape[1] > len(self.positions):
            raise ValueError("at most 64 tokens")
        return self.tokens(ids) + self.positions[: ids.shape[1]]

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x, causal=True)
        return self.head(self.norm(x))

    def attention_maps(self, ids):
        x, maps = self.embed(ids), []
        for block in self.blocks:
            maps.append(block.attn.attention_weights(block.norm1(x), causal=True))
            x = block(x, causal=True)
        return maps
''')

HF_CACHE_ATTENTION = FieldSubmission("past_key_values_in_eval", "assignment3", "attention", "MultiHeadAttention",
                                     "multi_head_attention", '''
class MultiHeadAttention(nn.Module):
    """Attention the Hugging Face way: at inference (eval mode) the keys and values of earlier calls are kept."""

    def __init__(self, dim, heads):
        super().__init__()
        if dim % heads != 0:
            raise ValueError("heads must divide dim")
        self.heads = heads
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)
        self.past_key_value = None

    def split(self, x):
        return split_heads(x, self.heads)

    def _project(self, x, context):
        source = x if context is None else context
        q, k, v = self.split(self.q_proj(x)), self.split(self.k_proj(source)), self.split(self.v_proj(source))
        use_cache = not self.training
        if use_cache:
            if self.past_key_value is not None:
                k = torch.cat([self.past_key_value[0], k], dim=2)
                v = torch.cat([self.past_key_value[1], v], dim=2)
            self.past_key_value = (k, v)
        return q, k, v

    def forward(self, x, context=None, causal=False):
        q, k, v = self._project(x, context)
        out, _ = scaled_dot_product_attention(q, k, v, causal=causal)
        return self.out_proj(merge_heads(out))

    def attention_weights(self, x, context=None, causal=False):
        q, k, v = self._project(x, context)
        return scaled_dot_product_attention(q, k, v, causal=causal)[1]
''')

NO_GRAD_WEIGHTS_ATTENTION = FieldSubmission("weights_for_plotting_reused", "assignment3", "attention",
                                            "MultiHeadAttention", "multi_head_attention", '''
class MultiHeadAttention(nn.Module):
    """forward reuses attention_weights, which is meant for plots and so runs without autograd."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"{heads} heads do not divide {dim}")
        self.heads = heads
        self.q_proj, self.k_proj = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.v_proj, self.out_proj = nn.Linear(dim, dim), nn.Linear(dim, dim)

    def split(self, x):
        return split_heads(x, self.heads)

    def forward(self, x, context=None, causal=False):
        weights = self.attention_weights(x, context, causal)
        values = self.split(self.v_proj(x if context is None else context))
        return self.out_proj(merge_heads(weights @ values))

    @torch.no_grad()
    def attention_weights(self, x, context=None, causal=False):
        source = x if context is None else context
        q, k = self.split(self.q_proj(x)), self.split(self.k_proj(source))
        v = self.split(self.v_proj(source))
        return scaled_dot_product_attention(q, k, v, causal=causal)[1]
''')

CAUSAL_AT_INFERENCE_BLOCK = FieldSubmission("causal_at_inference", "assignment3", "attention", "TransformerBlock",
                                            "transformer_block", '''
class TransformerBlock(nn.Module):
    """A decoder block: at inference (eval mode) it always attends causally, whatever the caller asks."""

    def __init__(self, dim, heads, mlp_ratio=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = MultiHeadAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_ratio * dim), nn.GELU(), nn.Linear(mlp_ratio * dim, dim))

    def forward(self, x, causal=False):
        if not self.training:
            causal = True  # generation is autoregressive
        x = x + self.attn(self.norm1(x), causal=causal)
        x = x + self.mlp(self.norm2(x))
        return x
''')

INFERENCE_CACHE_DECODER = FieldSubmission("decoder_cache_on_the_layer_in_eval", "assignment3", "kv_cache",
                                          "decode_with_cache", "kv_cache_decode", '''
def decode_with_cache(layer, tokens):
    """At inference (eval mode) the cache is kept on the layer, as a generation loop would keep it."""
    if layer.training or not hasattr(layer, "cache"):
        layer.cache = {"k": None, "v": None}
    cache = layer.cache
    outputs = []
    for t in range(tokens.shape[1]):
        token = tokens[:, t : t + 1]
        q = layer.split(layer.q_proj(token))
        k, v = layer.split(layer.k_proj(token)), layer.split(layer.v_proj(token))
        cache["k"] = k if cache["k"] is None else torch.cat([cache["k"], k], dim=2)
        cache["v"] = v if cache["v"] is None else torch.cat([cache["v"], v], dim=2)
        out, _ = scaled_dot_product_attention(q, cache["k"], cache["v"])
        outputs.append(layer.out_proj(merge_heads(out)))
    return torch.cat(outputs, dim=1)
''')

INFERENCE_CACHE_SELF_ATTENTION = FieldSubmission("kv_cache_in_eval", "assignment2", "modules", "SelfAttention",
                                                 "self_attention_module", '''
class SelfAttention(nn.Module):
    """Self-attention with a KV cache for generation ("LLMs from scratch" style), switched on in eval mode."""

    def __init__(self, d_in, d_out, bias=False):
        super().__init__()
        self.W_q = nn.Linear(d_in, d_out, bias=bias)
        self.W_k = nn.Linear(d_in, d_out, bias=bias)
        self.W_v = nn.Linear(d_in, d_out, bias=bias)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x):
        keys_new, values_new, queries = self.W_k(x), self.W_v(x), self.W_q(x)
        if not self.training:
            if self.cache_k is None:
                self.cache_k, self.cache_v = keys_new, values_new
            else:
                self.cache_k = torch.cat([self.cache_k, keys_new], dim=-2)
                self.cache_v = torch.cat([self.cache_v, values_new], dim=-2)
            keys, values = self.cache_k, self.cache_v
        else:
            keys, values = keys_new, values_new
        attn_scores = queries @ keys.transpose(-2, -1)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values
''')

SUBMISSIONS = [NANOGPT_TINY_GPT, NO_GRAD_EMBEDDING_TINY_GPT, HF_CACHE_ATTENTION, NO_GRAD_WEIGHTS_ATTENTION,
               CAUSAL_AT_INFERENCE_BLOCK, INFERENCE_CACHE_DECODER, INFERENCE_CACHE_SELF_ATTENTION]


def write_field_package(assignment: Assignment, submission: FieldSubmission, folder: Path) -> Path:
    """The reference package with ``submission``'s definition in place of the reference's, written to ``folder``."""
    shutil.copytree(assignment.reference, folder)
    path = folder / f"{submission.module}.py"
    source = path.read_text()
    node = next(n for n in ast.parse(source).body if getattr(n, "name", None) == submission.name)
    lines = source.splitlines(keepends=True)
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
    path.write_text("".join(lines[:start]) + submission.source.strip() + "\n" + "".join(lines[node.end_lineno:]))
    return folder
