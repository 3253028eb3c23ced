"""The in-app scheduler runs the schedule on the qasync loop, and idles while a daemon runs it."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import pytest

from ora_desktop.core import AgentFile, history
from ora_desktop.core.config import config_path
from ora_desktop.core.daemon_lock import daemon_info_path, running_daemon
from ora_desktop.core.demo import write_agent
from ora_desktop.gui.jobs import service
from ora_desktop.gui.jobs.view import JobsView
from tests.integration.test_daemon import start_daemon, wait_for

from .panels_support import ctx_fixture, loop_fixture, until  # noqa: F401  (fixtures)


@pytest.fixture(autouse=True)
def no_startup_grace(request, monkeypatch: pytest.MonkeyPatch) -> None:
    """Most tests watch scheduled runs happen: drop the window's grace period for them."""
    if "keeps_grace" not in request.keywords:
        monkeypatch.setattr(service, "FIRST_RUN_DELAY", 0)


@pytest.fixture(autouse=True)
def schedule_turned_on(request, ctx) -> None:
    """The person turned on "Run scheduled maintenance while this window is open" (off by default)."""
    if "schedule_off" not in request.keywords:
        ctx.settings.setValue(service.RUN_IN_WINDOW, True)


def every_second_decay() -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[schedule]\ndecay = "1s"\ncleanup = "off"\nbackup = "off"\ncheck = "off"\n'
                    'retention = "off"\npromote = "off"\n')


def test_scheduled_runs_happen_while_the_window_is_open_and_views_follow(ctx, loop, ora_home: Path,
                                                                          qtbot) -> None:
    every_second_decay()
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 10, seed=11)
    view = JobsView(ctx)
    qtbot.addWidget(view)
    reports = []
    changes = []
    ctx.data_changed.connect(changes.append)

    async def scenario() -> None:
        svc = service.start(ctx)
        assert service.start(ctx) is svc, "one scheduler per window"
        svc.run_finished.connect(reports.append)
        assert svc.scheduler is not None and svc.scheduler.running
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        await until(lambda: any(r.job == "decay" for r in reports), what="a scheduled decay")
        assert ("decay", str(path.resolve())) in svc.next_runs()
        view.refresh()
        await until(lambda: any(view.history.item(r, 1).text() == "decay" for r in range(view.history.rowCount())),
                    what="the Jobs view showing the scheduled run")
        assert "window runs the maintenance schedule" in view.scheduler_state.text()
        svc.stop()
        await until(lambda: svc.scheduler is None)

    loop.run_until_complete(scenario())
    assert reports[0].outcome == "ok" and str(reports[0].path) == str(path.resolve())
    assert any(run.job == "decay" and run.outcome == "ok" for run in history.history(path=path))
    assert any(getattr(c, "source", "") == "external" for c in changes)


def test_idles_while_a_daemon_runs_and_takes_over_when_it_stops(ctx, loop, ora_home: Path) -> None:
    every_second_decay()
    write_agent(ora_home / "sites" / "anwe-sh" / "ora.site.db", 5, seed=12)
    daemon = start_daemon()  # the real `ora-desktop daemon` process
    try:
        wait_for(lambda: running_daemon() is not None)
        svc = service.JobService(ctx, loop)
        svc.start()
        assert svc.scheduler is None
        assert f"pid {daemon.pid}" in svc.state and "idle" in svc.state
    finally:
        daemon.send_signal(signal.SIGKILL)  # killed: it leaves its info file behind
        daemon.wait(timeout=30)
    assert daemon_info_path().exists()
    before = len(history.history())  # the daemon's own runs

    async def scenario() -> None:
        svc.check()  # the daemon died without removing its info file
        assert svc.scheduler is not None and svc.scheduler.running
        await until(lambda: len(history.history()) > before, what="the window taking over")
        svc.stop()
        await until(lambda: svc.scheduler is None)

    loop.run_until_complete(scenario())
    assert running_daemon() is None


def test_a_read_only_window_runs_no_scheduled_job(ctx, loop, ora_home: Path) -> None:
    every_second_decay()
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 5, seed=13)
    before = path.read_bytes()
    ctx.read_only = True
    svc = service.JobService(ctx, loop)
    svc.start()

    async def scenario() -> None:
        await asyncio.sleep(1.5)

    loop.run_until_complete(scenario())
    assert svc.scheduler is None and "read-only" in svc.state
    svc.stop()
    assert history.history() == [] and path.read_bytes() == before


