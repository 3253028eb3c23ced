"""Fixtures shared by the integration tests."""

from __future__ import annotations

import pytest

from ora_desktop.core.sync import baseline


@pytest.fixture
def fingerprinted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many rows sync fingerprinted (the count grows by one a row; reset it between syncs)."""
    calls = [0]
    real = baseline.row_fingerprint

    def counted(values):  # noqa: ANN001, ANN202
        calls[0] += 1
        return real(values)

    monkeypatch.setattr(baseline, "row_fingerprint", counted)
    return calls
