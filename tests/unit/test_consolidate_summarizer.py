"""An optional OpenAI-compatible summarizer for consolidation ([summarizer] in config.toml),
against a small local endpoint started here: it writes the summaries when asked, the extractive
summary stays the default and stands in, with a note saying why, on HTTP 500 or a timeout; a bad
[summarizer] table is one clear line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.operations import journal
from ora_desktop.core.operations.consolidate import MAX_SUMMARY_CHARS, consolidate
from tests.chat_endpoint import ChatEndpoint, chat_endpoint
from tests.unit.search_support import make_file
from tests.unit.test_cli_helpers import assert_one_line_error, cli, content_digest
from tests.unit.test_consolidate_review import ROWS, T


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_file(ora_home / "sites" / "s" / "ora.site.db", ROWS)


@pytest.fixture
def endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatEndpoint]:
    with chat_endpoint() as server:
        monkeypatch.setenv("ORA_DESKTOP_CONFIG", str(server.config(tmp_path / "config.toml",
                                                                    api_key_env="TEST_SUMMARIZER_KEY")))
        monkeypatch.setenv("TEST_SUMMARIZER_KEY", "sk-secret")
        yield server


def test_endpoint_writes_summaries_that_name_what_they_merged(db: Path, endpoint: ChatEndpoint) -> None:
    with open_store(db) as store:
        extractive = consolidate(store, dry_run=True)
        assert not endpoint.requests  # the extractive summary is the default
        result = consolidate(store, dry_run=False, clusters=[1], summarizer="endpoint")
        cluster = result.clusters[0]
        assert cluster.summarizer == "endpoint" and cluster.note == f"written by tiny-test at {endpoint.url}"
        assert cluster.summary == f"{endpoint.answer}\n\nMerged from 3 memories: {', '.join(cluster.ids)}."
        assert store.get(result.summaries[0]).content == cluster.summary
        assert journal.entries(store)[0].label.endswith(f"(summary: endpoint; written by tiny-test at {endpoint.url})")
    assert result.clusters[1] == extractive.clusters[1]  # a cluster not applied is not sent
    sent = endpoint.requests[0]
    assert len(endpoint.requests) == 1 and sent["model"] == "tiny-test"
    assert all(memory_id in sent["messages"][1]["content"] for memory_id in cluster.ids)
    assert str(MAX_SUMMARY_CHARS) in sent["messages"][0]["content"]
    assert endpoint.headers[0]["Authorization"] == "Bearer sk-secret"


def test_config_lists_the_summarizer(capsys, endpoint: ChatEndpoint) -> None:
    settings = {s["key"]: s["value"] for s in cli(capsys, "config", "--json").json()["settings"]}
    assert settings["summarizer.url"] == endpoint.url and settings["summarizer.model"] == "tiny-test"
    assert settings["summarizer.api_key_env"] == "TEST_SUMMARIZER_KEY"  # the variable's name, never its value


def test_a_long_answer_is_cut_within_the_limit(db: Path, endpoint: ChatEndpoint) -> None:
    endpoint.answer = "The tax is computed per region. " * 100
    with open_store(db, readonly=True) as store:
        cluster = consolidate(store, dry_run=True, summarizer="endpoint").clusters[0]
    body, merged = cluster.summary.rsplit("\n\n", 1)
    assert len(body) <= MAX_SUMMARY_CHARS and body.endswith("region. …")
    assert merged.startswith("Merged from 3 memories:")


def test_http_500_falls_back_to_extractive_with_a_note(capsys, db: Path, endpoint: ChatEndpoint) -> None:
    endpoint.mode = "500"
    with open_store(db, readonly=True) as store:
        extractive = consolidate(store, dry_run=True)
    out = cli(capsys, "consolidate", *T, "--summarizer", "endpoint")
    assert out.code == 0, out
    assert f"summary by extractive (extractive summary instead: the summarizer tiny-test at {endpoint.url} " \
           "answered HTTP 500" in out.out
    assert len(endpoint.requests) == 1  # not asked again for the second cluster
    data = cli(capsys, "consolidate", *T, "--summarizer", "endpoint", "--apply", "--cluster", "1", "--json").json()
    applied = data["clusters"][0]
    assert applied["summarizer"] == "extractive" and "HTTP 500" in applied["note"]
    assert applied["summary"] == extractive.clusters[0].summary
    step = cli(capsys, "undo", *T, "--list", "--json").json()[0]
    assert "(summary: extractive; extractive summary instead:" in step["label"] and "HTTP 500" in step["label"]
    assert "sk-secret" not in out.out + out.err + str(data) + str(step)


def test_timeout_falls_back_to_extractive(tmp_path: Path, db: Path, endpoint: ChatEndpoint) -> None:
    endpoint.mode = "slow"
    endpoint.config(tmp_path / "config.toml", timeout=0.5)
    with open_store(db, readonly=True) as store:
        extractive = consolidate(store, dry_run=True)
        result = consolidate(store, dry_run=True, summarizer="endpoint")
    assert [c.summary for c in result.clusters] == [c.summary for c in extractive.clusters]
    assert all(c.summarizer == "extractive" and "did not answer within 0.5 s" in c.note for c in result.clusters)


@pytest.mark.parametrize(("table", "words"), [
    ('url = "localhost:11434"\nmodel = "m"', ("[summarizer] url", "http://")),
    ('url = "http://localhost:1/v1"', ("[summarizer] model",)),
    ('url = "http://localhost:1/v1"\nmodel = "m"\ntimeout = -1', ("[summarizer] timeout",)),
    ('url = "http://localhost:1/v1"\nmodel = "m"\nkey = "x"', ("[summarizer]", "unknown setting", "key")),
])
def test_bad_summarizer_config_is_one_clear_line(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, db: Path,
                                                 table: str, words: tuple[str, ...]) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(f"[summarizer]\n{table}\n")
    monkeypatch.setenv("ORA_DESKTOP_CONFIG", str(config))
    before = content_digest(db)
    assert_one_line_error(cli(capsys, "consolidate", *T, "--summarizer", "endpoint", "--apply"), *words)
    assert content_digest(db) == before


def test_endpoint_without_a_summarizer_table_is_one_clear_line(capsys, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch, db: Path) -> None:
    monkeypatch.setenv("ORA_DESKTOP_CONFIG", str(tmp_path / "none.toml"))
    before = content_digest(db)
    assert_one_line_error(cli(capsys, "consolidate", *T, "--summarizer", "endpoint", "--apply"),
                          "--summarizer endpoint", "[summarizer]")
    assert content_digest(db) == before
