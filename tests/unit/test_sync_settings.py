"""Sync without a server: redacting passwords, the [sync] settings, the schedule, the file's state."""

from __future__ import annotations

from pathlib import Path

import pytest

import ora_desktop
from ora_desktop.core import sync_settings as settings
from ora_desktop.core.config import Config, ConfigError
from ora_desktop.core.home import OraHome
from ora_desktop.core.scheduler import planned_jobs
from ora_desktop.core.sync import local, redact
from ora_desktop.core.sync.engine import identity
from ora_desktop.core.sync.redact import describe


def _config(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return Config.load(path)


@pytest.mark.parametrize("text", [
    "cannot connect to postgresql://ora:pa55w0rd@db.example.org:5432/ora",
    "conninfo host=db user=ora password=pa55w0rd dbname=ora",
    "conninfo host=db password = 'pa55w0rd' dbname=ora",
    "FATAL: password authentication failed for user ora (pa55w0rd)",
])
def test_passwords_never_survive_redaction(text: str) -> None:
    out = redact(text, "postgresql://ora:pa55w0rd@db.example.org/ora")
    assert "pa55w0rd" not in out and "***" in out


def test_the_server_is_described_without_its_password() -> None:
    assert describe("postgresql://ora:pa55w0rd@db.example.org:6432/team?sslmode=require") == \
        "postgresql://ora@db.example.org:6432/team"
    assert "pa55w0rd" not in describe("host=db password=pa55w0rd")


def test_sync_settings_per_site_and_agent(tmp_path: Path) -> None:
    config = _config(tmp_path, """
[sync]
url = "postgresql://ora@db/ora"
interval = "5m"
agents = ["ora", "writer"]

[sites.shop-eu.sync]
enabled = false

[sites.lab.sync]
url = "postgresql://ora@lab-db/ora"
interval = "1h"
agents = ["bot"]
""")
    assert settings.url_for(config, "anwe-sh") == "postgresql://ora@db/ora"
    assert settings.url_for(config, "lab") == "postgresql://ora@lab-db/ora"
    assert config.schedule("sync", "anwe-sh").value == 300 and config.schedule("sync", "lab").value == 3600
    assert settings.takes_part(config, "anwe-sh", "ora") and not settings.takes_part(config, "anwe-sh", "task-1")
    assert not settings.takes_part(config, "shop-eu", "ora")
    assert settings.takes_part(config, "lab", "bot") and not settings.takes_part(config, "lab", "ora")
    assert settings.url_for(settings.with_url(config, "postgresql://x@y/z"), "lab") == "postgresql://x@y/z"


@pytest.mark.parametrize("text, words", [
    ('[sync]\nurl = 5\n', "url: must be a text"),
    ('[sync]\nsecret = "x"\n', "unknown setting(s) secret"),
    ('[sync]\ninterval = "soon"\n', "is not an interval"),
    ('[sync]\nagents = "ora"\n', "agents: must be a list"),
    ('[sites.a.sync]\nenabled = "no"\n', "enabled: must be true or false"),
])
def test_bad_sync_settings_name_the_file_and_key(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(ConfigError, match="config.toml") as caught:
        _config(tmp_path, text)
    assert words in str(caught.value)


def test_the_scheduler_plans_sync_only_where_a_server_is_set(tmp_path: Path, ora_home: Path) -> None:
    home = OraHome(ora_home)
    home.create_agent("anwe-sh", "ora")
    home.create_agent("shop-eu", "support")
    none = _config(tmp_path, "")
    assert not [p for p in planned_jobs(none, home) if p.job == "sync"]
    some = _config(tmp_path, '[sync]\nurl = "postgresql://ora@db/ora"\nsites = ["anwe-sh"]\n')
    assert [(p.site, p.agent, p.interval) for p in planned_jobs(some, home) if p.job == "sync"] == [
        ("anwe-sh", "ora", 900)]


def test_status_of_a_file_never_synced_writes_nothing(ora_home: Path) -> None:
    from ora_desktop.core.operations.sync import status

    path = OraHome(ora_home).create_agent("anwe-sh", "ora")
    with ora_desktop.open_store(path) as store:
        store.add("one")
        mine = store.add("mine only")
        store.update(mine.id, sync_status="local_only")
    before = path.read_bytes()
    state = status(path, Config.defaults())
    assert (state.pending, state.last_sync, state.conflicts, state.configured) == (1, None, 0, False)
    assert path.read_bytes() == before
    with ora_desktop.open_store(path, readonly=True) as store:
        assert not store.has_table(local.STATE_TABLE)


def test_a_file_without_sync_columns_is_refused_clearly(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "site" / "old.site.db"
    path.parent.mkdir()
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT NOT NULL, created_at TEXT, updated_at TEXT)")
    conn.close()
    with ora_desktop.open_store(path, readonly=True) as store, pytest.raises(ora_desktop.OraError,
                                                                            match="no synced_at, sync_status"):
        local.require_columns(store)
    assert identity(path) == ("site", "old")


def test_sync_is_a_library_function() -> None:
    assert callable(ora_desktop.sync) and "sync" in ora_desktop.__all__


def test_marking_pushed_rows_keeps_an_edit_made_meanwhile_pending(ora_home: Path) -> None:
    path = OraHome(ora_home).create_agent("anwe-sh", "ora")
    with ora_desktop.open_store(path) as store:
        store.add_many({"content": f"memory {i}"} for i in range(5))
        version = local.data_version(store)
        rows = [(rowid, values) for rowid, values, _, _ in local.rows_at(store, None, local.outgoing(store, None))]
        edited = rows[2][1][0]
        with ora_desktop.open_store(path) as agent:  # another program edits within the same second
            agent.update(edited, content="changed while the push was on its way")
        with store.write():
            marked = local.mark_pushed(store, rows, "2030-01-01 00:00:00", unchanged_since=version)
        statuses = {m.id: m.sync_status for m in store.list(limit=None)}
    assert marked == 4
    assert statuses[edited] == "pending" and sum(s == "synced" for s in statuses.values()) == 4


def test_marking_pushed_rows_in_one_statement_when_nothing_else_wrote(ora_home: Path) -> None:
    path = OraHome(ora_home).create_agent("anwe-sh", "ora")
    with ora_desktop.open_store(path) as store:
        store.add_many({"content": f"memory {i}"} for i in range(5))
        mine = store.add("local only")
        store.update(mine.id, sync_status="local_only")
        version = local.data_version(store)
        rows = [(rowid, values) for rowid, values, _, _ in local.rows_at(store, None, local.outgoing(store, None))]
        with store.write():
            assert local.mark_pushed(store, rows, "2030-01-01 00:00:00", unchanged_since=version) == 5
        assert store.get(mine.id).sync_status == "local_only"
        assert local.pending_count(store) == 0


@pytest.mark.parametrize(("url", "holds"), [
    ("postgresql://ora:s3cret@db.example.org/ora", True),
    ("postgres://ora:@db/ora", True),
    ("postgresql://ora@db.example.org:5432/ora?sslmode=require&password=s3cret", True),
    ("host=db user=ora password=s3cret dbname=ora", True),
    ("postgresql://ora@db.example.org:5432/ora?sslmode=require", False),
    ("postgresql://db.example.org/ora", False),
    ("postgresql://user%40corp@db/ora", False),
    ("host=db user=ora dbname=ora", False),
])
def test_a_password_in_a_url_is_recognised(url: str, holds: bool) -> None:
    assert settings.holds_password(url) is holds
