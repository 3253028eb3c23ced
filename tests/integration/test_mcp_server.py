"""The MCP server as agents meet it: a real ``ora-desktop mcp`` process driven over stdio by
the MCP SDK's own client. Tools, resources, recoverable forget, read-only, bad calls."""

from __future__ import annotations

import contextlib
import json
import socket
import sqlite3
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client

from ora_desktop.core import open_store
from ora_desktop.core.search import index_state
from ora_desktop.core.validation import MAX_CONTENT_CHARS

from .mcp_support import ROOT, call, file_digest, mcp_session, refused, server_env, text_of

pytestmark = pytest.mark.slow  # starts real processes

READING = {"recall", "search", "context", "important", "get", "list", "links", "history"}
WRITING = {"remember", "update", "touch", "supersede", "link", "forget", "undelete"}


def rows_of(path: Path) -> list[tuple]:
    """Every memory row, in id order (the file's logical content)."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT * FROM memories ORDER BY id").fetchall()
    finally:
        conn.close()


@pytest.fixture
def agent_file(seed_db: Callable[..., Path]) -> Path:
    return seed_db([
        ("m-deploy", "The site deploys from the main branch through GitHub Actions", "fact", 8),
        ("m-tabs", "The user prefers tabs over spaces in Python", "preference", 6),
        ("m-old", "The API key rotates every 30 days", "fact", 4),
    ])


def test_tools_have_described_schemas_and_an_agent_round_trip_works(agent_file: Path) -> None:
    async def scenario() -> None:
        async with mcp_session("--db", agent_file) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == READING | WRITING
            for tool in tools.values():
                assert tool.description and tool.output_schema, tool.name
                for name, prop in tool.input_schema["properties"].items():
                    assert prop.get("description"), f"{tool.name}.{name} has no description"
            assert tools["forget"].annotations.destructive_hint and tools["recall"].annotations.read_only_hint

            stored = await call(session, "remember", content="Deploys need the staging smoke test first",
                                type="fact", importance=9, related=["m-deploy"])
            memory = stored.structured_content["memory"]
            assert memory["importance"] == 9 and memory["related_to"] == ["m-deploy"]
            assert memory["sync_status"] == "pending" and memory["id"] in text_of(stored)

            recalled = await call(session, "recall", type="fact")
            ids = [m["id"] for m in recalled.structured_content["memories"]]
            assert ids[:2] == [memory["id"], "m-deploy"]  # most important first
            assert "staging smoke test" in text_of(recalled)

            found = await call(session, "search", query="smoke test")
            assert found.structured_content["hits"][0]["id"] == memory["id"]
            assert "smoke" in text_of(found)

            bundle = await call(session, "context", query="how do deploys work?", token_budget=200)
            assert bundle.structured_content["tokens"] <= 200
            placed = {i for s in bundle.structured_content["sections"] for i in s["ids"]}
            assert {memory["id"], "m-deploy"} <= placed

            touched = await call(session, "touch", ids=["m-tabs"])
            assert touched.structured_content["memories"][0]["access_count"] == 1

            newer = (await call(session, "remember", content="The API key rotates every 7 days",
                                importance=5)).structured_content["memory"]["id"]
            await call(session, "supersede", old_id="m-old", new_id=newer)
            await call(session, "link", id="m-tabs", other_id=newer)
            important = await call(session, "important")
            assert memory["id"] in {m["id"] for m in important.structured_content["memories"]}

            resources = {str(r.uri) for r in (await session.list_resources()).resources}
            assert resources == {"ora://anwe-sh/ora/important"}
            templates = {t.uri_template for t in (await session.list_resource_templates()).resource_templates}
            assert templates == {"ora://anwe-sh/ora/memory/{memory_id}", "ora://anwe-sh/ora/recall/{type}"}
            read = await session.read_resource("ora://anwe-sh/ora/memory/m-deploy")
            assert json.loads(read.contents[0].text)["content"].startswith("The site deploys")
            listed = json.loads((await session.read_resource("ora://anwe-sh/ora/important")).contents[0].text)
            assert [m["id"] for m in listed][:2] == [memory["id"], "m-deploy"]
            with pytest.raises(MCPError, match="ghost"):
                await session.read_resource("ora://anwe-sh/ora/memory/ghost")
            await call(session, "recall", type="fact")  # still serving after a protocol error

    anyio.run(scenario)
    # Another program (here a second store; the window reads the same way) sees every write.
    with open_store(agent_file, readonly=True) as store:
        assert store.get("m-old").superseded_by is not None
        assert store.get("m-tabs").access_count == 1 and len(store.get("m-tabs").related_to) == 1
        assert store.count(superseded="show") == 5


def test_forget_is_recoverable_with_the_cli_undelete(agent_file: Path) -> None:
    async def forget() -> dict:
        async with mcp_session("--db", agent_file) as session:
            done = await call(session, "forget", ids=["m-tabs", "m-old"], reason="wrong")
            assert "undelete" in text_of(done)
            gone = await call(session, "recall", type="preference")
            assert gone.structured_content["count"] == 0
            return done.structured_content

    done = anyio.run(forget)
    assert sorted(done["removed"]) == ["m-old", "m-tabs"] and len(done["trash_ids"]) == 2
    assert {r[0] for r in rows_of(agent_file)} == {"m-deploy"}
    command = done["restore_command"].split()
    assert command[:2] == ["ora-desktop", "undelete"]
    restored = subprocess.run([sys.executable, "-m", "ora_desktop", *command[1:], "--json"], capture_output=True,
                              text=True, env=server_env(), cwd=ROOT, timeout=120)
    assert restored.returncode == 0, restored.stderr
    assert sorted(json.loads(restored.stdout)["restored"]) == ["m-old", "m-tabs"]
    assert {r[0] for r in rows_of(agent_file)} == {"m-deploy", "m-old", "m-tabs"}


def test_read_only_server_offers_only_reading_tools_and_writes_nothing(agent_file: Path) -> None:
    before = file_digest(agent_file)

    async def scenario() -> None:
        async with mcp_session("--site", "anwe-sh", "--agent", "ora", "--read-only") as session:
            assert {t.name for t in (await session.list_tools()).tools} == READING
            for tool, arguments in (("remember", {"content": "should not land"}), ("forget", {"ids": ["m-deploy"]}),
                                    ("touch", {"ids": ["m-deploy"]})):
                assert tool in await refused(session, tool, arguments)
            found = await call(session, "search", query="deploys")
            assert found.structured_content["hits"][0]["id"] == "m-deploy"
            await call(session, "context", query="deploys", token_budget=100)
            await call(session, "recall", type="fact")

    anyio.run(scenario)
    assert file_digest(agent_file) == before


# Twenty malformed calls: each must come back as an error result naming the problem.
MALFORMED: list[tuple[str, dict, str]] = [
    ("remember", {"content": "x", "importance": "high"}, "importance"),           # wrong type
    ("remember", {"content": "x", "importance": 11}, "importance"),               # out of CHECK range
    ("remember", {"content": "x", "importance": 7.5}, "importance"),              # not whole
    ("remember", {"content": "x", "type": "opinion"}, "type"),                    # not a seed type
    ("remember", {"content": "   "}, "content"),                                  # blank
    ("remember", {"content": "a\x00b"}, "content"),                               # NUL
    ("remember", {"content": "x" * (MAX_CONTENT_CHARS + 1)}, "content"),          # oversized
    ("remember", {"importance": 5}, "content"),                                   # missing field
    ("remember", {"content": "x", "related": "m-deploy"}, "related"),             # a string, not a list
    ("remember", {"content": "x", "expires_at": "next tuesday"}, "expires_at"),   # not a time
    ("recall", {}, "type"),                                                       # missing field
    ("recall", {"type": "fact' OR 1=1 --"}, "type"),                              # SQL in a value
    ("recall", {"type": "fact", "limit": 0}, "limit"),                            # below range
    ("search", {"query": ["deploy"]}, "query"),                                   # wrong type
    ("context", {"query": "deploy", "token_budget": -5}, "token_budget"),         # below range
    ("touch", {"ids": ["m-deploy", "no-such-id"]}, "no-such-id"),                 # unknown id: nothing touched
    ("forget", {"ids": []}, "ids"),                                               # empty list
    ("forget", {"ids": ['"* NEAR(x']}, "NEAR"),                                   # FTS syntax as an id
    ("supersede", {"old_id": "m-deploy", "new_id": "m-deploy"}, "supersede itself"),
    ("link", {"id": "m-deploy", "other_id": "ghost"}, "ghost"),                   # unknown id
]


def test_twenty_malformed_calls_are_refused_and_the_server_keeps_answering(agent_file: Path) -> None:
    assert len(MALFORMED) == 20
    before = rows_of(agent_file)

    async def scenario() -> None:
        async with mcp_session("--db", agent_file) as session:
            for tool, arguments, named in MALFORMED:
                message = await refused(session, tool, arguments)
                assert named in message, (tool, named, message)
                alive = await call(session, "recall", type="fact")  # still answering, state intact
                assert alive.structured_content["count"] == 2
            # FTS5 syntax in a search is read as plain words (as in the CLI): answered, never an error.
            for query in ('"unbalanced', "NEAR(deploy", "* AND OR", "deploy) OR (x"):
                result = await session.call_tool("search", {"query": query})
                assert not result.is_error, text_of(result)
            assert await refused(session, "no_such_tool", {})

    anyio.run(scenario)
    assert rows_of(agent_file) == before


def test_cli_refuses_bad_targets_in_one_line(tmp_path: Path) -> None:
    def run(*argv: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "ora_desktop", "mcp", *map(str, argv)], capture_output=True,
                              text=True, env=server_env(), cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL)

    (tmp_path / "text.site.db").write_text("not a database")
    (tmp_path / "x.site.db").touch()
    for argv, named in (((), "--db PATH"), (("--db", tmp_path / "missing.site.db"), "missing.site.db"),
                        (("--db", tmp_path / "text.site.db"), "not an SQLite database"),
                        (("--site", "../etc", "--agent", "ora"), "'../etc'"),
                        (("--db", tmp_path / "x.site.db", "--http", "localhost:99999"), "65535"),
                        (("--db", tmp_path / "x.site.db", "--http", "localhost"), "HOST:PORT")):
        result = run(*argv)
        assert result.returncode != 0 and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and named in result.stderr, result.stderr


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listening_addresses(port: int) -> set[str]:
    """IPv4 addresses with a socket listening on ``port`` (from /proc/net/tcp; state 0A = LISTEN)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, port_hex = local.split(":")
        if state == "0A" and int(port_hex, 16) == port:
            found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


