"""The Jobs panel: Run now with a dry-run preview and a confirm step, history, progress, Cancel."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
import time
from pathlib import Path

import pytest

from ora_desktop.core import AgentFile, open_store
from ora_desktop.core.demo import write_agent
from ora_desktop.core.maintenance import JOBS, JobContext, Outcome, job_lock
from ora_desktop.gui.jobs.preview import PreviewDialog
from ora_desktop.gui.jobs.view import JobsView

from .panels_support import ctx_fixture, loop_fixture, until  # noqa: F401  (fixtures)

EXPIRED = [("old-1", "The staging password rotates on Mondays", "2020-01-01 00:00:00"),
           ("old-2", "Deploy freeze until the audit ends", "2021-06-30T12:00:00.000Z")]


def agent_with_expired(home: Path) -> tuple[AgentFile, Path]:
    path = home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 20, seed=5, now=None)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE memories SET expires_at = NULL")  # only ours expire
    for memory_id, content, expires in EXPIRED:
        conn.execute("INSERT INTO memories (id, content, type, importance, created_at, updated_at, expires_at) "
                     "VALUES (?, ?, 'fact', 5, datetime('now'), datetime('now'), ?)", (memory_id, content, expires))
    conn.commit()
    conn.close()
    return AgentFile("anwe-sh", "ora", path), path


def ids_in(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT id FROM memories")}
    finally:
        conn.close()


def history_rows(view: JobsView) -> list[tuple[str, ...]]:
    return [tuple(view.history.item(r, c).text() for c in range(view.history.columnCount()))
            for r in range(view.history.rowCount())]


async def cleanup_preview(ctx, view: JobsView, agent: AgentFile) -> PreviewDialog:  # noqa: ANN001
    """Show ``agent``'s file, choose cleanup, press Run now: its preview, once shown."""
    ctx.set_current(agent)
    await until(lambda: view.snapshot is not None and view.snapshot.schedule, what="schedule")
    view.job.setCurrentIndex(view.job.findData("cleanup"))
    view.run_button.click()
    await until(lambda: isinstance(view.preview, PreviewDialog) and view.preview.isVisible(), what="preview")
    return view.preview


def test_run_now_previews_then_runs_after_confirm_and_history_shows_it(ctx, loop, ora_home: Path, qtbot) -> None:
    agent, path = agent_with_expired(ora_home)
    view = JobsView(ctx)
    qtbot.addWidget(view)
    changes = []
    ctx.data_changed.connect(changes.append)

    async def scenario() -> None:
        dialog = await cleanup_preview(ctx, view, agent)
        table = dialog.table
        listed = {table.item(r, 0).text(): table.item(r, 1).text() for r in range(table.rowCount())}
        assert set(listed) == {"old-1", "old-2"}
        assert "staging password" in listed["old-1"]
        assert "would change 2 memories" in dialog.headline.text()
        assert ids_in(path) >= {"old-1", "old-2"}, "the preview changed nothing"
        assert not [row for row in history_rows(view) if row[1].startswith("cleanup")], "previews are not history"
        dialog.confirm.click()
        await until(lambda: view.last_report is not None and not view.last_report.dry_run, what="the real run")
        await until(lambda: any(row[1] == "cleanup" for row in history_rows(view)), what="history row")

    loop.run_until_complete(scenario())
    assert view.last_report.outcome == "ok"
    assert not ids_in(path) & {"old-1", "old-2"}
    assert len(ids_in(path)) == 20
    with open_store(path, readonly=True) as store:
        trashed = {deleted.memory.id for deleted in store.trash()}
    assert trashed >= {"old-1", "old-2"}, "deleted rows are kept, restorable"
    row = next(row for row in history_rows(view) if row[1] == "cleanup")
    assert row[2] == "anwe-sh/ora" and row[3] == "ok" and "expired 2" in row[5]
    assert "cleanup on anwe-sh/ora: ok" in view.message.text()
    assert any(getattr(c, "source", "") == "external" for c in changes), "other views are told to refresh"
    schedule = {view.schedule.item(r, 0).text(): view.schedule.item(r, 4).text()
                for r in range(view.schedule.rowCount())}
    assert schedule["cleanup"] == "ok" and set(schedule) >= {"decay", "cleanup", "backup", "check"}


def test_declining_the_preview_changes_nothing(ctx, loop, ora_home: Path, qtbot) -> None:
    agent, path = agent_with_expired(ora_home)
    view = JobsView(ctx)
    qtbot.addWidget(view)

    async def scenario() -> None:
        (await cleanup_preview(ctx, view, agent)).reject()
        await until(lambda: "was not run" in view.message.text())
        await until(lambda: view.run_button.isEnabled())

    loop.run_until_complete(scenario())
    assert ids_in(path) >= {"old-1", "old-2"}
    assert view.last_report.dry_run


