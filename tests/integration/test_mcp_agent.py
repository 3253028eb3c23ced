"""What an agent relies on over MCP (issue 24): no stale facts, no silent duplicates or
re-pointing, strict arguments refused in one sentence, the new tools, who-wrote-what in the
journal, prompts, and a server that answers even a request holding a lone surrogate. A real
``ora-desktop mcp`` process driven by the SDK's client (or raw JSON-RPC)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import MCPError
from mcp.types import ResourceTemplateReference

from .mcp_support import ROOT, call, mcp_session, refused, server_env, text_of

pytestmark = pytest.mark.slow  # starts real processes


@pytest.fixture
def agent_file(seed_db: Callable[..., Path]) -> Path:
    return seed_db([
        ("m-deploy", "The site deploys from the main branch through GitHub Actions", "fact", 8),
        ("m-tabs", "The user prefers tabs over spaces in Python", "preference", 6),
        ("m-old", "The API key rotates every 30 days", "fact", 7),
        ("m-gone", "The staging server is called blue", "fact", 9),
    ])


def cli(*argv: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ora_desktop", *map(str, argv)], capture_output=True, text=True,
                          env=server_env(), cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL)


def expire(path: Path, memory_id: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute("UPDATE memories SET expires_at = '2001-01-01 00:00:00' WHERE id = ?", (memory_id,))
    conn.commit()
    conn.close()


def test_recall_and_important_leave_out_what_the_agent_corrected_or_what_expired(agent_file: Path) -> None:
    expire(agent_file, "m-gone")

    async def scenario() -> None:
        async with mcp_session("--db", agent_file) as session:
            newer = (await call(session, "remember", content="The API key rotates every 7 days",
                                importance=7)).structured_content["memory"]["id"]
            await call(session, "supersede", old_id="m-old", new_id=newer)
            for tool, arguments in (("recall", {"type": "fact"}), ("important", {})):
                ids = [m["id"] for m in (await call(session, tool, **arguments)).structured_content["memories"]]
                assert newer in ids and "m-deploy" in ids, tool
                assert "m-old" not in ids and "m-gone" not in ids, (tool, ids)
            resource = await session.read_resource("ora://anwe-sh/ora/important")
            assert "m-old" not in resource.contents[0].text and "m-gone" not in resource.contents[0].text

    anyio.run(scenario)
    current = json.loads(cli("recall", "fact", "--db", agent_file, "--json").stdout)
    literal = json.loads(cli("recall", "fact", "--db", agent_file, "--all-versions", "--json").stdout)
    assert {"m-old", "m-gone"}.isdisjoint(m["id"] for m in current)
    assert {"m-old", "m-gone"} <= {m["id"] for m in literal}


def test_wrong_answers_are_refused_or_made_visible(agent_file: Path) -> None:
    async def scenario() -> None:
        async with mcp_session("--db", agent_file) as session:
            # Remembering twice returns the first; a copy must be asked for.
            again = await call(session, "remember", content="the user prefers TABS over spaces in python",
                               type="preference", importance=6)
            assert again.structured_content["status"] == "already remembered"
            assert again.structured_content["memory"]["id"] == "m-tabs" and "Already remembered" in text_of(again)
            copy = await call(session, "remember", content="The user prefers tabs over spaces in Python", copy=True)
            assert copy.structured_content["memory"]["id"] != "m-tabs"
            # Dangling related ids and re-pointing a superseded memory are refused, naming the problem.
            assert "'ghost'" in await refused(session, "remember", {"content": "x y", "related": ["ghost"]})
            n1 = (await call(session, "remember", content="Keys rotate weekly")).structured_content["memory"]["id"]
            n2 = (await call(session, "remember", content="Keys rotate daily")).structured_content["memory"]["id"]
            await call(session, "supersede", old_id="m-old", new_id=n1)
            message = await refused(session, "supersede", {"old_id": "m-old", "new_id": n2})
            assert f"already superseded by '{n1}'" in message
            # Strict arguments: one sentence naming the argument, no pydantic boilerplate.
            for tool, arguments, name in (("remember", {"content": "x", "importance": "7"}, "importance"),
                                          ("recall", {"type": "fact", "limit": True}, "limit"),
                                          ("context", {"query": "x", "hops": 9}, "hops"),
                                          ("touch", {"ids": []}, "ids")):
                message = await refused(session, tool, arguments)
                assert name in message and "pydantic" not in message and "validation error" not in message
                assert message.count("\n") == 0, message
            # Context names each memory's id, so the model can act on what it was given.
            bundle = await call(session, "context", query="how do deploys work?", token_budget=300)
            assert "[m-deploy]" in bundle.structured_content["text"]

    anyio.run(scenario)
    conn = sqlite3.connect(agent_file)
    assert conn.execute("SELECT superseded_by FROM memories WHERE id = 'm-old'").fetchone()[0] is not None
    assert conn.execute("SELECT count(*) FROM memories WHERE content LIKE '%tabs over spaces%'").fetchone()[0] == 2
    conn.close()


def test_schemas_declare_enums_bounds_and_min_items(agent_file: Path) -> None:
    async def scenario() -> None:
        async with mcp_session("--db", agent_file) as session:
            tools = {t.name: t.input_schema["properties"] for t in (await session.list_tools()).tools}
            assert tools["remember"]["type"]["enum"] == ["fact", "preference", "context", "task", "conversation"]
            assert (tools["remember"]["importance"]["minimum"], tools["remember"]["importance"]["maximum"]) == (1, 10)
            assert tools["recall"]["limit"]["maximum"] == 1000 and tools["context"]["hops"]["maximum"] == 5
            assert tools["forget"]["ids"]["minItems"] == 1 and tools["search"]["mode"]["enum"] == [
                "lexical", "semantic", "hybrid"]
            assert "date-time" in json.dumps(tools["remember"]["expires_at"])

    anyio.run(scenario)


def test_an_agents_day_is_journalled_as_its_client_and_seen_by_the_cli(agent_file: Path) -> None:
    async def scenario() -> dict:
        async with mcp_session("--db", agent_file, client="claude-code") as session:
            added = (await call(session, "remember", content="Deploys need the staging smoke test first",
                                importance=8, tags=["deploy", "error=ENOENT"], related=["m-deploy"])
                     ).structured_content["memory"]
            assert added["content"].endswith("\nTags: deploy, error=ENOENT")
            found = await call(session, "search", query="tag:deploy")
            assert [h["id"] for h in found.structured_content["hits"]] == [added["id"]]
            assert found.structured_content["mode"] == "lexical" and "(mode: lexical)" in text_of(found)
            got = (await call(session, "get", id=added["id"])).structured_content["memory"]
            updated = (await call(session, "update", id=added["id"], importance=9, version=got["version"])
                       ).structured_content["memory"]
            assert updated["importance"] == 9
            await call(session, "touch", ids=[added["id"]])
            await call(session, "link", id="m-tabs", other_id=added["id"])
            page = await call(session, "list", limit=3)
            assert [m["id"] for m in page.structured_content["memories"]][0] == added["id"]  # newest first
            rest = await call(session, "list", limit=3, cursor=page.structured_content["cursor"])
            assert len(page.structured_content["memories"]) + rest.structured_content["count"] == 5
            await call(session, "forget", ids=["m-gone"])
            restored = await call(session, "undelete", ids=["m-gone"])
            assert restored.structured_content["memories"][0]["id"] == "m-gone"
            prompts = {p.name for p in (await session.list_prompts()).prompts}
            assert prompts == {"start_task", "wrap_up"}
            start = await session.get_prompt("start_task", {"task": "deploy the site"})
            assert "[m-deploy]" in start.messages[0].content.text
            with pytest.raises(MCPError) as unknown:
                await session.get_prompt("no_such_prompt")
            assert unknown.value.error.code == -32602 and "no_such_prompt" in unknown.value.error.message
            await call(session, "recall", type="fact")  # still serving
            return added

    added = anyio.run(scenario)
    steps = json.loads(cli("undo", "--list", "--db", agent_file, "--json").stdout)
    assert [(s["label"].split()[0], s["by"]) for s in steps] == [
        ("restore", "mcp:claude-code"), ("delete", "mcp:claude-code"), ("link", "mcp:claude-code"),
        ("edit", "mcp:claude-code"), ("add", "mcp:claude-code")]
    shown = json.loads(cli("show", added["id"], "--db", agent_file, "--json").stdout)["memory"]
    assert shown["importance"] == 9 and shown["access_count"] == 1
    listed = json.loads(cli("list", "--db", agent_file, "--json").stdout)["memories"]
    assert {m["id"] for m in listed} == {added["id"], "m-deploy", "m-tabs", "m-old", "m-gone"}


def test_read_only_server_answers_writes_with_read_only(agent_file: Path) -> None:
    async def scenario() -> None:
        async with mcp_session("--db", agent_file, "--read-only") as session:
            for tool in ("remember", "update", "undelete"):
                assert "read-only" in await refused(session, tool, {"content": "x", "id": "m-tabs", "ids": ["x"]})

    anyio.run(scenario)


def test_a_lone_surrogate_gets_an_error_result_and_the_server_keeps_answering(agent_file: Path) -> None:
    server = subprocess.Popen([sys.executable, "-m", "ora_desktop", "mcp", "--db", str(agent_file)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=server_env(), cwd=ROOT)

    def ask(line: str) -> dict:
        server.stdin.write(line.encode() + b"\n")
        server.stdin.flush()
        return json.loads(server.stdout.readline())

    try:
        ask(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}))
        server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        answer = ask('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remember",'
                     '"arguments":{"content":"x \\udcff"}}}')
        assert answer["id"] == 2 and answer["result"]["isError"]
        assert "content" in answer["result"]["content"][0]["text"]
        alive = ask(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                "params": {"name": "recall", "arguments": {"type": "fact"}}}))
        assert alive["id"] == 3 and not alive["result"].get("isError")
    finally:
        server.stdin.close()
        server.wait(timeout=60)
    conn = sqlite3.connect(agent_file)
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 4
    conn.close()


def test_logging_progress_subscriptions_and_completion(agent_file: Path) -> None:
    logs: list[str] = []
    updated: list[str] = []
    progress: list[tuple[float, float | None]] = []

    async def on_log(params) -> None:
        logs.append(str(params.data))

    async def on_message(message) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", "") == "notifications/resources/updated":
            updated.append(str(root.params.uri))

    async def on_progress(done: float, total: float | None, _message: str | None) -> None:
        progress.append((done, total))

    async def scenario() -> None:
        async with mcp_session("--db", agent_file, logging_callback=on_log, message_handler=on_message) as session:
            capabilities = session.server_capabilities
            assert capabilities.logging is not None and capabilities.completions is not None
            assert capabilities.resources.subscribe
            with warnings.catch_warnings():  # both are deprecated in the 2026-07-28 protocol, still served
                warnings.simplefilter("ignore")
                await session.set_logging_level("info")
                await session.subscribe_resource("ora://anwe-sh/ora/memory/m-tabs")
            await call(session, "update", id="m-tabs", importance=9)
            await call(session, "remember", content="Nobody subscribed to this one")
            # Another program (a person's CLI edit) changes the subscribed memory: heard too.
            edited = await anyio.to_thread.run_sync(lambda: cli("edit", "m-tabs", "--db", agent_file,
                                                                  "--content", "Tabs, width 4"))
            assert edited.returncode == 0, edited.stderr
            with anyio.fail_after(30):
                while len(updated) < 2:
                    await anyio.sleep(0.1)
            # The first search by meaning builds the vectors: the client hears how far it got.
            found = await session.call_tool("search", {"query": "indentation style", "mode": "semantic"},
                                            progress_callback=on_progress)
            assert not found.is_error and found.structured_content["mode"] == "semantic"
            ids = await session.complete(ResourceTemplateReference(uri="ora://anwe-sh/ora/memory/{memory_id}"),
                                         {"name": "memory_id", "value": "m-t"})
            assert ids.completion.values == ["m-tabs"]
            types = await session.complete(ResourceTemplateReference(uri="ora://anwe-sh/ora/recall/{type}"),
                                           {"name": "type", "value": "p"})
            assert types.completion.values == ["preference"]
            await call(session, "recall", type="fact")  # a round trip: notifications sent before it arrived

    anyio.run(scenario)
    assert updated == ["ora://anwe-sh/ora/memory/m-tabs"] * 2
    assert any("m-tabs: updated" in line for line in logs) and any("remembered" in line for line in logs)
    assert progress and progress[-1][0] == progress[-1][1]


def test_one_server_for_every_agent_of_a_site(agent_file: Path, seed_db: Callable[..., Path]) -> None:
    scout = seed_db([("s-1", "The scout watches the status page", "fact", 7)], agent="scout")

    async def scenario() -> None:
        async with mcp_session("--site", "anwe-sh", client="team") as session:
            tools = (await session.list_tools()).tools
            assert all("agent" in t.input_schema["properties"] for t in tools)
            message = await refused(session, "recall", {"type": "fact"})
            assert "agent" in message and "ora" in message and "scout" in message
            assert "'nobody'" in await refused(session, "recall", {"type": "fact", "agent": "nobody"})
            stored = await call(session, "remember", content="The scout reports at noon", agent="scout")
            new_id = stored.structured_content["memory"]["id"]
            ora_facts = await call(session, "recall", type="fact", agent="ora")
            assert new_id not in {m["id"] for m in ora_facts.structured_content["memories"]}
            scout_facts = await call(session, "recall", type="fact", agent="scout")
            assert {m["id"] for m in scout_facts.structured_content["memories"]} == {"s-1", new_id}
            read = await session.read_resource(f"ora://anwe-sh/scout/memory/{new_id}")
            assert json.loads(read.contents[0].text)["content"] == "The scout reports at noon"

    anyio.run(scenario)
    steps = json.loads(cli("undo", "--list", "--db", scout, "--json").stdout)
    assert [(s["label"].split()[0], s["by"]) for s in steps] == [("add", "mcp:team")]
    assert not json.loads(cli("undo", "--list", "--db", agent_file, "--json").stdout)
