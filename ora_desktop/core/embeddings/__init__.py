"""Embedding providers: text in, one unit-length float32 vector per text out.

* :class:`WordLlamaProvider` (the default) — the 256-dimension ``l2_supercat`` model that ships
  inside the ``wordllama`` wheel: works offline on a fresh machine, no download ever;
* :class:`HttpProvider` — any OpenAI-compatible ``/v1/embeddings`` endpoint (Ollama, LM Studio,
  a hosted API); the key comes from the config or the environment and is never logged;
* :class:`FastEmbedProvider` — ``fastembed`` (an optional extra; downloads its model on first use).

:func:`provider_from_config` picks one from the ``[embeddings]`` table of the TOML config.
"""

from .base import EmbeddingError, Provider, normalize
from .providers import (
    FastEmbedProvider,
    HttpProvider,
    WordLlamaProvider,
    configured_provider,
    default_provider,
    provider_from_config,
)

__all__ = [
    "EmbeddingError", "FastEmbedProvider", "HttpProvider", "Provider", "WordLlamaProvider",
    "configured_provider", "default_provider", "normalize", "provider_from_config",
]