def test_streamable_http_binds_localhost_by_default_and_serves_the_tools(agent_file: Path) -> None:
    port = free_port()
    argv = ["-m", "ora_desktop", "mcp", "--db", str(agent_file), "--http", str(port)]
    server = subprocess.Popen([sys.executable, *argv],
                              env=server_env(), cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:  # wait for the listening socket (a cold start imports the SDK)
            assert server.poll() is None, server.stderr.read()
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "the HTTP server did not start listening"
            time.sleep(0.2)
        assert listening_addresses(port) == {"127.0.0.1"}

        async def scenario() -> None:
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=120) as session:
                    await session.initialize()
                    assert {t.name for t in (await session.list_tools()).tools} == READING | WRITING
                    await call(session, "remember", content="remembered over HTTP", importance=6)
                    assert "importance" in await refused(session, "remember", {"content": "x", "importance": 0})

        anyio.run(scenario)
    finally:
        server.terminate()
        server.wait(timeout=30)
    with open_store(agent_file, readonly=True) as store:
        assert store.search("remembered over HTTP").hits


def test_the_server_builds_the_search_index_before_the_first_search(agent_file: Path) -> None:
    assert not index_state(agent_file).built

    async def scenario() -> None:
        async with mcp_session("--db", agent_file, "--read-only") as session:
            with anyio.fail_after(120):
                while not index_state(agent_file).built:  # no search asked for: the server warms it
                    await anyio.sleep(0.1)
            assert (await call(session, "search", query="tabs")).structured_content["count"] == 1

    anyio.run(scenario)


