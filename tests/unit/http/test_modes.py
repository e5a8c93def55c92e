"""The HTTP modes (limitguard.http.modes): the start-up check, and what each mode makes of the app."""

from __future__ import annotations

import logging

import pytest
from aiohttp import web
from aiohttp.http import HttpVersion11
from aiohttp.test_utils import make_mocked_request

from limitguard.http import fast
from limitguard.http.app import create_app
from limitguard.http.fast import JsonAnswer, direct_posts
from limitguard.http.modes import FAST, HTTP_MODES, PLAIN, choose_http_mode, http_mode_of
from limitguard.state.store import ClusterState
from limitguard.testing.server import app_services

TESTED = fast.TESTED_AIOHTTP[0]


def test_the_fast_mode_runs_only_on_an_aiohttp_it_was_tested_with(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="limitguard.http.modes")
    assert choose_http_mode("fast", TESTED) is FAST
    assert [record.levelno for record in caplog.records] == [logging.INFO]
    caplog.clear()
    assert choose_http_mode("fast", "3.99.0") is PLAIN
    (warning,) = caplog.records
    assert warning.levelno == logging.WARNING
    assert "aiohttp 3.99.0" in warning.getMessage() and "plain mode" in warning.getMessage()
    assert warning.tested == list(fast.TESTED_AIOHTTP)  # type: ignore[attr-defined]


def test_the_plain_mode_is_served_whatever_the_aiohttp() -> None:
    assert choose_http_mode("plain", TESTED) is PLAIN
    assert choose_http_mode("plain", "3.99.0") is PLAIN
    assert set(HTTP_MODES) == {"fast", "plain"}


def test_each_app_carries_its_mode_and_only_the_fast_one_answers_posts_directly() -> None:
    fast_app = create_app(app_services(ClusterState(), http_mode=FAST))
    plain_app = create_app(app_services(ClusterState(), http_mode=PLAIN))
    assert http_mode_of(fast_app) is FAST and http_mode_of(plain_app) is PLAIN
    assert {"/validate", "/mutate", "/extender/filter"} <= set(direct_posts(fast_app))
    assert not fast_app.on_response_prepare
    # the plain mode's prepare signal tells each connection its request was answered; an app with
    # one is served through its own dispatch, never past it
    assert len(plain_app.on_response_prepare) == 1
    assert direct_posts(plain_app) == {}


def test_an_app_given_no_mode_is_refused_a_listener() -> None:
    with pytest.raises(KeyError):
        http_mode_of(web.Application())


def test_the_plain_mode_answers_with_aiohttps_response_where_the_fast_one_writes_its_own() -> None:
    request = make_mocked_request("POST", "/validate", version=HttpVersion11)
    assert type(FAST.json_answer(request, b"{}")) is JsonAnswer
    answer = PLAIN.json_answer(request, b'{"ok":true}')
    assert type(answer) is web.Response
    assert (answer.status, answer.content_type, answer.body) == (200, "application/json", b'{"ok":true}')
