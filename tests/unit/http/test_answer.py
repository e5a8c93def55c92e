"""Which answer a request gets (the fast mode's, limitguard.http.fast); tests/integration/http/test_answer.py reads both
off the wire, with a client asking to close (which the mocked request does not parse)."""

from __future__ import annotations

import pytest
from aiohttp import web
from aiohttp.http import HttpVersion10, HttpVersion11
from aiohttp.test_utils import make_mocked_request

from limitguard.http.fast import JsonAnswer, json_answer


@pytest.mark.parametrize(
    ("version", "headers", "kind"),
    [
        (HttpVersion11, {}, JsonAnswer),
        (HttpVersion10, {}, web.Response),
        (HttpVersion10, {"Connection": "keep-alive"}, web.Response),
    ],
)
def test_only_http_1_1_keep_alive_is_written_in_one_piece(version, headers, kind) -> None:
    request = make_mocked_request("POST", "/validate", headers=headers, version=version)
    answer = json_answer(request, b'{"ok":true}')
    assert type(answer) is kind
    assert answer.status == 200
