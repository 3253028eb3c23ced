"""The Backups panel: back up now, then restore with a confirmation; the current file is kept aside."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from ora_desktop.core import AgentFile, open_store
from ora_desktop.core.demo import write_agent
from ora_desktop.gui.backups.view import BackupsView

from .panels_support import ctx_fixture, loop_fixture, until  # noqa: F401  (fixtures)


def ids_in(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT id FROM memories")}
    finally:
        conn.close()


def click(box: QMessageBox, text: str) -> None:
    (button,) = [b for b in box.buttons() if b.text().replace("&", "") == text]
    button.click()


def test_back_up_then_restore_replaces_the_file_and_keeps_the_current_one(ctx, loop, ora_home: Path,
                                                                           qtbot) -> None:
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 30, seed=7)
    original = ids_in(path)
    view = BackupsView(ctx)
    qtbot.addWidget(view)
    view.show()
    changes = []
    ctx.data_changed.connect(changes.append)

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        await until(lambda: view.listing is not None and "0 backups" in view.heading.text(), what="empty list")
        assert not view.restore_button.isEnabled()
        view.backup_button.click()
        await until(lambda: view.listing is not None and len(view.listing.backups) == 1, what="the backup")
        assert view.last_report.outcome == "ok"
        assert view.message.text().startswith("Backed up to ")

        # The agent keeps working after the backup: one memory added, one removed.
        store = await ctx.run(ctx.store_for, path)
        added = await ctx.run(store.add, "Written after the backup", "fact", 6)
        await ctx.run(store.delete, [sorted(original)[0]], "test")
        assert added.id in ids_in(path)

        view.table.selectRow(0)
        view.restore_button.click()
        await until(lambda: view.confirm is not None and view.confirm.isVisible(), what="confirmation")
        box = view.confirm
        assert "Replace the memories of anwe-sh/ora" in box.text()
        details = box.informativeText()
        assert str(path) in details, "says which file is replaced"
        assert "holds 30 memories now" in details and "backup's 30 memories" in details
        assert str(view.listing.folder) in details and "before-restore" in details, "says where the file is kept"
        click(box, "Restore")
        await until(lambda: view.last_report is not None and hasattr(view.last_report, "kept_aside"),
                    what="the restore")
        await until(lambda: view.listing is not None and len(view.listing.backups) == 2, what="list refresh")

    loop.run_until_complete(scenario())
    report = view.last_report
    assert ids_in(path) == original, "the file holds exactly the backed-up memories again"
    assert report.kept_aside is not None and report.kept_aside.exists()
    with open_store(report.kept_aside, readonly=True) as kept_store:
        kept_contents = {m.content for m in kept_store.list(limit=None)}
    assert "Written after the backup" in kept_contents, "the replaced file was kept as it was"
    assert sorted(original)[0] not in ids_in(report.kept_aside)
    assert any(info.before_restore for info in view.listing.backups)
    assert "previous file is kept at" in view.message.text()
    assert any(c.membership_changed and not c.ids for c in changes), "views reload after a restore"
    with open_store(path) as store:
        assert store.count(superseded="show") == 30


def test_cancelling_the_confirmation_restores_nothing(ctx, loop, ora_home: Path, qtbot) -> None:
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 5, seed=8)
    view = BackupsView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        await until(lambda: view.listing is not None)
        view.backup_button.click()
        await until(lambda: view.listing is not None and len(view.listing.backups) == 1)
        store = await ctx.run(ctx.store_for, path)
        await ctx.run(store.add, "kept because the restore is cancelled", "fact", 5)
        view.restore_button.click()
        await until(lambda: view.confirm is not None and view.confirm.isVisible())
        click(view.confirm, "Cancel")
        await until(lambda: view.message.text() == "Nothing was restored.")

    loop.run_until_complete(scenario())
    assert len(ids_in(path)) == 6
    assert len(view.listing.backups) == 1, "nothing was set aside either"


def test_a_damaged_backup_is_refused_with_its_name_and_changes_nothing(ctx, loop, ora_home: Path, qtbot) -> None:
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 5, seed=9)
    before = ids_in(path)
    view = BackupsView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        await until(lambda: view.listing is not None)
        view.backup_button.click()
        await until(lambda: view.listing is not None and len(view.listing.backups) == 1)
        backup = view.listing.backups[0].path
        backup.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)  # truncated: looks like SQLite, is not
        view.restore_button.click()
        await until(lambda: "cannot be restored" in view.message.text() or view.confirm is not None)

    loop.run_until_complete(scenario())
    assert view.confirm is None, "no confirmation is offered for an unusable backup"
    assert view.listing.backups[0].path.name in view.message.text()
    assert ids_in(path) == before


def test_no_selection_and_read_only(ctx, loop, ora_home: Path, qtbot) -> None:
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 3, seed=10)
    view = BackupsView(ctx)
    qtbot.addWidget(view)
    view.show()
    ctx.read_only = True

    async def scenario() -> None:
        await until(lambda: "Select an agent" in view.heading.text())
        assert not view.backup_button.isEnabled()
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        await until(lambda: view.listing is not None)
        view.backup_button.click()  # a backup reads the file only: allowed when read-only
        await until(lambda: view.listing is not None and len(view.listing.backups) == 1)

    loop.run_until_complete(scenario())
    assert not view.restore_button.isEnabled()
    assert view.ask_restore() is None


def test_backups_made_elsewhere_appear_when_the_panel_is_shown_again(ctx, loop, ora_home: Path, qtbot) -> None:
    from ora_desktop.core.maintenance import run_job

    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 4, seed=11)
    view = BackupsView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        await until(lambda: view.listing is not None and not view.listing.backups)
        view.hide()  # another tab is in front
        report = await ctx.run(run_job, "backup", path)  # as the scheduler or the daemon would
        assert report.ok
        view.show()
        await until(lambda: view.listing is not None and len(view.listing.backups) == 1, what="re-listing on show")

    loop.run_until_complete(scenario())
