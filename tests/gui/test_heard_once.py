"""Every commit is heard once by the window's views, as whoever made it: a job run from the Jobs
view (on a store of its own: the watched store's feed tells them, with the ids it removed), a
restore, the person's edit with an agent's commit right before it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ora_desktop.core import Initiator
from ora_desktop.gui.jobs.preview import PreviewDialog
from ora_desktop.gui.jobs.view import JobsView

from .panels_support import ctx_fixture, loop_fixture, until  # noqa: F401  (fixtures)
from .test_jobs import agent_with_expired


def test_a_job_run_from_the_window_is_heard_once_as_a_job(ctx, loop, ora_home: Path, qtbot) -> None:
    agent, path = agent_with_expired(ora_home)
    view = JobsView(ctx)
    qtbot.addWidget(view)
    heard = []
    ctx.store_changed.connect(lambda where, change: heard.append((where, change)))

    async def scenario() -> None:
        ctx.set_current(agent)
        await ctx.run(ctx.store_for, path)  # the Memories tab holds the file open, watched
        ctx.start_watching(50)
        await until(lambda: view.snapshot is not None and view.snapshot.schedule, what="schedule")
        view.job.setCurrentIndex(view.job.findData("cleanup"))
        view.run_button.click()
        await until(lambda: isinstance(view.preview, PreviewDialog) and view.preview.isVisible(), what="preview")
        view.preview.confirm.click()
        await until(lambda: view.last_report is not None and not view.last_report.dry_run, what="the real run")
        await until(lambda: heard, what="the views told of the run")
        await asyncio.sleep(0.5)  # ten more looks of the watcher: nothing more is heard

    loop.run_until_complete(scenario())
    assert view.last_report.outcome == "ok"
    [(where, change)] = heard
    assert where == path.resolve() and change.removed == {"old-1", "old-2"}
    assert change.initiator is Initiator.JOB


def test_a_restore_from_the_window_is_heard_once_as_the_persons(ctx, loop, ora_home: Path, qtbot,
                                                                monkeypatch) -> None:
    """The window's watcher keeps looking while the restore replaces the file: the restore's
    writes are not heard as another program's as well."""
    import time

    from ora_desktop.core import AgentFile
    from ora_desktop.core.demo import write_agent
    from ora_desktop.gui.backups import data
    from ora_desktop.gui.backups.view import BackupsView

    from .test_backups import click

    real_restore = data.restore

    def restore_then_linger(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        report = real_restore(*args, **kwargs)
        time.sleep(0.3)  # (the restore's last steps: the watcher looks at the replaced file meanwhile)
        return report

    monkeypatch.setattr(data, "restore", restore_then_linger)

    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 30, seed=7)
    view = BackupsView(ctx)
    qtbot.addWidget(view)
    view.show()
    heard = []

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        await until(lambda: view.listing is not None and "0 backups" in view.heading.text(), what="empty list")
        view.backup_button.click()
        await until(lambda: view.listing is not None and len(view.listing.backups) == 1, what="the backup")
        store = await ctx.run(ctx.store_for, path)  # the Memories tab holds the file open, watched
        await ctx.run(store.add, "Written after the backup", "fact", 6)
        ctx.start_watching(20)
        await asyncio.sleep(0.2)  # the watcher has looked since: our own write is not heard from it
        ctx.store_changed.connect(lambda where, change: heard.append((where, change)))
        view.table.selectRow(0)
        view.restore_button.click()
        await until(lambda: view.confirm is not None and view.confirm.isVisible(), what="confirmation")
        click(view.confirm, "Restore")
        await until(lambda: view.last_report is not None and hasattr(view.last_report, "kept_aside"),
                    what="the restore")
        await asyncio.sleep(0.5)  # many more looks of the watcher: nothing more is heard

    loop.run_until_complete(scenario())
    [(where, change)] = heard
    assert where == path.resolve() and change.initiator is Initiator.USER and not change.ids


def test_an_agents_commit_right_before_the_persons_edit_is_heard_once_each(ctx, loop, ora_home: Path,
                                                                           qtbot) -> None:
    """An agent commits, then the person's edit commits before the window's watcher looks: the
    views hear the edit once, as the person's, and the agent's commit once, as the agent's —
    never the edit a second time, as another program's."""
    from ora_desktop.core import AgentFile
    from ora_desktop.core.demo import write_agent
    from ora_desktop.core.operations import edits

    from ..unit.test_feed import agent

    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 30, seed=7)
    heard = []

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        store = await ctx.run(ctx.store_for, path)  # the Memories tab holds the file open
        ours, theirs = (m.id for m in await ctx.run(store.list, None, limit=2))
        ctx.store_changed.connect(lambda where, change: heard.append(change))
        agent(path, "UPDATE memories SET importance = 1 + importance % 9 WHERE id = ?", params=[[theirs]])
        await ctx.run(edits.edit, store, ours, {"importance": 10})
        ctx.start_watching(20)
        await until(lambda: len(heard) >= 2, what="both commits heard")
        await asyncio.sleep(0.3)  # more looks of the watcher: nothing more is heard
        assert [(c.ids, c.initiator) for c in heard] == [({ours}, Initiator.USER), ({theirs}, Initiator.EXTERNAL)]

    loop.run_until_complete(scenario())
