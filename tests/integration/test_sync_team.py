"""Twenty homes syncing one agent through one server at once (real PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.sync_support import server_rows
from tests.integration.team import problems, run_team

pytestmark = pytest.mark.slow  # a real server, twenty homes


def test_twenty_homes_editing_the_same_memories_converge_and_lose_nothing(pg_url: str, tmp_path: Path) -> None:
    team = run_team(pg_url, tmp_path, homes=20, memories=30, changes=40, per_sync=10)
    assert team.changes == 800 and sum(team.decided.values()) > 0  # the edits did collide
    assert problems(team) == []
    server = server_rows(pg_url)
    final = team.homes[0].memories()
    assert {i: (r["content"], r["access_count"]) for i, r in server.items()} == {
        i: (m.content, m.access_count) for i, m in final.items()}
