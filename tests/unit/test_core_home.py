"""ORA_HOME: sites and agents (task agents included), new agent files, refused names, app dirs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ora_desktop import InvalidName, OraHome, open_store
from ora_desktop.core import paths
from ora_desktop.core.schema import INIT_SQL


def test_home_follows_ora_home_and_defaults_to_dot_ora(ora_home, monkeypatch, tmp_path):
    assert OraHome().root == ora_home
    monkeypatch.delenv("ORA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert OraHome().root == tmp_path / ".ora"
    assert OraHome(tmp_path / "elsewhere").root == tmp_path / "elsewhere"


def test_sites_and_agents(seed_db, ora_home):
    seed_db(site="anwe-sh", agent="ora")
    seed_db(site="anwe-sh", agent="writer")
    seed_db(site="anwe-sh", agent="task-123")
    seed_db(site="blog", agent="ora")
    (ora_home / "sites" / ".hidden").mkdir()
    (ora_home / "sites" / "anwe-sh" / "notes.txt").write_text("not an agent")
    home = OraHome()
    sites = home.sites()
    assert [s.slug for s in sites] == ["anwe-sh", "blog"]
    agents = {a.label: a for a in home.agents()}
    assert set(agents) == {"anwe-sh/ora", "anwe-sh/task-123", "anwe-sh/writer", "blog/ora"}
    task = agents["anwe-sh/task-123"]
    assert task.is_task_agent and not agents["anwe-sh/ora"].is_task_agent
    assert home.parent_of(task).agent == "ora"
    assert home.path_for("anwe-sh", "writer") == ora_home / "sites" / "anwe-sh" / "writer.site.db"


def test_the_agent_for_a_path_whatever_way_the_path_is_written(seed_db, ora_home, tmp_path, monkeypatch):
    seed_db(site="anwe-sh", agent="writer")
    home = OraHome()
    assert home.agent_for(ora_home / "sites" / "anwe-sh" / "writer.site.db").label == "anwe-sh/writer"
    monkeypatch.chdir(ora_home / "sites")
    assert home.agent_for(Path("blog/../anwe-sh/writer.site.db")).label == "anwe-sh/writer"
    (tmp_path / "link.site.db").symlink_to(ora_home / "sites" / "anwe-sh" / "writer.site.db")
    assert home.agent_for(tmp_path / "link.site.db").label == "anwe-sh/writer", "a link to an agent's file"
    elsewhere = tmp_path / "loose.site.db"
    elsewhere.write_bytes(b"")
    assert home.agent_for(elsewhere) is None, "a file outside ORA_HOME belongs to no agent"


def test_empty_home_has_no_sites(ora_home):
    assert OraHome().sites() == [] and OraHome().agents() == []


def test_create_agent_uses_the_seed_sql_verbatim(ora_home):
    path = OraHome().create_agent("new-site", "ora")
    assert path == ora_home / "sites" / "new-site" / "ora.site.db"
    conn = sqlite3.connect(path)
    schema = dict(conn.execute("SELECT name, sql FROM sqlite_master"))
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    conn.close()
    assert mode == "wal"
    reference = sqlite3.connect(":memory:")
    reference.executescript(INIT_SQL)
    assert schema == dict(reference.execute("SELECT name, sql FROM sqlite_master"))
    with open_store(path) as store:
        assert store.warnings == ()
    with pytest.raises(FileExistsError):
        OraHome().create_agent("new-site", "ora")


@pytest.mark.parametrize("name", ["../evil", "a/b", "..", ".hidden", "a\\b", "", "  ", "x\x00y", "a..b"])
def test_names_that_could_escape_are_refused(ora_home, name):
    home = OraHome()
    with pytest.raises(InvalidName):
        home.create_agent(name, "ora")
    with pytest.raises(InvalidName):
        home.create_agent("site", name)
    assert list(Path(ora_home).rglob("*.db")) == []


def test_app_dirs_are_isolated_and_keyed(isolated_dirs):
    assert paths.cache_dir().is_relative_to(isolated_dirs)
    assert paths.data_dir().is_relative_to(isolated_dirs)
    assert paths.config_dir().is_relative_to(isolated_dirs)
    key_a = paths.file_key(isolated_dirs / "ora" / "sites" / "a" / "ora.site.db")
    key_b = paths.file_key(isolated_dirs / "ora" / "sites" / "b" / "ora.site.db")
    assert key_a != key_b and key_a.startswith("ora-")
