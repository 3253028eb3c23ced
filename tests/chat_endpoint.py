"""A small OpenAI-compatible chat endpoint for tests: ``POST /v1/chat/completions`` answered by
``answer`` (a summary text), with HTTP 500, or after a delay longer than the client's timeout."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class ChatEndpoint:
    """What the server answers (``mode``: "ok", "500", "slow") and the requests it was sent."""

    url: str = ""
    mode: str = "ok"
    answer: str = "Tax is computed by computeTax in src/tax/compute.ts from the region rates."
    delay: float = 3.0
    requests: list[dict] = field(default_factory=list)
    headers: list[dict] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)

    def config(self, path: Path, timeout: float = 5, **extra: str) -> Path:
        """Write a ``config.toml`` at ``path`` whose ``[summarizer]`` points here."""
        lines = ["[summarizer]", f'url = "{self.url}"', 'model = "tiny-test"', f"timeout = {timeout}"]
        lines += [f'{key} = "{value}"' for key, value in extra.items()]
        path.write_text("\n".join(lines) + "\n")
        return path


@contextmanager
def chat_endpoint() -> Iterator[ChatEndpoint]:
    """A running endpoint on a free local port (stopped on exit)."""
    state = ChatEndpoint()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            state.headers.append(dict(self.headers))
            if self.path != "/v1/chat/completions" or state.mode == "500":
                self.send_error(500, "model crashed")
                return
            if state.mode == "slow":
                state.released.wait(state.delay)
            reply = json.dumps({"id": "x", "object": "chat.completion", "model": body.get("model"),
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": state.answer}}]}).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)
            except OSError:  # the client gave up waiting
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.released.set()
        server.shutdown()
        server.server_close()
