"""The Sync panel against a real PostgreSQL server: indicator, Sync now, conflicts list, errors."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

import ora_desktop
from ora_desktop.core import AgentFile
from ora_desktop.core.config import config_path
from ora_desktop.gui.sync.view import SyncView
from tests.integration.sync_support import Machine, server_rows
from tests.pg_server import PASSWORD

from .panels_support import ctx_fixture, loop_fixture, until  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow  # a real server


def _configure(url: str) -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(f'[sync]\nurl = "{url}"\n')


def test_indicator_sync_now_and_conflicts(ctx, loop, ora_home: Path, tmp_path: Path, pg_url: str, qtbot) -> None:
    _configure(pg_url)
    path = ora_desktop.OraHome(ora_home).create_agent("anwe-sh", "ora")
    with ora_desktop.open_store(path) as store:
        memory = store.add("The staging database listens on 5433")
        secret = store.add("never leaves")
        store.update(secret.id, sync_status="local_only")
    view = SyncView(ctx)
    qtbot.addWidget(view)
    view.show()
    other = Machine(tmp_path, "desk")

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        await until(lambda: view.status is not None, what="the sync state")
        assert view.indicator.text() == "↑ 1 pending" and view.last_sync.text() == "never"
        assert view.sync_now.isEnabled()
        qtbot.mouseClick(view.sync_now, Qt.MouseButton.LeftButton)
        await until(lambda: view.sync_task is not None and view.sync_task.done(), timeout=60, what="sync")
        await until(lambda: view.indicator.text() == "✔ in sync", what="the indicator after the sync")
        assert view.last_sync.text() != "never" and "pushed 1" in view.outcome.text()
        assert PASSWORD not in view.server.text() + view.outcome.text()
        # A conflict: edited here, then (newer) on another machine that syncs first.
        other.sync(pg_url)
        with ora_desktop.open_store(path) as store:
            store.update(memory.id, content="The staging database listens on 5434 (here)")
        time.sleep(1.1)
        with other.store() as store:
            store.update(memory.id, content="The staging database listens on 6543 (desk)")
        other.sync(pg_url)
        view.request_refresh()
        await until(lambda: view.indicator.text() == "↑ 1 pending", what="the local edit pending")
        qtbot.mouseClick(view.sync_now, Qt.MouseButton.LeftButton)
        await until(lambda: view.sync_task.done(), timeout=60, what="second sync")
        await until(lambda: view.conflicts.rowCount() == 1, what="the conflict listed")

    loop.run_until_complete(scenario())
    assert view.conflicts.item(0, 1).text() == memory.id
    assert view.conflicts.item(0, 3).text() == "The staging database listens on 5434 (here)"
    assert set(server_rows(pg_url)) == {memory.id}
    with ora_desktop.open_store(path, readonly=True) as store:
        assert store.get(memory.id).content.endswith("(desk)")


def test_a_failed_sync_shows_the_error_without_the_password(ctx, loop, ora_home: Path, pg_server, qtbot) -> None:
    _configure(pg_server.url(password="hunter2-wrong"))
    path = ora_desktop.OraHome(ora_home).create_agent("anwe-sh", "ora")
    with ora_desktop.open_store(path) as store:
        store.add("pending memory")
    view = SyncView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        await until(lambda: view.sync_now.isEnabled(), what="Sync now enabled")
        qtbot.mouseClick(view.sync_now, Qt.MouseButton.LeftButton)
        await until(lambda: view.sync_task is not None and view.sync_task.done(), timeout=60, what="sync")
        await until(lambda: view.indicator.text() == "⚠ sync failed", what="the failure shown")

    loop.run_until_complete(scenario())
    assert "refused the user name or password" in view.error.text()
    assert "hunter2-wrong" not in view.error.text() + view.outcome.text() + view.indicator.toolTip()
    assert view.pending.text().startswith("1 ")


def test_without_a_server_sync_now_is_off(ctx, loop, ora_home: Path, qtbot) -> None:
    path = ora_desktop.OraHome(ora_home).create_agent("anwe-sh", "ora")
    view = SyncView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        await until(lambda: view.status is not None, what="the sync state")

    loop.run_until_complete(scenario())
    assert view.indicator.text() == "sync off" and not view.sync_now.isEnabled()
    assert "add [sync] url" in view.server.text()


def test_a_delete_overridden_elsewhere_is_listed_and_a_future_sync_is_a_clock_problem(
        ctx, loop, ora_home: Path, tmp_path: Path, pg_url: str, qtbot) -> None:
    _configure(pg_url)
    path = ora_desktop.OraHome(ora_home).create_agent("anwe-sh", "ora")
    with ora_desktop.open_store(path) as store:
        memory = store.add("The VPN config is in the shared vault")
    view = SyncView(ctx)
    qtbot.addWidget(view)
    view.show()
    other = Machine(tmp_path, "desk")

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        await until(lambda: view.sync_now.isEnabled(), what="Sync now enabled")
        qtbot.mouseClick(view.sync_now, Qt.MouseButton.LeftButton)
        await until(lambda: view.sync_task is not None and view.sync_task.done(), timeout=60, what="first sync")
        other.sync(pg_url)
        with ora_desktop.open_store(path) as store:
            store.delete(memory.id)
        qtbot.mouseClick(view.sync_now, Qt.MouseButton.LeftButton)  # the deletion goes up
        await until(lambda: view.sync_task.done(), timeout=60, what="second sync")
        time.sleep(2.5)
        with other.store() as store:  # edited later on the desk, which had not seen the deletion
            store.update(memory.id, content="The VPN config moved to the team vault")
        other.sync(pg_url)
        await until(lambda: view.sync_now.isEnabled(), what="Sync now enabled again")
        qtbot.mouseClick(view.sync_now, Qt.MouseButton.LeftButton)
        await until(lambda: view.sync_task.done(), timeout=60, what="third sync")
        await until(lambda: view.conflicts.rowCount() == 1, what="the conflict listed")

    loop.run_until_complete(scenario())
    assert view.conflicts.item(0, 1).text() == memory.id
    assert view.conflicts.item(0, 2).text() == "delete · server won"
    assert "deleted here, edited later elsewhere" in view.conflicts.item(0, 4).text()
    assert "Conflicts sync settled: 1 " in view.conflicts_label.text()
    # A last sync recorded on a clock a day ahead reads as a clock problem, not as a time.
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE ora_desktop_sync SET last_sync = datetime('now', '+1 day')")
    loop.run_until_complete(view.refresh())
    assert "clock problem" in view.last_sync.text() and "in the future" in view.last_sync.text()
