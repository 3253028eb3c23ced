"""Embedding providers: the bundled model offline, and an OpenAI-compatible HTTP endpoint served
by a real local HTTP server."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from ora_desktop.core.embeddings import EmbeddingError, HttpProvider, WordLlamaProvider, provider_from_config


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a network connection fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("the bundled model tried to reach the network")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_bundled_model_loads_offline_and_embeds_meaning(no_network: None) -> None:
    provider = WordLlamaProvider()
    vectors = provider.embed(["User prefers JWT auth stored in httpOnly cookies",
                              "how should I store the auth token?",
                              "The office coffee machine is on the third floor", ""])
    assert vectors.shape == (4, 256) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-5)
    assert not vectors[3].any()  # an empty text is a zero vector, not NaN
    assert vectors[0] @ vectors[1] > vectors[2] @ vectors[1] + 0.2  # the paraphrase is nearer
    again = WordLlamaProvider().embed(["how should I store the auth token?"])
    assert np.array_equal(again[0], vectors[1])  # deterministic


def test_pooling_matches_wordllamas_own_embedding(no_network: None) -> None:
    import wordllama
    from wordllama import WordLlama

    texts = ["Deploys run through git push production main", "short", "a much longer sentence " * 20]
    theirs = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True).embed(texts, norm=True)
    assert np.allclose(WordLlamaProvider().embed(texts), theirs, atol=1e-5)


def test_truncated_dimensions_name_another_model() -> None:
    small = WordLlamaProvider(dimensions=64)
    assert small.model != WordLlamaProvider().model
    assert small.embed(["hello world"]).shape == (1, 64)
    with pytest.raises(EmbeddingError, match="dimensions"):
        WordLlamaProvider(dimensions=0)


class _Endpoint(BaseHTTPRequestHandler):
    seen: list[dict] = []
    status = 200

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if type(self).status != 200:
            self.send_response(type(self).status)
            self.end_headers()
            return
        data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(body["input"])]
        payload = json.dumps({"data": list(reversed(data))}).encode()  # out of order on purpose
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    _Endpoint.seen, _Endpoint.status = [], 200
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_http_provider_talks_to_an_openai_compatible_server(endpoint: str) -> None:
    provider = HttpProvider(endpoint, "nomic-embed-text", api_key="sk-secret-123", batch=2)
    vectors = provider.embed(["a", "bbb", "cc"])
    assert vectors.shape == (3, 3) and provider.dimensions == 3
    expected = np.array([[1, 1, 0], [3, 1, 0], [2, 1, 0]], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected)  # reordered by "index", normalized
    assert [s["path"] for s in _Endpoint.seen] == ["/v1/embeddings", "/v1/embeddings"]  # two batches
    assert _Endpoint.seen[0]["auth"] == "Bearer sk-secret-123"
    assert _Endpoint.seen[0]["body"] == {"model": "nomic-embed-text", "input": ["a", "bbb"]}
    assert "sk-secret" not in repr(provider)


def test_http_errors_name_the_endpoint_never_the_key(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORA_DESKTOP_EMBEDDINGS_KEY", "sk-from-env-999")
    provider = provider_from_config({"provider": "http", "url": endpoint, "model": "m"})
    _Endpoint.status = 500
    with pytest.raises(EmbeddingError) as caught:
        provider.embed(["x"])
    assert endpoint in str(caught.value) and "500" in str(caught.value)
    assert "sk-from-env" not in str(caught.value)
    assert _Endpoint.seen[-1]["auth"] == "Bearer sk-from-env-999"
    closed = HttpProvider("http://127.0.0.1:9", "m", api_key="sk-secret-123", timeout=2)
    with pytest.raises(EmbeddingError, match="cannot be reached") as caught:
        closed.embed(["x"])
    assert "sk-secret" not in str(caught.value)


def test_config_names_an_unknown_provider() -> None:
    with pytest.raises(EmbeddingError, match="'bogus' is not one of"):
        provider_from_config({"provider": "bogus"})
    with pytest.raises(EmbeddingError, match="needs url and model"):
        provider_from_config({"provider": "http"})


def test_config_chooses_the_http_provider_for_the_vectors(endpoint: str, isolated_dirs: Path, ora_home: Path) -> None:
    from ora_desktop.core.config import config_path
    from ora_desktop.core.search.semantic import ensure_vectors
    from tests.unit.search_support import make_file

    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(f'[embeddings]\nprovider = "http"\nurl = "{endpoint}"\nmodel = "tiny"\n')
    db = make_file(ora_home / "sites" / "s" / "ora.site.db", [{"id": "a", "content": "hello"}])
    index = ensure_vectors(db)
    assert (index.provider.name, index.provider.model) == ("http", "tiny")
    assert _Endpoint.seen and _Endpoint.seen[0]["body"]["input"] == ["hello"]


def test_config_with_an_unknown_provider_is_refused(isolated_dirs: Path) -> None:
    from ora_desktop.core.config import Config, ConfigError, config_path

    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('[embeddings]\nprovider = "magic"\n')
    with pytest.raises(ConfigError, match="provider 'magic' is not one of"):
        Config.load()
    config_path().write_text('[embeddings]\nurl_typo = "x"\n')
    with pytest.raises(ConfigError, match="unknown setting"):
        Config.load()


TRICKY = ["The API rate limit is 100 requests per minute per key", "per per per new new words twice",
          "a  b   c", "  leading spaces", "trailing spaces  ", "tab\there\nnew line", "日本語のテキスト",
          "émigré café naïve", " ", "x" * 300, "mixed: ünïcödé, digits 12345 and `code()`"]


def test_word_at_a_time_tokens_are_the_tokenizers_own() -> None:
    """The piece cache (one BPE per distinct word) pools exactly the tokenizer's token ids."""
    provider = WordLlamaProvider()
    model = provider._load()
    ids = [model.tokenizer.encode(t, add_special_tokens=False).ids for t in TRICKY]
    expected = np.stack([model.embedding[i].mean(axis=0) for i in ids])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(provider.embed(TRICKY), expected, atol=1e-6)


def test_a_full_piece_cache_starts_over_without_mixing_texts() -> None:
    from ora_desktop.core.embeddings.providers import PieceTable

    provider = WordLlamaProvider()
    model = provider._load()
    texts = [f"memory {i} mentions word{i} and word{i * 7} once" for i in range(300)] + TRICKY
    small = PieceTable(model.tokenizer.model, model.embedding, capacity=40)  # overflows many times
    out = np.zeros((len(texts), 256), dtype=np.float32)
    small.pool(texts, out)
    assert len(small.row_of) <= 40
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    assert np.allclose(out, WordLlamaProvider().embed(texts), atol=1e-6)


def test_long_texts_are_embedded_from_their_first_characters() -> None:
    from ora_desktop.core.embeddings.providers import MAX_CHARS

    provider = WordLlamaProvider()
    head = "deploys run through git push production main " * (MAX_CHARS // 45 + 1)
    assert np.allclose(provider.embed([head + "coffee " * 5000]), provider.embed([head[:MAX_CHARS]]), atol=1e-6)
