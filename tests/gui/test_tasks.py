"""The Task panel shows a spawned task agent's description, status and pretty-printed JSON."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ora_desktop.core import AgentFile
from ora_desktop.core.demo import write_agent
from ora_desktop.gui.tasks.view import TaskView

from .panels_support import ctx_fixture, loop_fixture, until  # noqa: F401  (fixtures)
from .test_browse_tables import click_header


def add_task(path: Path, task_id: str, description: str, input_raw: str | None, output_raw: str | None,
             status: str = "completed", created: str = "2025-01-14 10:30:00") -> None:
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO task_context (id, task_description, input_data, output_data, status, created_at, completed_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (task_id, description, input_raw, output_raw, status, created,
         "2025-01-14T15:30:00.000Z" if status == "completed" else None),
    )
    conn.commit()
    conn.close()


def shown_task(ctx, loop, qtbot, agent: str, path: Path) -> TaskView:
    """A Task panel showing the task agent ``agent`` of site anwe-sh (its details read)."""
    view = TaskView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", agent, path))
        await until(lambda: view.stack.currentIndex() == 1, what="task details")

    loop.run_until_complete(scenario())
    return view


def test_task_agent_shows_description_status_and_pretty_json(ctx, loop, ora_home: Path, qtbot) -> None:
    path = ora_home / "sites" / "anwe-sh" / "task-7.site.db"
    write_agent(path, 5, seed=1)
    output = {"findings": 3, "open": ["TypeError in computeTax()"], "summary": "日本語 pages lacked translations"}
    add_task(path, "task-7", "Audit the checkout flow", json.dumps({"pages": ["/cart", "/checkout"]}),
             json.dumps(output, ensure_ascii=False))
    view = shown_task(ctx, loop, qtbot, "task-7", path)
    assert view.description.text() == "Audit the checkout flow"
    assert "completed" in view.status_label.text()
    assert view.input_box.text.toPlainText() == '{\n  "pages": [\n    "/cart",\n    "/checkout"\n  ]\n}'
    shown = view.output_box.text.toPlainText()
    assert json.loads(shown) == output
    assert "\n  \"findings\": 3," in shown and "日本語" in shown  # indented, not \u-escaped
    assert view.output_box.note.text() == ""
    assert view.finished.text() != "not finished"
    assert view.parent_label.text().startswith("none found"), "no other agent in this site"


def test_text_that_is_not_json_is_shown_as_stored_and_said_so(ctx, loop, ora_home: Path, qtbot) -> None:
    path = ora_home / "sites" / "anwe-sh" / "task-8.site.db"
    write_agent(path, 1, seed=2)
    write_agent(ora_home / "sites" / "anwe-sh" / "ora.site.db", 1, seed=3)
    add_task(path, "task-8", "Summarise the logs", "{not json", None, status="active")
    view = TaskView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "task-8", path))
        await until(lambda: view.stack.currentIndex() == 1)

    loop.run_until_complete(scenario())
    assert view.input_box.text.toPlainText() == "{not json"
    assert "Not valid JSON" in view.input_box.note.text()
    assert view.output_box.text.toPlainText() == ""
    assert view.finished.text() == "not finished"
    assert "active" in view.status_label.text()
    assert view.parent_label.text() == "anwe-sh/ora"


def test_ordinary_agent_and_no_selection_explain_why_there_is_nothing(ctx, loop, ora_home: Path, qtbot) -> None:
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, 3, seed=3)
    view = TaskView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        await until(lambda: "Select a task agent" in view.message.text())
        ctx.set_current(AgentFile("anwe-sh", "ora", path))
        await until(lambda: "not a spawned task agent" in view.message.text())

    loop.run_until_complete(scenario())
    assert view.stack.currentIndex() == 0


def test_unreadable_file_gives_a_message_naming_it(ctx, loop, ora_home: Path, qtbot) -> None:
    path = ora_home / "sites" / "anwe-sh" / "task-9.site.db"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage" * 100)
    view = TaskView(ctx)
    qtbot.addWidget(view)
    view.show()

    async def scenario() -> None:
        ctx.set_current(AgentFile("anwe-sh", "task-9", path))
        await until(lambda: "Could not read" in view.message.text())

    loop.run_until_complete(scenario())
    assert "task-9.site.db" in view.message.text()


def test_task_context_is_a_sortable_table_and_the_chosen_row_is_shown(ctx, loop, ora_home, qtbot):
    path = ora_home / "sites" / "anwe-sh" / "task-9.site.db"
    write_agent(path, 3, seed=2)
    add_task(path, "t-old", "Audit the old checkout", None, None, created="2025-01-10 09:00:00")
    add_task(path, "t-new", "Write the release notes", None, None, status="active", created="2025-03-02 09:00:00")
    add_task(path, "t-mid", "Translate the help pages", None, None, status="failed", created="2025-02-01 09:00:00")
    view = shown_task(ctx, loop, qtbot, "task-9", path)
    table = view.task_list
    assert table.isVisible() and table.rowCount() == 3
    assert [table.item(r, 4).text() for r in range(3)] == ["t-new", "t-mid", "t-old"]  # newest first
    assert view.description.text() == "Write the release notes"
    click_header(qtbot, table.horizontalHeader(), 2)  # Started: oldest first
    assert [table.item(r, 4).text() for r in range(3)] == ["t-old", "t-mid", "t-new"]
    table.selectRow(1)
    assert view.description.text() == "Translate the help pages" and "failed" in view.status_label.text()
