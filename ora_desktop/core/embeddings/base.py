"""What every embedding provider offers (see :mod:`ora_desktop.core.embeddings`)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import OraError


class EmbeddingError(OraError):
    """A provider could not load its model or embed text (the message says which and why)."""


@runtime_checkable
class Provider(Protocol):
    """``embed(texts)`` returns a ``(len(texts), dimensions)`` float32 matrix of unit rows."""

    #: Provider kind, e.g. ``wordllama``; with ``model`` it names the vectors in a sidecar.
    name: str
    model: str
    dimensions: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in order."""
        ...


def normalize(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (all-zero rows stay zero), as C-contiguous float32."""
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.maximum(norms, 1e-12, out=norms)
    matrix /= norms
    return matrix
