"""Consolidation summaries from an OpenAI-compatible chat endpoint (``[summarizer]`` in
``config.toml``: a local Ollama or llama.cpp server, or a hosted one).

The extractive summary (:func:`.consolidate.extractive_summary`) stays the default and is the
fallback: :func:`endpoint_summary` raises :class:`SummarizerError` (one line: what failed, never
the key) on any failure — unreachable, a timeout, an HTTP error, an answer without text — and the
caller keeps the extractive summary with that reason as its note. The model is asked for at most
``max_chars`` characters, keeping code, paths and commands verbatim; a longer answer is cut at a
line or sentence end. The line naming what was merged is ours, added to whatever the model wrote.
Plain ``urllib.request``: no SDK.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..config import Config
from ..errors import OraError
from ..records import Memory

EXTRACTIVE, ENDPOINT = "extractive", "endpoint"
SUMMARIZERS = (EXTRACTIVE, ENDPOINT)
_SENTENCE = re.compile(r"(?<=[.!?])\s")
PROMPT = ("You merge an AI agent's memories on one topic into one memory. Keep code, file paths, commands and "
          "numbers exactly as written. Answer with the merged memory only, in plain sentences, at most {chars} "
          "characters.")


class SummarizerError(OraError):
    """The endpoint gave no usable summary (the message says why, in one line)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where to ask: ``{url}/chat/completions`` with ``model``; the key read from ``api_key_env``."""

    url: str
    model: str
    api_key_env: str | None = None
    timeout: float = 60.0

    def __str__(self) -> str:
        return f"{self.model} at {self.url}"


def configured_endpoint(config: Config | None = None) -> Endpoint:
    """The ``[summarizer]`` endpoint of the user's ``config.toml``; ``OraError`` naming the file
    when there is none (a bad value: ``ConfigError`` naming the key)."""
    config = config or Config.load()
    table = config.summarizer()
    if table is None:
        raise OraError(f"--summarizer endpoint: {config.path} has no [summarizer] table; add url and model "
                       "(e.g. url = \"http://localhost:11434/v1\", model = \"llama3.2\") or use the extractive one")
    return Endpoint(table["url"], table["model"], table["api_key_env"], table["timeout"])


def endpoint_summary(endpoint: Endpoint, memories: Sequence[Memory], max_chars: int) -> str:
    """The endpoint's summary of ``memories`` (at most ``max_chars``, before the merged line)."""
    listing = "\n\n".join(f"Memory {m.id} ({m.type or 'fact'}):\n{m.content}" for m in memories)
    answer = _ask(endpoint, [{"role": "system", "content": PROMPT.format(chars=max_chars)},
                             {"role": "user", "content": listing}], max_chars)
    text = _within(answer.strip(), max_chars)
    if not text:
        raise SummarizerError(f"the summarizer {endpoint} answered with no text")
    return f"{text}\n\nMerged from {len(memories)} memories: {', '.join(m.id for m in memories)}."


def _ask(endpoint: Endpoint, messages: list[dict[str, str]], max_chars: int) -> str:
    body = json.dumps({"model": endpoint.model, "messages": messages, "temperature": 0.2,
                       "max_tokens": max(64, max_chars // 2), "stream": False}).encode()
    headers = {"Content-Type": "application/json"}
    key = os.environ.get(endpoint.api_key_env) if endpoint.api_key_env else None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(f"{endpoint.url}/chat/completions", data=body, headers=headers, method="POST")
    where = f"the summarizer {endpoint}"
    try:
        with urllib.request.urlopen(request, timeout=endpoint.timeout) as response:
            payload: Any = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise SummarizerError(f"{where} answered HTTP {exc.code} ({exc.reason})") from None
    except TimeoutError:
        raise SummarizerError(f"{where} did not answer within {endpoint.timeout:g} s") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            raise SummarizerError(f"{where} did not answer within {endpoint.timeout:g} s") from None
        raise SummarizerError(f"{where} cannot be reached ({reason})") from None
    except ValueError:
        raise SummarizerError(f"{where} did not answer JSON") from None
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise SummarizerError(f"{where} answered without choices[0].message.content") from None
    if not isinstance(content, str):
        raise SummarizerError(f"{where} answered without text")
    return content


def _within(text: str, max_chars: int) -> str:
    """``text``, or its longest start within ``max_chars`` ending at a line or sentence end."""
    if len(text) <= max_chars:
        return text
    head = text[:max_chars - 2]  # room for the ellipsis
    cut = max(head.rfind("\n"), *(m.start() for m in _SENTENCE.finditer(head)))
    return (head[:cut] if cut > max_chars // 3 else head).rstrip() + " …"


__all__ = ["ENDPOINT", "EXTRACTIVE", "SUMMARIZERS", "Endpoint", "SummarizerError", "configured_endpoint",
           "endpoint_summary"]