@pytest.mark.keeps_grace
def test_opening_the_window_writes_nothing_during_the_grace_period(ctx, loop, ora_home: Path) -> None:
    every_second_decay()
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 5, seed=14)
    before = path.read_bytes()
    svc = service.JobService(ctx, loop)
    svc.start()

    async def scenario() -> None:
        await asyncio.sleep(2.5)  # the schedule says every second, yet nothing may run yet

    loop.run_until_complete(scenario())
    try:
        assert svc.scheduler is not None and svc.scheduler.running
        due = [when for job, p, when in svc.scheduler.jobs_due() if job == "decay"]
        assert due and min(due).timestamp() > time.time() + service.FIRST_RUN_DELAY - 60
        assert "minutes after opening" in svc.state
        assert path.read_bytes() == before and history.history(path=path) == []
    finally:
        svc.stop()


@pytest.mark.schedule_off
def test_by_default_the_window_runs_no_schedule_until_turned_on(ctx, loop, ora_home: Path, qtbot) -> None:
    every_second_decay()
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 10, seed=15)
    before = path.read_bytes()
    view = JobsView(ctx)
    qtbot.addWidget(view)
    notices = []
    ctx.notice.connect(notices.append)
    svc = service.start(ctx)

    async def idle_then_turned_on() -> None:
        await asyncio.sleep(2.5)  # the schedule says every second
        assert svc.scheduler is None and "off in this window" in svc.state
        assert path.read_bytes() == before and history.history(path=path) == []
        view.refresh()
        await until(lambda: "off in this window" in view.scheduler_state.text())
        assert not view.run_in_window.isChecked()
        view.run_in_window.setChecked(True)  # the person turns it on
        assert svc.scheduler is not None and svc.scheduler.running
        await until(lambda: any(r.job == "decay" for r in history.history(path=path)), what="a scheduled decay")

    try:
        loop.run_until_complete(idle_then_turned_on())
    finally:
        svc.stop()
    assert ctx.settings.value(service.RUN_IN_WINDOW) in (True, "true")  # remembered


def test_a_scheduled_run_that_changed_memories_is_announced(ctx, loop, ora_home: Path) -> None:
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 10, seed=16)
    import sqlite3
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET expires_at = '2001-01-01 00:00:00' WHERE rowid IN (1, 2, 3)")
        expired = conn.execute("SELECT count(*) FROM memories WHERE julianday(expires_at) < julianday('now')"
                               ).fetchone()[0]
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('[schedule]\ncleanup = "1s"\ndecay = "off"\nbackup = "off"\ncheck = "off"\n'
                             'retention = "off"\npromote = "off"\n')
    notices = []
    svc = service.start(ctx)
    svc.notice.connect(notices.append)

    async def scenario() -> None:
        await until(lambda: bool(notices), what="a notice of the scheduled cleanup")

    try:
        loop.run_until_complete(scenario())
    finally:
        svc.stop()
    assert expired >= 3
    assert notices[0].startswith(f"Scheduled cleanup changed ora (anwe-sh): expired {expired}.")
    assert "Deleted memories" in notices[0]


def test_a_promote_notice_names_the_parent_it_changed(ora_home: Path) -> None:
    """Promote runs on a task agent's file but adds memories to its parent: the notice says so."""
    import sqlite3

    from ora_desktop.core.maintenance import run_job
    from ora_desktop.core.schema import INIT_SQL

    folder = ora_home / "sites" / "anwe-sh"
    folder.mkdir(parents=True)
    for name in ("ora", "task-123"):
        with sqlite3.connect(folder / f"{name}.site.db") as conn:
            conn.executescript(INIT_SQL)
    with sqlite3.connect(folder / "task-123.site.db") as conn:
        conn.execute("INSERT INTO memories (id, content, importance, created_at, updated_at) "
                     "VALUES ('k1', 'key finding', 9, datetime('now'), datetime('now'))")
        conn.execute("INSERT INTO task_context (id, task_description, status, created_at, completed_at) "
                     "VALUES ('t1', 'report', 'completed', datetime('now'), datetime('now'))")
    report = run_job("promote", folder / "task-123.site.db")
    text = service.describe_run(report, {"promoted": 1})
    assert text.startswith("Scheduled promote changed ora (anwe-sh): copied 1 important memories from")
    assert "task-123" in text
