"""The serving ceiling for `bench.quote --wrk`: a bare ASGI app under the same uvicorn
(uvloop, httptools, no access log) that reads each request's body and answers the bytes the
service answered for it, looked up by the request body.

Run by the bench: `python -m bench.bare_app --port P --answers FILE`, FILE a JSON list of
`[request body, answer body]` string pairs; the first answer is the default.
"""

from __future__ import annotations

import argparse
import json
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--answers", required=True)
    args = parser.parse_args()
    with open(args.answers) as source:
        pairs = [(body.encode(), answer.encode()) for body, answer in json.load(source)]
    app = bare_app(dict(pairs), pairs[0][1])
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=args.port,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
        lifespan="off",
    )


if __name__ == "__main__":
    main()
