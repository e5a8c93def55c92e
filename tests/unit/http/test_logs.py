"""log_event: per-request lines queued and written together (after a delay, or once enough are
queued), in order, never lost; `wanted`: sampled as controller-runtime's production logger does."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import random
import sys
from collections.abc import Iterator

import orjson
import pytest
from prometheus_client import generate_latest

from limitguard.http import app, logs
from limitguard.testing.clock import Timers


@pytest.fixture
def timers() -> Timers:
    return Timers()


@pytest.fixture
def stderr(monkeypatch: pytest.MonkeyPatch, timers: Timers) -> Iterator[io.StringIO]:
    """limitguard's logging configured onto a captured stderr, its writes timed by *timers*; the
    root logger restored after."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    captured = io.StringIO()
    monkeypatch.setattr(sys, "stderr", captured)
    monkeypatch.setattr(logs, "_sampler", logs._sampler)  # restored after, whatever the test configures
    logs.configure("info", timers.call_later)
    yield captured
    root.handlers[:] = handlers
    root.setLevel(level)
    monkeypatch.setattr(logs, "_installed", None)


@contextlib.contextmanager
def alone() -> Iterator[None]:
    """As in the server: limitguard's handler is the only one. pytest adds its own to the root
    logger when the test body starts, so this is entered in the body, not in a fixture."""
    root = logging.getLogger()
    during_test = root.handlers[:]
    root.handlers[:] = [logs._installed]
    try:
        yield
    finally:
        root.handlers[:] = during_test


def lines(captured: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in captured.getvalue().splitlines()]


def test_queued_lines_keep_their_order_with_records_written_at_once(stderr) -> None:
    log = logging.getLogger("limitguard.http.app")

    async def answer_two() -> list[dict]:
        logs.log_event(log, logging.INFO, "admission", {"uid": "a", "allowed": False})
        logs.log_event(log, logging.INFO, "admission", {"uid": "b", "allowed": True})
        logs.log_event(log, logging.DEBUG, "admission", {"uid": "hidden"})  # below the level
        written_in_turn = lines(stderr)
        log.warning("something else", extra={"uid": "c"})  # a stdlib record: queued lines first
        await asyncio.sleep(0)
        return written_in_turn

    with alone():
        written_in_turn = asyncio.run(answer_two())
    assert written_in_turn == []  # nothing written until the record
    written = lines(stderr)
    assert [(line["uid"], line["msg"], line["level"]) for line in written] == [
        ("a", "admission", "info"),
        ("b", "admission", "info"),
        ("c", "something else", "warning"),
    ]
    assert written[0]["logger"] == "limitguard.http.app" and written[0]["allowed"] is False
    assert written[0]["ts"].endswith("Z") and written[0]["ts"] <= written[2]["ts"]


def test_queued_lines_wait_for_one_timed_write(stderr, timers) -> None:
    log = logging.getLogger("limitguard.http.app")

    async def log_three() -> list[list[str]]:
        seen = []
        logs.log_event(log, logging.INFO, "admission", {"uid": "a"})
        logs.log_event(log, logging.INFO, "admission", {"uid": "b"})
        for _ in range(3):
            await asyncio.sleep(0)  # loop turns pass: the lines wait for their timer
        seen.append([line["uid"] for line in lines(stderr)])
        assert timers.fire() == 1  # one write for both lines
        seen.append([line["uid"] for line in lines(stderr)])
        logs.log_event(log, logging.INFO, "admission", {"uid": "c"})  # a new write is scheduled
        assert timers.fire() == 1
        seen.append([line["uid"] for line in lines(stderr)])
        return seen

    with alone():
        seen = asyncio.run(log_three())
    assert seen == [[], ["a", "b"], ["a", "b", "c"]]
    assert timers.delays == [logs.WRITE_AFTER_SECONDS] * 2


def test_a_full_queue_is_written_without_waiting(stderr, timers) -> None:
    """Memory stays bounded under a flood of lines: WRITE_FROM_BYTES queued are written at once."""
    log = logging.getLogger("limitguard.http.app")
    field = "x" * 10_000
    count = logs.WRITE_FROM_BYTES // len(field) + 5  # more than the bound holds

    async def flood() -> list[int]:
        written = []
        for n in range(count):
            logs.log_event(log, logging.INFO, "admission", {"n": n, "object": field})
            written.append(len(lines(stderr)))
        return written

    with alone():
        written = asyncio.run(flood())
    line_bytes = len(stderr.getvalue().splitlines()[0]) + 1
    first = next(index for index, seen in enumerate(written) if seen)  # the line that filled the queue
    assert first * line_bytes < logs.WRITE_FROM_BYTES <= (first + 1) * line_bytes
    assert written == [0] * first + [first + 1] * (count - first)  # the rest wait for the timer
    assert len(timers.delays) == 1 and timers.fire() == 1
    assert [line["n"] for line in lines(stderr)] == list(range(count))


