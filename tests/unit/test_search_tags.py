"""Tags extracted at index time: files, commands, functions, errors, languages, URLs."""

from __future__ import annotations

from ora_desktop.core.search import extract_tags


def kinds(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for kind, value in extract_tags(text):
        out.setdefault(kind, []).append(value)
    return out


def test_every_kind() -> None:
    found = kinds(
        "Fixed TypeError in src/app.ts: createUser() failed with ENOENT on ./config.json and README.md. "
        "Run npm install, then `git commit -m x`. Docs: https://example.com/docs?a=1.\n"
        "```python\nprint(x)\n```\n$ make test"
    )
    assert found["file"] == ["src/app.ts", "./config.json", "README.md"]
    assert found["function"] == ["createUser", "print"]
    assert found["error"] == ["TypeError", "ENOENT"]
    assert set(found["command"]) == {"npm install", "git commit", "make test"}
    assert found["language"] == ["python"]
    assert found["url"] == ["https://example.com/docs?a=1"]


def test_prose_is_not_tagged() -> None:
    found = kinds("We met e.g. at 3.11 pm, etc. The res.ok flag and order.total (see above) are fine. EOF.")
    assert found == {}


def test_libraries_named_like_files_are_not_files() -> None:
    found = kinds("Technologies: Node.js, Vue.js and Express; the entry point is src/node.js, the view App.js")
    assert found["file"] == ["src/node.js", "App.js"]


def test_urls_are_not_files_and_duplicates_are_dropped() -> None:
    found = kinds("see https://a.example/x.html and https://a.example/x.html; TypeError, typeerror TypeError")
    assert found == {"url": ["https://a.example/x.html"], "error": ["TypeError"]}


def test_error_constructors_are_errors_not_functions() -> None:
    found = kinds("throw new PermissionError('no') then ValueException raised; sqlite3.connect(path)")
    assert found["error"] == ["PermissionError", "ValueException"]
    assert found["function"] == ["sqlite3.connect"]


def test_empty_and_odd_input() -> None:
    assert extract_tags("") == []
    assert extract_tags("(((((") == []
    assert extract_tags("." * 1000) == []
    assert len(extract_tags(" ".join(f"f{i}()" for i in range(500)))) == 64


def test_a_tags_line_gives_topics_and_known_kinds() -> None:
    found = kinds("Added JWT auth.\n\nTags: authentication, jwt, error=ENOENT, colour=blue\nTags:notaline")
    assert found["topic"] == ["authentication", "jwt", "colour=blue"]  # an unknown kind stays a topic
    assert found["error"] == ["ENOENT"]
    assert "topic" not in kinds("The tags: a, b in prose, or Tags: mid-line are not a tags line")
