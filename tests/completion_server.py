"""A local ``/v1/completions`` endpoint for the HTTP backend's tests: a real ``http.server`` in a thread, speaking
the OpenAI completions JSON over real sockets.  It records every request body and its headers; what it answers is
the ``respond(path, body) -> (status, json object)`` it is given, so each test writes only its 'model'."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Respond = Callable[[str, dict], "tuple[int, dict[str, Any]]"]


def prompts_of(body: dict) -> list[str]:
    """A request's prompts: the API takes one string or a list."""
    return body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]


class CompletionServer:
    def __init__(self, respond: Respond) -> None:
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.bodies.append(body)
                outer.headers.append(dict(self.headers))
                status, obj = respond(self.path, body)
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "CompletionServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
