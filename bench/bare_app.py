"""The serving ceiling for `bench.quote --wrk`: a bare ASGI app under the same uvicorn
(uvloop, httptools, no access log) that reads each request's body and answers the bytes the
service answered for it, looked up by the request body.

Run by the bench: `python -m bench.bare_app --port P --answers FILE [--processes N]`, FILE a
JSON list of `[request body, answer body]` string pairs; the first answer is the default. With
N processes each binds the port with SO_REUSEPORT and the kernel spreads connections over them,
as `--api-processes N` spreads them over the service's: the ceiling of N Python processes.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import signal
import socket
import sys
from typing import Any

import uvicorn


def bare_app(answers: dict[bytes, bytes], default: bytes) -> Any:
    headers = [(b"content-type", b"application/json")]

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        answer = answers.get(body, default)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [*headers, (b"content-length", str(len(answer)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": answer})

    return app


def _serve(port: int, pairs: list[tuple[bytes, bytes]]) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", port))
    config = uvicorn.Config(
        bare_app(dict(pairs), pairs[0][1]),
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
        lifespan="off",
    )
    uvicorn.Server(config).run(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--answers", required=True)
    parser.add_argument("--processes", type=int, default=1)
    args = parser.parse_args()
    with open(args.answers) as source:
        pairs = [(body.encode(), answer.encode()) for body, answer in json.load(source)]
    others = [
        multiprocessing.Process(target=_serve, args=(args.port, pairs), daemon=True)
        for _ in range(args.processes - 1)
    ]
    for other in others:
        other.start()
    # uvicorn raises the SIGTERM it caught again once it has stopped: as SystemExit here, so
    # that the other processes are stopped too rather than left serving.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        _serve(args.port, pairs)
    finally:
        for other in others:
            other.terminate()
            other.join(10)


if __name__ == "__main__":
    main()
