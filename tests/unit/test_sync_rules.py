"""The rules sync merges by: usage (touches add up, decay counts once) and clock offsets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ora_desktop.core.sync import clock, usage

BASE = (3, "2026-01-01 10:00:00", 0.5)


@pytest.mark.parametrize(("theirs", "ours", "expected"), [
    ((5, "2026-01-02 09:00:00", 0.7), (4, "2026-01-03 08:00:00", 0.6), (6, "2026-01-03 08:00:00", 0.8)),  # touches add
    ((3, BASE[1], 0.49), (3, BASE[1], 0.49), (3, BASE[1], 0.49)),  # the same day's decay on both: once
    ((4, "2026-01-02 09:00:00", 0.6), (3, BASE[1], 0.49), (4, "2026-01-02 09:00:00", 0.59)),  # touch there, decay here
    ((3, BASE[1], 0.48), (3, BASE[1], 0.49), (3, BASE[1], 0.48)),  # the deeper decay stands
    ((3, BASE[1], 0.5), (13, "2026-01-05 00:00:00", 1.0), (13, "2026-01-05 00:00:00", 1.0)),  # capped at 1
    ((3, BASE[1], 0.005), (3, BASE[1], 0.0), (3, BASE[1], 0.0)),  # floored at 0
])
def test_usage_merges_by_the_documented_rules(theirs, ours, expected) -> None:
    count, last, health = usage.merge(theirs, ours, BASE)
    assert (count, last) == expected[:2] and health == pytest.approx(expected[2])


def test_without_a_baseline_the_larger_usage_and_later_access_win() -> None:
    assert usage.merge((2, "2026-01-01T10:00:00Z", 0.4), (5, "2025-12-31 10:00:00", 0.3), None) == (
        5, "2026-01-01T10:00:00Z", 0.4)


def test_a_clock_offset_is_whole_seconds_and_small_ones_count_as_none() -> None:
    t = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert clock.measure(t + timedelta(seconds=0.4), t, t).offset == 0.0
    ahead = clock.measure(t - timedelta(days=1), t, t)  # the server is a day behind us: our clock runs ahead
    assert ahead.offset == pytest.approx(-86400, abs=1)
    assert ahead.warning().startswith("this machine's clock is 1 day ahead of the server's")
    assert clock.Clock(90).warning().startswith("this machine's clock is 1 min 30 s behind")
    assert clock.Clock(30).warning() is None
    assert ahead.to_server("2026-01-02 12:00:00") == t
