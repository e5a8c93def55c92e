"""bench.floor_server's pre-built prioritize answer: the bytes limitguard would send, for no work.

`make bench-check` reads limitguard's prioritize figures next to this floor's, so its answer must
be the protocol's answer to the same candidates, as long as limitguard's, whatever the body says.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from aiohttp import web

from bench.floor_server import prebuilt, priority_list
from limitguard.extender.protocol import encode_priority_columns

NAMES = ["node-00000", "node-00001", 'odd "name"', "node-03"]


def test_the_answer_is_limitguards_for_the_first_args_with_every_score_zero(tmp_path: Path) -> None:
    args = tmp_path / "extender.jsonl"
    first = {"Pod": {"metadata": {"name": "p"}}, "Nodes": None, "NodeNames": NAMES}
    args.write_bytes(orjson.dumps(first) + b"\n" + orjson.dumps({**first, "NodeNames": ["other"]}) + b"\n")

    answer = priority_list(args)

    assert answer == encode_priority_columns(NAMES, [0] * len(NAMES))
    # one digit a score, as limitguard's scores of 0-9 are: the same length as its answer
    assert len(answer) == len(encode_priority_columns(NAMES, [7, 3, 9, 5]))


async def test_the_handler_reads_the_body_and_decodes_none_of_it(aiohttp_client) -> None:
    app = web.Application()
    app.router.add_post("/extender-prebuilt/prioritize", prebuilt(b'[{"host":"a","score":0}]'))
    client = await aiohttp_client(app)

    for body in (b"not json at all", orjson.dumps({"NodeNames": NAMES})):
        answer = await client.post("/extender-prebuilt/prioritize", data=body)
        assert answer.status == 200
        assert answer.content_type == "application/json"
        assert await answer.read() == b'[{"host":"a","score":0}]'
