"""The demo's AdmissionReviews (webhook/limitguard/demo/*.json) are answered exactly as README.md and
docs/webhooks.md show: each `$ curl ... --data @webhook/limitguard/demo/FILE https://localhost:8443/PATH`
in their console blocks is sent to `limitguard serve` on the demo, as `make run` starts it, and
the printed answer (wrapped lines joined) must be the server's."""

from __future__ import annotations

import argparse
import base64
import re
import ssl
from pathlib import Path

import aiohttp
import orjson

from limitguard.certs import generate as certs
from limitguard.cli.serve import add_arguments
from limitguard.cli.startup import start_serve
from tests.support import REPO

DEMO = REPO / "webhook" / "limitguard" / "demo"
PAGES = [REPO / "README.md", REPO / "docs" / "webhooks.md"]
COMMAND = re.compile(
    r"curl -s --cacert certs/ca\.crt -H 'Content-Type: application/json' "
    r"--data @(webhook/limitguard/demo/[\w.-]+\.json) https://localhost:8443(/\w+)( \| jq -r \.response\.patch \| base64 -d)?"
)


def shown_exchanges() -> list[tuple[str, str, bool, str]]:
    """(file, path, decode the patch, the answer shown) for each demo curl in the pages' console blocks."""
    found = []
    for page in PAGES:
        for block in re.findall(r"```console\n(.*?)```", page.read_text(), re.S):
            for command in re.split(r"^\$ ", block, flags=re.M)[1:]:
                typed, _, shown = command.partition("\n")
                while typed.endswith("\\"):  # continued lines
                    more, _, shown = shown.partition("\n")
                    typed = typed[:-1].rstrip() + " " + more.strip()
                match = COMMAND.fullmatch(typed)
                if "webhook/limitguard/demo/" in typed:
                    assert match, f"{page.name}: a demo command this test cannot run: {typed}"
                    found.append((match[1], match[2], bool(match[3]), shown))
    return found


def joined(text: str) -> str:
    """The docs wrap long answers at any character, continuing with one space: compare without."""
    return "".join(text.split())


async def test_the_demo_reviews_are_answered_as_the_docs_show(tmp_path: Path) -> None:
    exchanges = shown_exchanges()
    files = {file for file, *_ in exchanges}
    assert files == {
        f"webhook/limitguard/demo/{path.name}" for path in DEMO.glob("*.json")
    }  # every demo file shown
    cert_dir = tmp_path / "certs"
    certs.write(certs.generate(["localhost", "127.0.0.1"]), cert_dir)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(
        [
            *("--config", str(DEMO / "config.yaml"), "--cluster", str(DEMO / "cluster.yaml")),
            *("--cert-dir", str(cert_dir), "--host", "127.0.0.1", "--port", "0"),
        ]
    )
    running = await start_serve(args, {})
    try:
        context = ssl.create_default_context(cafile=str(cert_dir / certs.CA_CERT))
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as session:
            for file, path, decode, shown in exchanges:
                async with session.post(
                    f"https://localhost:{running.port}{path}",
                    data=(REPO / file).read_bytes(),
                    headers={"Content-Type": "application/json"},
                ) as response:
                    answer = await response.text()
                if decode:
                    answer = base64.b64decode(orjson.loads(answer)["response"]["patch"]).decode()
                assert joined(shown) == joined(answer), (file, path)
    finally:
        await running.stop()
