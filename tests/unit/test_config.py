"""config.toml: defaults, overrides, per-site settings, where each comes from, bad values."""

from __future__ import annotations

from pathlib import Path

import pytest

from ora_desktop.core import paths
from ora_desktop.core.config import Config, ConfigError, config_path, parse_interval


def write(text: str) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_no_file_means_the_documented_defaults() -> None:
    config = Config.load()
    assert not config.exists and config.path == paths.config_dir() / "config.toml"
    assert config.schedule("decay").value == 86400 and config.schedule("decay").source == "default"
    assert config.schedule("cleanup").value == 3600
    assert config.schedule("backup").value == 86400
    assert config.schedule("check").value == 7 * 86400
    assert config.backup_dir == paths.data_dir() / "backups"
    assert not config.retention("any").active


def test_global_and_per_site_overrides_say_where_they_come_from(tmp_path: Path) -> None:
    path = write(f"""
[schedule]
cleanup = "15m"
backup = "off"

[backup]
dir = "{tmp_path / 'bk'}"
keep_last = 3

[retention]
max_age_days = 365

[sites.anwe-sh.schedule]
cleanup = "1s"

[sites.anwe-sh.retention]
max_memories = 1000
""")
    config = Config.load()
    assert config.schedule("cleanup").value == 900
    assert config.schedule("cleanup").source == f"{path} [schedule]"
    assert config.schedule("cleanup", "anwe-sh").value == 1
    assert config.schedule("cleanup", "anwe-sh").source == f"{path} [sites.anwe-sh.schedule]"
    assert config.schedule("cleanup", "other").value == 900
    assert config.schedule("backup").value is None
    assert config.backup_dir == tmp_path / "bk"
    assert config.backup_setting("keep_last").value == 3 and config.backup_setting("keep_daily").source == "default"
    shop = config.retention("anwe-sh")
    assert shop.max_memories == 1000 and shop.max_age_days == 365  # site table overrides key by key
    effective = {s.key: s for s in config.effective(["anwe-sh"])}
    assert effective["schedule.cleanup"].value == "every 15m"
    assert effective["schedule.backup"].value == "off"
    assert effective["schedule.decay"].source == "default"
    assert effective["sites.anwe-sh.schedule.cleanup"].value == "every 1s"
    assert effective["sites.anwe-sh.retention.max_memories"].source == f"{path} [sites.anwe-sh.retention]"


@pytest.mark.parametrize(("text", "needle"), [
    ("[schedule\n", "not valid TOML"),
    ('[schedule]\ndecay = "sometimes"\n', "'sometimes' is not an interval"),
    ('[schedule]\ndefrag = "daily"\n', "unknown job 'defrag'"),
    ("[backup]\nkeep_last = -1\n", "keep_last"),
    ("[retention]\nmax_memories = 2.5\n", "max_memories"),
    ('[sites.x.schedule]\ndecay = "0s"\n', "not an interval"),
    ("[scheduel]\n", "unknown table"),
    ("[backup]\nkeep_lats = 3\n", "unknown setting(s) keep_lats"),
    ("[sites.shop.retention]\nmax_days = 3\n", "unknown setting(s) max_days"),
    ('[sites.shop.backup]\ndir = "x"\n', "unknown table(s) backup"),
])
def test_bad_config_is_refused_naming_the_file_and_the_value(text: str, needle: str) -> None:
    path = write(text)
    with pytest.raises(ConfigError) as error:
        Config.load()
    assert str(path) in str(error.value) and needle in str(error.value)


def test_intervals() -> None:
    assert parse_interval("hourly") == 3600 and parse_interval("weekly") == 604800
    assert parse_interval("30s") == 30 and parse_interval("1.5h") == 5400 and parse_interval(90) == 90
    assert parse_interval("off") is None
    for bad in ("", "-5m", "5 parsecs", True, 0):
        with pytest.raises(ConfigError):
            parse_interval(bad)


def test_a_relative_backup_dir_is_beside_the_config_file() -> None:
    path = write('[backup]\ndir = "backups"\n')
    assert Config.load().backup_dir == path.parent / "backups"


def test_a_config_that_is_not_utf8_is_refused_naming_the_file_and_the_byte() -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"[schedule]\ndecay = \"1d\"\n# caf\xff\n")
    with pytest.raises(ConfigError) as caught:
        Config.load()
    assert str(caught.value).startswith(f"{path}: not UTF-8 text (byte 0xff at offset ")
