"""The floor: a bare aiohttp + orjson handler that answers allowed, on the same TLS certificate as
limitguard. It runs none of limitguard's code per request: orjson decodes the review, the answer
echoes its apiVersion and uid, orjson encodes it. Whatever limitguard costs above this is the cost
of its own decoding, policy, state and metrics work (docs/benchmarks.md says since when: the floor
used to decode with limitguard's `decode_review`). The issue's floor runs on asyncio's own event
loop (the default here); `--event-loop uvloop` puts the floor on the loop `limitguard serve` picks
by default, so the policy's own share can be read apart from what the loop gives both. The
extender routes decode the same ExtenderArgs body with orjson and answer without scoring or
filtering. With `--prioritize-answer-for FILE`, `/extender-prebuilt/prioritize` reads the body,
decodes nothing and sends the HostPriorityList of every candidate of FILE's first ExtenderArgs,
built at start: what sending the protocol's answer costs, with no work at all. `--client-ca-file`
asks clients for a certificate as `limitguard serve` does with it (bench/check.py puts both behind
a proxy that presents one).
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from pathlib import Path

import orjson
from aiohttp import web

from limitguard.certs import generate as certs
from limitguard.http.eventloop import EVENT_LOOPS, loop_factory
from limitguard.http.tls import server_context


async def answer(request: web.Request) -> web.Response:
    review = orjson.loads(await request.read())
    response = {"uid": review["request"]["uid"], "allowed": True}
    body = orjson.dumps({"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": response})
    return web.Response(body=body, content_type="application/json")


async def extender(request: web.Request) -> web.Response:
    """Decode the ExtenderArgs; answer an empty result (the floor the issue asks for)."""
    orjson.loads(await request.read())
    body = b"[]" if request.path.endswith("prioritize") else b'{"NodeNames": [], "FailedNodes": {}}'
    return web.Response(body=body, content_type="application/json")


def _candidates(extender_args: bytes) -> list[str]:
    return orjson.loads(extender_args).get("NodeNames") or []


def _zero_scores(names: list[str]) -> bytes:
    """The HostPriorityList of *names*, every score 0."""
    return orjson.dumps([{"host": name, "score": 0} for name in names])


async def extender_answer(request: web.Request) -> web.Response:
    """Decode the ExtenderArgs and answer every candidate (score 0, all pass): the protocol's own
    cost, since an answer naming 5,000 hosts is 100 KB to encode, encrypt and parse."""
    names = _candidates(await request.read())
    if request.path.endswith("prioritize"):
        body = _zero_scores(names)
    else:
        body = orjson.dumps(
            {"NodeNames": names, "FailedNodes": {}, "FailedAndUnresolvableNodes": {}, "Error": ""}
        )
    return web.Response(body=body, content_type="application/json")


def prebuilt(answer: bytes) -> Callable[[web.Request], Awaitable[web.Response]]:
    """A handler that reads the body and sends *answer*, whatever the body says."""

    async def send(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=answer, content_type="application/json")

    return send


def priority_list(extender_args_file: Path) -> bytes:
    """The HostPriorityList of every candidate of the file's first ExtenderArgs, every score 0: one
    digit, as every score of 0-10 but 10 is, so it is as long as limitguard's answer."""
    with extender_args_file.open("rb") as lines:
        return _zero_scores(_candidates(lines.readline()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert-dir", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--event-loop", default="asyncio", choices=EVENT_LOOPS)
    parser.add_argument("--client-ca-file", help="ask clients for a certificate from this CA, as serve does")
    parser.add_argument(
        "--prioritize-answer-for",
        type=Path,
        help="serve /extender-prebuilt/prioritize with the answer to this file's first ExtenderArgs",
    )
    args = parser.parse_args()
    app = web.Application()
    for path in ("/validate", "/mutate"):
        app.router.add_post(path, answer)
    for verb in ("filter", "prioritize"):
        app.router.add_post(f"/extender/{verb}", extender)
        app.router.add_post(f"/extender-answer/{verb}", extender_answer)
    if args.prioritize_answer_for:
        app.router.add_post(
            "/extender-prebuilt/prioritize", prebuilt(priority_list(args.prioritize_answer_for))
        )
    app.router.add_get("/readyz", lambda request: web.Response(text="ok"))
    cert_dir = Path(args.cert_dir)
    client_cas = [Path(args.client_ca_file)] if args.client_ca_file else []
    context = server_context(cert_dir / certs.TLS_CERT, cert_dir / certs.TLS_KEY, client_cas)
    _, new_loop = loop_factory(args.event_loop)
    web.run_app(
        app,
        host="127.0.0.1",
        port=args.port,
        ssl_context=context,
        access_log=None,
        print=None,
        loop=new_loop(),
    )


if __name__ == "__main__":
    main()