def test_a_write_scheduled_on_a_closed_loop_does_not_strand_later_lines(stderr, timers) -> None:
    """A loop closed with the write still pending never runs it; the next loop schedules its own."""
    log = logging.getLogger("limitguard.http.app")

    async def log_one(uid: str) -> None:
        logs.log_event(log, logging.INFO, "admission", {"uid": uid})

    with alone():
        asyncio.run(log_one("first"))  # its loop closes with the write pending
        stranded = timers.pending[:]
        asyncio.run(log_one("second"))
    assert len(timers.delays) == 2  # a write scheduled on each loop
    assert lines(stderr) == []
    timers.pending = timers.pending[len(stranded) :]  # as the closed loop would: never run its timer
    assert timers.fire() == 1
    assert [line["uid"] for line in lines(stderr)] == ["first", "second"]


def test_a_line_outside_an_event_loop_is_written_at_once_and_shutdown_loses_nothing(stderr) -> None:
    log = logging.getLogger("limitguard.cli")

    loop = asyncio.new_event_loop()

    def queue_and_stop() -> None:
        logs.log_event(log, logging.WARNING, "queued", {"n": 2})
        loop.stop()  # the write it scheduled is a new callback: stop() does not run it

    with alone():
        logs.log_event(log, logging.WARNING, "no loop", {"n": 1})
        assert [line["n"] for line in lines(stderr)] == [1]
        loop.call_soon(queue_and_stop)
        loop.run_forever()
        loop.close()
        assert [line["n"] for line in lines(stderr)] == [1]
        logging.getLogger().handlers[0].flush()  # what logging.shutdown() does at exit
    assert [line["n"] for line in lines(stderr)] == [1, 2]


def test_any_other_handler_gets_ordinary_records(stderr, caplog) -> None:
    log = logging.getLogger("limitguard.http.app")
    with caplog.at_level(logging.INFO):
        logs.log_event(log, logging.INFO, "admission", {"uid": "x", "reason": "no-room"})
    assert [(record.getMessage(), record.uid, record.reason) for record in caplog.records] == [
        ("admission", "x", "no-room")
    ]
    assert [line["uid"] for line in lines(stderr)] == ["x"]  # through the handler, formatted alike


def test_a_queued_line_is_the_line_the_formatter_would_write(stderr) -> None:
    """The queue path splices a cached head onto the encoded fields; the result must be the same
    JSON object, key order included, as the merged-dict form: for plain fields, fields that
    override a leading key, no fields, and values JSON cannot hold (written with str)."""
    log = logging.getLogger("limitguard.http.app")

    class Opaque:
        def __str__(self) -> str:
            return "opaque"

    cases = [
        {"webhook": "validate", "allowed": False, "ms": 0.25},
        {"msg": "overridden", "uid": "u"},
        {},
        {"object": Opaque()},
    ]
    with alone():
        for fields in cases:
            logs.log_event(log, logging.INFO, "admission", fields)
    raw = stderr.getvalue().splitlines()
    assert [list(json.loads(line)) for line in raw] == [
        ["ts", "level", "logger", "msg", "webhook", "allowed", "ms"],
        ["ts", "level", "logger", "msg", "uid"],
        ["ts", "level", "logger", "msg"],
        ["ts", "level", "logger", "msg", "object"],
    ]
    for line, fields in zip(raw, cases, strict=True):
        ts = json.loads(line)["ts"]
        expected = logs._line(ts, "info", "limitguard.http.app", "admission", fields)
        assert line.encode() == expected