def slow_check(ctx: JobContext) -> Outcome:
    """A long job: 400 steps, each reporting progress and honouring Cancel."""
    for done in range(400):
        ctx.step(done, 400)
        time.sleep(0.01)
    return Outcome({"steps": 400}, "finished")


def test_progress_and_cancel_of_a_long_run(ctx, loop, ora_home: Path, qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(JOBS, "check", dataclasses.replace(JOBS["check"], function=slow_check))
    agent, _path = agent_with_expired(ora_home)
    view = JobsView(ctx)
    qtbot.addWidget(view)
    seen: list[int] = []

    async def scenario() -> None:
        ctx.set_current(agent)
        await until(lambda: view.snapshot is not None)
        view.job.setCurrentIndex(view.job.findData("check"))
        view.run_button.click()
        await until(lambda: not view.progress.isHidden() and view.progress.value() > 10, what="progress")
        seen.append(view.progress.value())
        assert view.progress.maximum() == 400 and not view.cancel_button.isHidden()
        assert not view.run_button.isEnabled(), "one run at a time"
        view.cancel_button.click()
        await until(lambda: view.last_report is not None, what="the cancelled report")
        await until(lambda: any(row[1] == "check" for row in history_rows(view)))

    loop.run_until_complete(scenario())
    assert view.last_report.outcome == "cancelled"
    assert view.last_report.seconds < 3.5, "the job stopped at its next step, not at the end"
    assert view.progress.isHidden() and view.cancel_button.isHidden()
    assert "cancelled" in view.message.text()
    row = next(row for row in history_rows(view) if row[1] == "check")
    assert row[3] == "cancelled"
    assert seen[0] > 10


def test_a_run_locked_by_another_process_is_reported_skipped(ctx, loop, ora_home: Path, qtbot) -> None:
    agent, path = agent_with_expired(ora_home)
    view = JobsView(ctx)
    qtbot.addWidget(view)
    lock = job_lock("backup", path)
    lock.acquire(timeout=0)  # as the daemon would while it backs this file up
    try:
        async def scenario() -> None:
            ctx.set_current(agent)
            await until(lambda: view.snapshot is not None)
            view.job.setCurrentIndex(view.job.findData("backup"))
            view.run_button.click()
            await until(lambda: view.last_report is not None)

        loop.run_until_complete(scenario())
    finally:
        lock.release()
    assert view.last_report.outcome == "skipped-locked"
    assert "skipped (busy)" in view.message.text()


def test_nothing_selected_says_what_to_do(ctx, loop, qtbot) -> None:
    view = JobsView(ctx)
    qtbot.addWidget(view)

    async def scenario() -> None:
        await until(lambda: view.snapshot is not None)

    loop.run_until_complete(scenario())
    assert not view.run_button.isEnabled()
    assert view.run_now() is None
    assert "Select an agent" in view.message.text()


def test_schedule_lists_jobs_switched_off_and_files_outside_the_home(ctx, loop, ora_home: Path, tmp_path: Path,
                                                                     qtbot) -> None:
    from ora_desktop.core.config import config_path

    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('[schedule]\ncleanup = "off"\n')
    agent, _path = agent_with_expired(ora_home)
    elsewhere = tmp_path / "elsewhere" / "notes.site.db"
    write_agent(elsewhere, 3, seed=6)
    view = JobsView(ctx)
    qtbot.addWidget(view)
    view.show()  # the Jobs tab is in front: it follows the file shown

    async def scenario() -> None:
        ctx.set_current(agent)
        await until(lambda: view.snapshot is not None and view.snapshot.schedule)
        rows = {view.schedule.item(r, 0).text(): (view.schedule.item(r, 2).text(), view.schedule.item(r, 5).text())
                for r in range(view.schedule.rowCount())}
        assert rows["cleanup"] == ("off", "off")
        assert rows["decay"][0] == "daily" and rows["decay"][1] in ("due now", "in 23 h", "in 1 day")
        ctx.set_current(elsewhere)
        await until(lambda: not view.unscheduled.isHidden())

    loop.run_until_complete(scenario())
    assert str(elsewhere) in view.unscheduled.text() and "Run now" in view.unscheduled.text()
    assert view.run_button.isEnabled(), "jobs can still be run by hand on a file outside ORA_HOME"


def test_all_files_shows_every_agents_schedule_and_history(ctx, loop, ora_home: Path, qtbot) -> None:
    from ora_desktop.core.maintenance import run_job

    agent, path = agent_with_expired(ora_home)
    writer = ora_home / "sites" / "anwe-sh" / "writer.site.db"
    write_agent(writer, 5, seed=7)
    run_job("check", writer)
    view = JobsView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        ctx.set_current(agent)
        await until(lambda: view.snapshot is not None and view.snapshot.schedule)
        assert {row.label for row in view.snapshot.schedule} == {"anwe-sh/ora"}
        assert not history_rows(view), "the selected file has no runs yet"
        view.all_files.setChecked(True)
        await until(lambda: {row.label for row in view.snapshot.schedule} == {"anwe-sh/ora", "anwe-sh/writer"})
        await until(lambda: any(row[2] == "anwe-sh/writer" for row in history_rows(view)))

    loop.run_until_complete(scenario())
    assert "Every file" in view.file_label.text()


def test_a_broken_history_database_is_reported_in_words(ctx, loop, ora_home: Path, qtbot) -> None:
    from ora_desktop.core import history

    agent, _path = agent_with_expired(ora_home)
    history.state_path().parent.mkdir(parents=True, exist_ok=True)
    history.state_path().write_bytes(b"this is not a database" * 100)
    view = JobsView(ctx)
    qtbot.addWidget(view)

    async def scenario() -> None:
        ctx.set_current(agent)
        await until(lambda: "Could not read the job schedule and history" in view.message.text())

    loop.run_until_complete(scenario())
    assert "Traceback" not in view.message.text()


def test_a_hidden_jobs_tab_reads_the_new_file_only_when_shown(ctx, loop, ora_home: Path, qtbot) -> None:
    """Opening agents on the Memories tab does not read the job history behind it (it competed
    with the table's first paint); showing the tab reads the file now shown."""
    agent, _path = agent_with_expired(ora_home)
    writer = ora_home / "sites" / "anwe-sh" / "writer.site.db"
    write_agent(writer, 5, seed=7)
    view = JobsView(ctx)
    qtbot.addWidget(view)
    reads: list[object] = []
    real = view._gather  # noqa: SLF001

    def gather(path, *args):  # noqa: ANN001, ANN202
        reads.append(path)
        return real(path, *args)

    view._gather = gather  # noqa: SLF001  (a plain Python method, not a Qt virtual)

    async def scenario() -> None:
        await until(lambda: view.snapshot is not None)  # the read at construction
        reads.clear()
        ctx.set_current(agent)
        ctx.set_current(writer)
        await asyncio.sleep(0.3)
        assert reads == [], "a hidden tab reads nothing when another file is opened"
        view.show()
        await until(lambda: view.snapshot is not None and "writer" in view.file_label.text())

    loop.run_until_complete(scenario())
    assert reads == [writer]


def test_relative_times_move_on_while_the_tab_is_shown(ctx, loop, ora_home: Path, qtbot, monkeypatch) -> None:
    """'just now' must not stay 'just now' for ten minutes: a shown tab writes its times again."""
    from datetime import timedelta

    from ora_desktop.core import timestamps
    from ora_desktop.core.maintenance import run_job

    agent, path = agent_with_expired(ora_home)
    run_job("check", path)
    view = JobsView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        ctx.set_current(agent)
        await until(lambda: view.snapshot is not None and view.snapshot.schedule, what="schedule")

    loop.run_until_complete(scenario())
    row = next(r for r in range(view.schedule.rowCount()) if view.schedule.item(r, 0).text() == "check")
    assert view.schedule.item(row, 3).text() == "just now"
    assert view.clock.isActive()
    later = timestamps.now() + timedelta(minutes=10, seconds=30)
    monkeypatch.setattr(timestamps, "now", lambda: later)
    view.clock.timeout.emit()
    assert view.schedule.item(row, 3).text() == "10 min ago"
    view.hide()
    assert not view.clock.isActive()


def test_a_check_that_saw_the_file_change_is_shown_checked_again_not_damaged(ctx, loop, ora_home: Path, qtbot,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.unit.maintenance_support import changing_under_the_first_check

    agent, path = agent_with_expired(ora_home)
    changing_under_the_first_check(monkeypatch, path)
    view = JobsView(ctx)
    qtbot.addWidget(view)

    async def scenario() -> None:
        ctx.set_current(agent)
        await until(lambda: view.snapshot is not None)
        view.job.setCurrentIndex(view.job.findData("check"))
        view.run_button.click()
        await until(lambda: view.last_report is not None, what="the check's report")
        await until(lambda: any(row[1] == "check" for row in history_rows(view)), what="history row")

    loop.run_until_complete(scenario())
    assert view.last_report.outcome == "ok"
    assert "the file changed during the check; checked again" in view.message.text()
    assert "damaged" not in view.message.text()
    row = next(row for row in history_rows(view) if row[1] == "check")
    assert row[3] == "ok"


def test_a_preview_past_its_list_names_how_many_would_change(ctx, loop, ora_home: Path, qtbot, monkeypatch) -> None:
    from ora_desktop.core.maintenance import cleanup

    monkeypatch.setattr(cleanup, "PREVIEW_LIMIT", 1)  # two expired memories, one listed
    agent, _path = agent_with_expired(ora_home)
    view = JobsView(ctx)
    qtbot.addWidget(view)

    async def scenario() -> None:
        dialog = await cleanup_preview(ctx, view, agent)
        assert dialog.table.rowCount() == 1
        assert "would change 2 memories (the first 1 listed)" in dialog.headline.text()
        assert "2 to change" in view.message.text()
        dialog.reject()

    loop.run_until_complete(scenario())
