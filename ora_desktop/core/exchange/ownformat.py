"""Ora Desktop's own exchange files: JSONL and CSV, every column exactly as stored.

JSONL: a first line ``{"ora_desktop_export": 1, "columns": [...]}`` naming the format version,
then one JSON object per memory with ``site``, ``agent`` and every column of ``memories``
(timestamps verbatim, numbers as numbers, ``null`` for NULL).

CSV: a header row of the same columns, then :data:`RAW_COLUMNS`, RFC 4180 quoting (CRLF
records; fields holding a comma, quote or line break are quoted), UTF-8. An empty cell is NULL;
``importance`` and ``access_count`` read back as whole numbers and ``health_score`` as a number,
the rest as text.

A ``content`` that is not valid UTF-8 text (an agent wrote other bytes) or is stored as a BLOB
cannot travel as text: the row carries ``content`` readable, with U+FFFD for the bad bytes, and
its exact bytes in base64 as ``content_bytes_b64`` (TEXT storage) or ``content_blob_b64`` (a
BLOB); an import writes those bytes back as they were, storage class included.
"""

from __future__ import annotations

import base64
import binascii
import csv
import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from ..decoding import RawText
from ..schema import MEMORY_COLUMNS
from .rows import BadRow, Incoming

FORMAT_VERSION = 1
HEADER_KEY = "ora_desktop_export"
EXPORT_COLUMNS: tuple[str, ...] = ("site", "agent", *MEMORY_COLUMNS)
#: The exact bytes of a ``content`` that is not valid UTF-8 text, or is a BLOB (base64).
BYTES_KEY, BLOB_KEY = "content_bytes_b64", "content_blob_b64"
RAW_COLUMNS = (BYTES_KEY, BLOB_KEY)
_INTEGERS = ("importance", "access_count")
_NUMBERS = ("health_score",)

csv.field_size_limit(1 << 30)  # a memory may be long; the default limit is 128 KiB


def header_line() -> str:
    """The JSONL first line naming the format and its version."""
    return json.dumps({HEADER_KEY: FORMAT_VERSION, "columns": list(EXPORT_COLUMNS)}) + "\n"


def raw_content(data: bytes, blob: bool) -> tuple[str, dict[str, str]]:
    """A ``content`` that cannot travel as text: readable text (U+FFFD for bad bytes) and the
    field keeping its exact bytes (``{}`` for valid UTF-8 text)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
    else:
        if not blob:
            return text, {}
    return text, {BLOB_KEY if blob else BYTES_KEY: base64.b64encode(data).decode("ascii")}


def _with_raw_content(values: dict[str, Any], where: str) -> dict[str, Any]:
    """Put a row's kept bytes back as its ``content`` (bytes for a BLOB, :class:`RawText` for
    TEXT), dropping the base64 fields; a row without them is returned as it is."""
    if values.get(BYTES_KEY) is None and values.get(BLOB_KEY) is None:
        return values
    out = {k: v for k, v in values.items() if k not in RAW_COLUMNS}
    key = BLOB_KEY if values.get(BLOB_KEY) is not None else BYTES_KEY
    try:
        data = base64.b64decode(str(values[key]), validate=True)
    except (binascii.Error, ValueError):
        raise BadRow(where, key, "is not base64") from None
    out["content"] = data if key == BLOB_KEY else RawText(data)
    return out


def write_json_lines(pages: Iterable[tuple[str, int]], out: IO[str]) -> int:
    """Write pages of ready-made JSON objects (``(lines joined by newlines, how many)``); returns how many."""
    count = 0
    for text, lines in pages:
        out.write(text)
        out.write("\n")
        count += lines
    return count


def write_csv(rows: Iterable[tuple[Any, ...]], out: IO[str], header: bool = True) -> int:
    """Write rows of ``EXPORT_COLUMNS + RAW_COLUMNS`` values as RFC 4180 CSV; returns how many."""
    writer = csv.writer(out, lineterminator="\r\n")
    if header:
        writer.writerow((*EXPORT_COLUMNS, *RAW_COLUMNS))
    count = 0
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
        count += 1
    return count


def read_jsonl(stream: IO[str]) -> Iterator[Incoming | BadRow]:
    """Memories from an Ora JSONL export (the header line is optional); a line that cannot be
    read is yielded as a :class:`BadRow` (the caller decides whether to skip it)."""
    for number, line in enumerate(stream, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            yield BadRow(f"line {number}", "json", f"not valid JSON ({exc})")
            continue
        if not isinstance(data, dict):
            yield BadRow(f"line {number}", "json", "is not a JSON object")
            continue
        if HEADER_KEY in data:
            if data[HEADER_KEY] != FORMAT_VERSION:
                raise BadRow(f"line {number}", HEADER_KEY,
                             f"format version {data[HEADER_KEY]!r} is not {FORMAT_VERSION}")
            continue
        try:
            yield Incoming(_with_raw_content(data, f"line {number}"), f"line {number}")
        except BadRow as bad:
            yield bad


def read_csv(stream: IO[str]) -> Iterator[Incoming | BadRow]:
    """Memories from an Ora CSV export (a header row naming at least ``id`` and ``content``);
    a record that cannot be read is yielded as a :class:`BadRow`."""
    reader = csv.reader(stream)
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as exc:
        raise BadRow("line 1", "header", str(exc)) from None
    missing = [c for c in ("id", "content") if c not in header]
    if missing:
        raise BadRow("line 1", "header", f"has no {' or '.join(missing)} column")
    start = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # the reader cannot go on after a broken record
            yield BadRow(f"line {start}", "csv", str(exc))
            return
        where = f"line {start}"
        start = reader.line_num + 1
        if not cells:
            continue
        if len(cells) != len(header):
            yield BadRow(where, "csv", f"has {len(cells)} fields, the header has {len(header)}")
            continue
        try:
            yield Incoming(_with_raw_content(_typed(dict(zip(header, cells, strict=True)), where), where), where)
        except BadRow as bad:
            yield bad


def _typed(row: dict[str, str], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, text in row.items():
        if text == "":
            out[name] = None
        elif name in _INTEGERS:
            try:
                out[name] = int(text)
            except ValueError:
                raise BadRow(where, name, f"{text!r} is not a whole number") from None
        elif name in _NUMBERS:
            try:
                out[name] = float(text)
            except ValueError:
                raise BadRow(where, name, f"{text!r} is not a number") from None
        else:
            out[name] = text
    return out


def looks_like_jsonl(first_line: str) -> bool:
    """A first line that is our header, or a JSON object with ``id`` and ``content``."""
    try:
        data = json.loads(first_line)
    except ValueError:
        return False
    return isinstance(data, dict) and (HEADER_KEY in data or ("id" in data and "content" in data))


def looks_like_csv(first_line: str) -> bool:
    """A CSV header row naming ``id`` and ``content``."""
    try:
        header = next(csv.reader([first_line]))
    except (csv.Error, StopIteration):
        return False
    return "id" in header and "content" in header