def test_timestamps_carry_the_milliseconds_of_the_event() -> None:
    clock = logs._Clock()
    assert clock.timestamp(0.0) == "1970-01-01T00:00:00.000Z"
    assert clock.timestamp(1763883343.0469) == "2025-11-23T07:35:43.046Z"
    assert clock.timestamp(1763883343.9999) == "2025-11-23T07:35:43.999Z"
    assert clock.timestamp(1763883344.5) == "2025-11-23T07:35:44.500Z"


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_lines_go_to_a_utf8_streams_bytes_after_the_text_written_before(monkeypatch, encoding) -> None:
    """On a UTF-8 stream the queued bytes are written under the text layer, once that layer has
    written what it holds (text without a newline stays there until then); any other encoding
    gets text, so the stream's own error handling applies."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding=encoding, errors="backslashreplace", line_buffering=True)
    monkeypatch.setattr(sys, "stderr", stream)
    logs.configure("info")
    log = logging.getLogger("limitguard.http.app")
    try:
        stream.write("before, no newline yet;")  # held by the text layer

        async def log_two() -> None:
            logs.log_event(log, logging.INFO, "admission", {"uid": "a", "object": "default/caf\u00e9"})
            logs.log_event(log, logging.INFO, "admission", {"uid": "b"})
            await asyncio.sleep(0)

        with alone():
            asyncio.run(log_two())
            logs._installed.flush()
        written = raw.getvalue()
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        monkeypatch.setattr(logs, "_installed", None)
    first, second, rest = written.split(b"\n")
    assert first.startswith(b'before, no newline yet;{"ts":"') and rest == b""
    assert json.loads(second)["uid"] == "b"
    if encoding == "utf-8":
        line = json.loads(first.removeprefix(b"before, no newline yet;"))
        assert (line["uid"], line["object"]) == ("a", "default/caf\u00e9")
    else:
        assert b'"uid":"a","object":"default/caf\\xe9"' in first  # the text layer's backslashreplace


def test_a_lines_milliseconds_are_rounded_to_the_microsecond() -> None:
    """The admission line's `ms`: the number round(ms, 3) gives, over durations from a microsecond
    to a minute (a truncating or coarser spelling fails); an exact half microsecond may go
    either way."""
    rng = random.Random(38)
    for seconds in [rng.random() * 10.0**exponent for exponent in range(-6, 2) for _ in range(2000)]:
        assert app._milliseconds(seconds) == round(seconds * 1000, 3), seconds
    assert app._milliseconds(0.0000005) in (0.0, 0.001)
    assert app._milliseconds(0.0) == 0.0 and app._milliseconds(1.0) == 1000.0


class Seconds:
    """A monotonic clock the test sets."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def admitted(
    sampler: logs.Sampler, count: int, level: int = logging.INFO, msg: str = "admission"
) -> list[int]:
    """Which of *count* lines (numbered from 1) the sampler lets through."""
    return [number for number in range(1, count + 1) if sampler.admits(level, msg)]


def test_each_second_the_first_lines_pass_then_every_nth() -> None:
    clock = Seconds()
    sampler = logs.Sampler(3, 4, clock)
    assert admitted(sampler, 16) == [1, 2, 3, 7, 11, 15]
    clock.now += 0.5  # the same second
    assert admitted(sampler, 4) == [3]  # lines 17-20: the 19th passes
    clock.now += 0.5  # a new second counts again
    assert admitted(sampler, 5) == [1, 2, 3]


def test_each_level_and_message_is_sampled_on_its_own() -> None:
    sampler = logs.Sampler(1, 0, Seconds())
    assert admitted(sampler, 3) == [1]  # thereafter 0: nothing past the first
    assert admitted(sampler, 2, msg="extender") == [1]
    assert admitted(sampler, 2, level=logging.DEBUG) == [1]


def test_initial_zero_passes_every_line() -> None:
    assert admitted(logs.Sampler(0, 100, Seconds()), 500) == list(range(1, 501))


def test_the_answers_lines_are_sampled_and_every_answer_counted(stderr, monkeypatch) -> None:
    """Through the admission endpoint's observer: 250 warned answers in one second write the first
    100 and every 100th after (the 200th), and all 250 are counted."""
    from limitguard.admission.review import decode_review
    from limitguard.core.response import warned
    from limitguard.http.metrics import Metrics
    from limitguard.state.store import ClusterState
    from tests.support import pod, pod_create

    monkeypatch.setattr(sys, "stderr", stderr)  # pytest swapped its own in for the test body
    logs.configure("info", sampler=logs.Sampler(logs.SAMPLE_INITIAL, logs.SAMPLE_THEREAFTER, Seconds()))
    state, config = ClusterState(), app.Config()
    metrics = Metrics(state, config)
    answer = warned("no-room", "pod default/p fits no eligible node", "limitguard: no room")
    services = app.Services(state, config, {"validate": lambda review: answer}, metrics)
    endpoint = app.admission_endpoint("validate", services.handlers["validate"], services)
    review = decode_review(orjson.dumps(pod_create(pod("p", cpu="1"))))
    with alone():
        for _ in range(250):
            endpoint.observe(review, answer, 0.001)
        logging.getLogger().handlers[0].flush()
    assert len(lines(stderr)) == 101
    exposed = generate_latest(metrics.registry).decode().splitlines()
    assert (
        'limitguard_decisions_total{decision="allowed",reason="no-room",webhook="validate"} 250.0' in exposed
    )
