"""The vocabulary of settings, below both the config file and the sections other modules read
(``sync_settings``): an interval's parsing and wording, a setting with its source, the error."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .errors import OraError

NAMED_INTERVALS = {"hourly": 3600, "daily": 86400, "weekly": 7 * 86400}
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class ConfigError(OraError):
    """``config.toml`` is unreadable or holds a value we cannot use; the message names both."""


def parse_interval(value: Any, where: str = "interval") -> int | None:
    """Seconds for ``"daily"``/``"1s"``/``"15m"``/``3600``; ``None`` for ``"off"``. Raises ``ConfigError``."""
    if isinstance(value, bool):
        raise ConfigError(f"{where}: {value!r} is not an interval")
    if isinstance(value, (int, float)):
        if value <= 0:
            raise ConfigError(f"{where}: {value!r} must be a positive number of seconds")
        return int(value) or 1
    text = str(value).strip().lower()
    if text in ("off", "never", "none", "disabled"):
        return None
    if text in NAMED_INTERVALS:
        return NAMED_INTERVALS[text]
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhdw])", text)
    if not match or float(match.group(1)) <= 0:
        raise ConfigError(
            f"{where}: {value!r} is not an interval (use hourly, daily, weekly, off, or e.g. 30s, 15m, 6h, 2d)"
        )
    return max(1, int(float(match.group(1)) * UNITS[match.group(2)]))


def describe_interval(seconds: int | None) -> str:
    """``"daily"``, ``"every 30s"`` or ``"off"``."""
    if seconds is None:
        return "off"
    for name, value in NAMED_INTERVALS.items():
        if seconds == value:
            return name
    for unit in ("w", "d", "h", "m"):
        if seconds % UNITS[unit] == 0:
            return f"every {seconds // UNITS[unit]}{unit}"
    return f"every {seconds}s"


@dataclass(frozen=True)
class Setting:
    """One effective value and where it came from (``default`` or ``<file> [table]``)."""

    key: str
    value: Any
    source: str
