"""`ora-desktop run / jobs / backups / config` in-process: output, JSON, exit codes, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from ora_desktop.core import paths
from ora_desktop.core.maintenance import job_lock
from tests.unit.maintenance_support import ago, ids, make_db
from tests.unit.test_cli_helpers import assert_one_line_error, cli


@pytest.fixture
def db(ora_home: Path) -> Path:
    make_db(ora_home / "sites" / "blog" / "ora.site.db", [{"id": "b1"}])
    return make_db(ora_home / "sites" / "shop" / "ora.site.db", [
        {"id": "gone", "expires_at": ago(1)}, {"id": "kept", "expires_at": ago(-1)},
    ])


def test_run_dry_run_lists_and_run_deletes(capsys, db: Path) -> None:
    preview = cli(capsys, "run", "cleanup", "--site", "shop", "--agent", "ora", "--dry-run")
    assert preview.code == 0 and "would delete 1 expired" in preview.out and "gone" in preview.out
    assert ids(db) == {"gone", "kept"}
    done = cli(capsys, "run", "cleanup", "--db", str(db), "--json")
    assert done.code == 0
    (report,) = done.json()
    assert report["outcome"] == "ok" and report["counts"] == {"expired": 1} and report["path"] == str(db.resolve())
    assert ids(db) == {"kept"}


def test_run_all_covers_every_agent_and_jobs_shows_the_history(capsys, db: Path) -> None:
    result = cli(capsys, "run", "check", "--all")
    assert result.code == 0 and result.out.count("check ") == 2
    history = cli(capsys, "jobs", "--json")
    assert {Path(r["path"]).parent.name for r in history.json()} == {"shop", "blog"}
    text = cli(capsys, "jobs")
    assert "check" in text.out and "no problems found" in text.out
    upcoming = cli(capsys, "jobs", "--next")
    assert "daemon: not running" in upcoming.out and "backup" in upcoming.out and "due now" in upcoming.out


def test_a_locked_run_exits_3_and_says_so(capsys, db: Path) -> None:
    with job_lock("decay", db):
        result = cli(capsys, "run", "decay", "--db", str(db))
    assert result.code == 3 and "skipped-locked" in result.out


def test_bad_targets_and_jobs_are_one_line_errors(capsys, db: Path, ora_home: Path) -> None:
    assert_one_line_error(cli(capsys, "run", "cleanup", "--site", "shop"), "--agent")
    assert_one_line_error(cli(capsys, "run", "cleanup", "--all", "--site", "nowhere"), "nowhere")
    assert_one_line_error(cli(capsys, "run", "backup", "--db", str(db), "--dry-run"), "no dry run")
    assert_one_line_error(cli(capsys, "run", "cleanup", "--site", "../x", "--agent", "ora"), "..")
    assert_one_line_error(cli(capsys, "run", "cleanup", "--db", str(db), "--repair"), "check and decay jobs only")
    broken = ora_home / "sites" / "shop" / "broken.site.db"
    broken.write_text("not a database")
    failed = cli(capsys, "run", "cleanup", "--db", str(broken))
    assert failed.code == 1 and "failed" in failed.out and str(broken) in failed.out


def test_config_shows_values_and_where_they_come_from(capsys, db: Path) -> None:
    path = paths.config_dir() / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('[schedule]\nbackup = "6h"\n[sites.shop.retention]\nmax_age_days = 30\n')
    result = cli(capsys, "config")
    assert result.code == 0 and str(path) in result.out
    line = next(x for x in result.out.splitlines() if "schedule.backup" in x)
    assert "every 6h" in line and "[schedule]" in line
    assert any("sites.shop.retention.max_age_days" in x and "30" in x for x in result.out.splitlines())
    decay = next(x for x in result.out.splitlines() if "schedule.decay" in x)
    assert "daily" in decay and "(default)" in decay
    path.write_text('[schedule]\ndecay = "often"\n')
    assert_one_line_error(cli(capsys, "config"), str(path), "often")


def test_backups_list_and_restore(capsys, db: Path) -> None:
    assert cli(capsys, "run", "backup", "--db", str(db)).code == 0
    listed = cli(capsys, "backups", "list", "--db", str(db), "--json").json()
    assert len(listed) == 1 and listed[0]["site"] == "shop"
    make_db(db.parent / "other.site.db", [])
    restored = cli(capsys, "backups", "restore", listed[0]["path"], "--db", str(db.parent / "other.site.db"))
    assert restored.code == 0 and ids(db.parent / "other.site.db") == {"gone", "kept"}
    assert_one_line_error(cli(capsys, "backups", "restore", str(db.parent / "nope.site.db")), "no such backup")


def test_restore_needs_an_explicit_target_and_creates_nothing_without_one(capsys, db: Path) -> None:
    assert cli(capsys, "run", "backup", "--db", str(db)).code == 0
    (backup,) = cli(capsys, "backups", "list", "--db", str(db), "--json").json()
    db.unlink()  # a restore without a target used to create a new agent file from the backup's path
    before = sorted(p.name for p in db.parent.iterdir())
    result = cli(capsys, "backups", "restore", backup["path"])
    assert_one_line_error(result, "name the memory file")
    assert "--site shop --agent ora" in result.err
    assert sorted(p.name for p in db.parent.iterdir()) == before


def test_jobs_next_names_a_running_daemon_and_ignores_a_dead_ones_leftovers(capsys, db: Path) -> None:
    from ora_desktop.core.daemon_lock import daemon_info_path, daemon_lock, running_daemon

    with daemon_lock() as info:
        assert running_daemon() == info
        assert f"running (pid {info.pid}" in cli(capsys, "jobs", "--next").out
    daemon_info_path().write_text('{"pid": 99999999, "started": "long ago", "host": "x"}')  # a SIGKILLed daemon's
    assert running_daemon() is None
    assert "daemon: not running" in cli(capsys, "jobs", "--next").out


def test_long_listings_are_cut_in_text_but_not_in_json(capsys, ora_home: Path) -> None:
    db = make_db(ora_home / "sites" / "big" / "ora.site.db",
                 [{"id": f"e{i:02}", "expires_at": ago(1)} for i in range(30)])
    text = cli(capsys, "run", "cleanup", "--db", str(db), "--dry-run", "--show", "5")
    assert sum(line.startswith("  e") for line in text.out.splitlines()) == 5 and "… and 25 more" in text.out
    assert len(cli(capsys, "run", "cleanup", "--db", str(db), "--dry-run", "--json").json()[0]["would_change"]) == 30


def test_run_all_reports_a_broken_file_once_and_still_runs_the_others(capsys, db: Path, ora_home: Path) -> None:
    broken = ora_home / "sites" / "shop" / "broken.site.db"
    broken.write_text("not a database")
    result = cli(capsys, "run", "decay", "--all")
    assert result.code == 1
    # one report line, "decay PATH: failed … PATH: not an SQLite database", and no second copy from the log
    assert (result.out + result.err).count(str(broken)) == 2
    assert result.out.count(": ok in ") == 2


def test_a_preview_past_its_list_says_how_many_would_change_not_how_many_are_listed(capsys, ora_home: Path,
                                                                                     monkeypatch) -> None:
    from ora_desktop.core.maintenance import cleanup

    monkeypatch.setattr(cleanup, "PREVIEW_LIMIT", 10)
    db = make_db(ora_home / "sites" / "big" / "ora.site.db",
                 [{"id": f"e{i:02}", "expires_at": ago(1)} for i in range(30)])
    report = cli(capsys, "run", "cleanup", "--db", str(db), "--dry-run", "--json").json()[0]
    assert len(report["would_change"]) == 10 and report["would_change_total"] == 30
    text = cli(capsys, "run", "cleanup", "--db", str(db), "--dry-run", "--show", "5")
    assert "… and 25 more (the first 10 are listed by --show 0 or --json)" in text.out