def start_http(agent_file: Path, *argv: object, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``ora-desktop mcp --db FILE ARGV`` running, once its port answers."""
    port = next(int(str(a).rpartition(":")[2]) for a in argv if str(a).rpartition(":")[2].isdigit())
    server = subprocess.Popen([sys.executable, "-m", "ora_desktop", "mcp", "--db", str(agent_file), *map(str, argv)],
                              env=env or server_env(), cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while True:
        assert server.poll() is None, server.stderr.read()
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server
        assert time.monotonic() < deadline, "the HTTP server did not start listening"
        time.sleep(0.2)


def test_http_beyond_loopback_needs_a_token_and_checks_it_and_the_host(agent_file: Path, tmp_path: Path) -> None:
    port = free_port()
    refused_start = subprocess.run([sys.executable, "-m", "ora_desktop", "mcp", "--db", str(agent_file), "--http",
                                    f"0.0.0.0:{port}"], capture_output=True, text=True, env=server_env(), cwd=ROOT,
                                   timeout=120, stdin=subprocess.DEVNULL)
    assert refused_start.returncode != 0 and "Traceback" not in refused_start.stderr
    assert len(refused_start.stderr.strip().splitlines()) == 1 and "--token-file" in refused_start.stderr
    token = "t0k3n-" + "x" * 30
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    before = rows_of(agent_file)
    server = start_http(agent_file, "--http", f"0.0.0.0:{port}", "--token-file", token_file)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        call_body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "outsider", "version": "1"}}}
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        assert httpx2.post(url, json=call_body, headers=headers).status_code == 401
        wrong = {**headers, "Authorization": "Bearer " + "y" * 36}
        assert httpx2.post(url, json=call_body, headers=wrong).status_code == 401
        rebinding = {**headers, "Authorization": f"Bearer {token}", "Host": f"evil.example:{port}"}
        assert httpx2.post(url, json=call_body, headers=rebinding).status_code in (400, 403, 421)

        async def scenario() -> None:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as client:
                async with streamable_http_client(url, http_client=client) as (read, write):
                    async with ClientSession(read, write, read_timeout_seconds=120) as session:
                        await session.initialize()
                        await call(session, "remember", content="stored with the token", importance=6)

        anyio.run(scenario)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert len(rows_of(agent_file)) == len(before) + 1


def test_two_subscribers_of_one_server_both_hear_another_programs_write(agent_file: Path) -> None:
    """Two clients of one server subscribed to one memory: another program's commit reaches both
    (each subscription is told, neither takes the other's notice), and so does one by a client."""
    port = free_port()
    server = start_http(agent_file, "--http", str(port))
    uri = "ora://anwe-sh/ora/memory/m-tabs"
    heard: dict[str, list[str]] = {"first": [], "second": []}

    def listener(name: str):  # noqa: ANN202 (the SDK's message handler)
        async def on_message(message) -> None:  # noqa: ANN001
            root = getattr(message, "root", message)
            if getattr(root, "method", "") == "notifications/resources/updated":
                heard[name].append(str(root.params.uri))
        return on_message

    async def subscriber(name: str, stack: contextlib.AsyncExitStack) -> ClientSession:
        read, write = await stack.enter_async_context(streamable_http_client(f"http://127.0.0.1:{port}/mcp"))
        session = await stack.enter_async_context(
            ClientSession(read, write, read_timeout_seconds=120, message_handler=listener(name)))
        await session.initialize()
        with warnings.catch_warnings():  # deprecated in the 2026-07-28 protocol, still served
            warnings.simplefilter("ignore")
            await session.subscribe_resource(uri)
        return session

    async def until_both(count: int) -> None:
        with anyio.fail_after(30):
            while min(len(h) for h in heard.values()) < count:
                await anyio.sleep(0.1)

    async def scenario() -> None:
        async with contextlib.AsyncExitStack() as stack:
            first = await subscriber("first", stack)
            await subscriber("second", stack)
            writer = await anyio.to_thread.run_sync(lambda: subprocess.run(
                [sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                 "c.execute(\"UPDATE memories SET content = 'Tabs, width 2' WHERE id = 'm-tabs'\"); c.commit()",
                 str(agent_file)], capture_output=True, text=True, timeout=60))
            assert writer.returncode == 0, writer.stderr
            await until_both(1)
            await call(first, "update", id="m-tabs", importance=2)
            await until_both(2)

    try:
        anyio.run(scenario)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert heard == {"first": [uri, uri], "second": [uri, uri]}
