"""Ordinary Markdown notes (a folder such as an Obsidian vault, or one file) as ``context`` memories.

Each note is split at its headings (``#`` to ``######``, not inside code fences): every section
with text becomes one memory of type ``context``, importance 5, holding the heading, the section's
text and a ``Tags:`` line the search tag extractor reads — the note's path (``file=…``), the
heading and the note's front-matter tags (``tags: [a, b]``, ``tags: a, b`` or a ``- a`` list).
Text before the first heading is a section named after the note. Ids derive from the note's path
(relative to the folder imported) and the section's headings, so importing the same notes again
adds nothing, and a section whose text changed is updated (``on_conflict="changed"``). Times are
the note's modification time. Hidden folders (``.obsidian``, ``.git``) are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from .. import timestamps
from .rows import BadRow, Incoming, derived_id
from .sources import ImportOptions, join_blocks, memory, tags_line

KIND = "markdown"
SUFFIXES = (".md", ".markdown")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def note_files(path: Path) -> list[Path]:
    """The notes under ``path`` (itself when it is a file), in path order, hidden folders skipped."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(path).parts))


def front_matter(text: str) -> tuple[list[str], str]:
    """(front-matter tags, the note without its front matter)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return [], text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return [], text
    tags: list[str] = []
    block = lines[1:end]
    for i, line in enumerate(block):
        key, _, value = line.partition(":")
        if key.strip().lower() not in ("tags", "tag", "keywords"):
            continue
        value = value.strip()
        if value:
            tags += [t.strip().strip("'\"#") for t in value.strip("[]").split(",")]
        else:
            for item in block[i + 1:]:
                if not item.strip().startswith("-"):
                    break
                tags.append(item.strip()[1:].strip().strip("'\"#"))
    return [t for t in tags if t], "\n".join(lines[end + 1:])


def sections(text: str, title: str) -> list[tuple[tuple[str, ...], str]]:
    """(heading path, section text) of each section with text, in order."""
    out: list[tuple[tuple[str, ...], list[str]]] = [((title,), [])]
    path: list[tuple[int, str]] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            path = [(lvl, name) for lvl, name in path if lvl < level] + [(level, heading.group(2))]
            out.append((tuple(name for _lvl, name in path), []))
        else:
            out[-1][1].append(line)
    return [(names, "\n".join(lines).strip()) for names, lines in out if "\n".join(lines).strip()]


def read(root: Path, options: ImportOptions) -> Iterator[Incoming | BadRow]:
    """Memories from the notes under ``root`` (a folder or one file)."""
    base = root if root.is_dir() else root.parent
    for note in note_files(root):
        relative = note.relative_to(base).as_posix()
        try:
            text = note.read_text(encoding="utf-8-sig").replace("\r\n", "\n")
        except UnicodeDecodeError as exc:
            yield BadRow(relative, "content", f"not UTF-8 text ({exc.reason} at byte {exc.start})")
            continue
        tags, body = front_matter(text)
        when = timestamps.to_sql(datetime.fromtimestamp(note.stat().st_mtime, UTC).replace(microsecond=0))
        seen: dict[tuple[str, ...], int] = {}
        for names, section in sections(body, note.stem):
            seen[names] = seen.get(names, 0) + 1
            heading = " › ".join(names)
            content = join_blocks(f"# {names[-1]}", section,
                                  tags_line([("file", relative), (None, heading), *((None, t) for t in tags)]))
            id_ = derived_id("md", relative, *names, seen[names])
            yield Incoming(memory(id_, content, "context", 5, when, when, options),
                           f"{relative}, section {heading!r}")


def count(root: Path) -> int:
    """How many notes (for progress; each gives one memory per section)."""
    return len(note_files(root))


__all__ = ["KIND", "count", "front_matter", "note_files", "read", "sections"]
