"""Real payloads from other projects against a real `limitguard serve`: `make wild`.

Reads `../shared/fixtures/wild/` beside the repository (or `--dir`): AdmissionReviews that other
webhooks' test suites captured from kube-apiservers (`reviews/`) and kube-scheduler extender bodies
(`extender/`). Nothing of it is copied into the repository, so this is not part of `make test`; it
checks the build against input nobody here wrote. Every review goes to `/validate` and `/mutate`,
every extender body to `/extender/filter` and `/extender/prioritize`, over TLS, on the demo cluster.

An answer passes when it is well-formed for its protocol: an AdmissionReview echoing the request's
uid with a boolean `allowed` (and, when patched, a base64 JSON Patch), or an extender result of the
right shape; a 4xx with a message is a clear refusal of bad input. A 5xx, a malformed answer, a
dropped connection or an error-level log line fails the run (exit 1).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from bench.harness import REPO, serve_command, start, stop
from limitguard.certs import generate as certs
from limitguard.testing.server import client_context

DEFAULT_DIR = REPO.parent / "shared" / "fixtures" / "wild"
DEMO = REPO / "webhook" / "limitguard" / "demo"
ADMISSION_ROUTES = ("/validate", "/mutate")
EXTENDER_ROUTES = ("/extender/filter", "/extender/prioritize")


@dataclass
class Outcome:
    file: str
    route: str
    verdict: str  # allowed, denied, patched, refused (4xx), answered (extender) or FAIL
    detail: str


def _admission_problem(sent: dict[str, Any], answer: Any) -> str | None:
    """Why *answer* is not a well-formed AdmissionReview response to *sent* (None when it is)."""
    response = answer.get("response") if isinstance(answer, dict) else None
    if not isinstance(response, dict) or not isinstance(response.get("allowed"), bool):
        return "no response.allowed"
    request = sent.get("request") if isinstance(sent.get("request"), dict) else {}
    if "uid" in request and response.get("uid") != request["uid"]:
        return f"uid {response.get('uid')!r} does not echo {request['uid']!r}"
    if "patch" in response:
        try:
            patch = json.loads(base64.b64decode(response["patch"], validate=True))
        except ValueError as error:
            return f"patch is not base64 JSON: {error}"
        if response.get("patchType") != "JSONPatch" or not isinstance(patch, list):
            return "patch is not a JSONPatch list"
    return None


def _extender_problem(route: str, answer: Any) -> str | None:
    """kube-scheduler's extender/v1 JSON tags (`host`, `score`, `nodenames`, `failedNodes`, ...)."""
    if route.endswith("/prioritize"):
        ok = isinstance(answer, list) and all(
            isinstance(h, dict) and {"host", "score"} <= h.keys() for h in answer
        )
        return None if ok else "not a HostPriorityList"
    ok = isinstance(answer, dict) and {"nodenames", "nodes", "failedNodes", "error"} & answer.keys()
    return None if ok else "not an ExtenderFilterResult"


def _classify(file: str, route: str, sent: dict[str, Any], status: int, body: bytes) -> Outcome:
    text = body.decode(errors="replace")
    if 400 <= status < 500:
        return Outcome(file, route, "refused", f"{status}: {text[:100]}")
    if status != 200:
        return Outcome(file, route, "FAIL", f"HTTP {status}: {text[:100]}")
    try:
        answer = json.loads(body)
    except ValueError:
        return Outcome(file, route, "FAIL", f"not JSON: {text[:100]}")
    if route in EXTENDER_ROUTES:
        problem = _extender_problem(route, answer)
        return Outcome(file, route, "FAIL" if problem else "answered", problem or text[:100])
    problem = _admission_problem(sent, answer)
    if problem:
        return Outcome(file, route, "FAIL", problem)
    response = answer["response"]
    verdict = "patched" if "patch" in response else "allowed" if response["allowed"] else "denied"
    message = (response.get("status") or {}).get("message") or "; ".join(response.get("warnings") or [])
    return Outcome(file, route, verdict, message[:100])


async def _post_all(base: str, context: Any, payloads: list[tuple[str, str, bytes]]) -> list[Outcome]:
    outcomes = []
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as session:
        for file, route, body in payloads:
            try:
                sent = json.loads(body)
            except ValueError:
                sent = {}
            try:
                async with session.post(base + route, data=body, headers=headers) as response:
                    raw = await response.read()
                    outcomes.append(
                        _classify(file, route, sent if isinstance(sent, dict) else {}, response.status, raw)
                    )
            except aiohttp.ClientError as error:
                outcomes.append(Outcome(file, route, "FAIL", f"connection: {error}"))
    return outcomes


def _payloads(wild: Path) -> list[tuple[str, str, bytes]]:
    payloads = []
    for folder, routes in (("reviews", ADMISSION_ROUTES), ("extender", EXTENDER_ROUTES)):
        for path in sorted((wild / folder).glob("*.json")):
            payloads += [(f"{folder}/{path.name}", route, path.read_bytes()) for route in routes]
    return payloads


def _error_lines(log: Path) -> list[str]:
    lines = []
    for line in log.read_text(errors="replace").splitlines():
        try:
            level = json.loads(line).get("level", "")
        except ValueError:
            level = "error" if "Traceback" in line else ""
        if str(level).lower() in ("error", "critical"):
            lines.append(line[:300])
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.wild", description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=f"default: {DEFAULT_DIR}")
    parser.add_argument("--port", type=int, default=18643)
    parser.add_argument("--all", action="store_true", help="print every outcome, not only the summary")
    args = parser.parse_args(argv)
    if not (args.dir / "reviews").is_dir():
        print(f"wild: {args.dir} is not here, nothing to check")
        return 0
    payloads = _payloads(args.dir)
    with tempfile.TemporaryDirectory() as work:
        cert_dir, log = Path(work) / "certs", Path(work) / "serve.log"
        options = ("--config", str(DEMO / "config.yaml"), "--cluster", str(DEMO / "cluster.yaml"))
        command = [*serve_command(*options, "--cert-dir", str(cert_dir), port=args.port)]
        command[command.index("--log-level") + 1] = "info"
        certs.write(certs.generate(["localhost", "127.0.0.1"]), cert_dir)
        context = client_context(cert_dir)
        with log.open("wb") as log_file:
            process = start(command, f"https://localhost:{args.port}/readyz", context, log_file=log_file)
            try:
                outcomes = asyncio.run(_post_all(f"https://localhost:{args.port}", context, payloads))
            finally:
                stop(process)
        errors = _error_lines(log)
    for outcome in outcomes:
        if args.all or outcome.verdict == "FAIL":
            print(f"{outcome.verdict:9} {outcome.route:21} {outcome.file}: {outcome.detail}")
    tally = Counter((o.route, o.verdict) for o in outcomes)
    print(f"wild: {len(payloads)} requests from {args.dir}")
    for route in (*ADMISSION_ROUTES, *EXTENDER_ROUTES):
        counts = ", ".join(f"{verdict} {n}" for (r, verdict), n in sorted(tally.items()) if r == route)
        print(f"  {route:21} {counts}")
    for line in errors:
        print(f"  server error log: {line}")
    failed = sum(o.verdict == "FAIL" for o in outcomes) + len(errors)
    print("wild: PASS" if not failed else f"wild: FAIL ({failed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
