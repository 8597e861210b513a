"""A scripted local HTTP server for the client's tests: each request gets the next reply (the last one
repeats): a status with headers and body, "destroy" (drop the connection unanswered) or "hang"."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Union

Reply = Union[Dict[str, Any], str]


class Stub:
    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.seen: List[Dict[str, Any]] = []
        self.release = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length).decode("utf-8") if length else ""
                stub.seen.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body,
                        "at": time.monotonic(),
                    }
                )
                reply = stub.replies[min(len(stub.seen), len(stub.replies)) - 1]
                if reply == "destroy":
                    self.close_connection = True
                    self.connection.close()
                    return
                if reply == "hang":
                    stub.release.wait(30)
                    self.close_connection = True
                    return
                assert isinstance(reply, dict)
                payload = reply.get("body")
                data = b""
                headers = dict(reply.get("headers") or {})
                if isinstance(payload, (dict, list)):
                    data = json.dumps(payload).encode("utf-8")
                    headers.setdefault("Content-Type", "application/json; charset=utf-8")
                elif isinstance(payload, str):
                    data = payload.encode("utf-8")
                self.send_response(reply["status"])
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def json_body(self, i: int) -> Any:
        body = self.seen[i]["body"]
        return json.loads(body) if body else None
