"""Structured JSON logs: one object per line, the fields an operator filters on.

Per-request lines (denials, warnings) are sampled as controller-runtime's production logger samples
them (zap's sampler: each second, the first 100 lines of one level and message, then every 100th),
so a burst of thousands of answers a second writes a few hundred lines, not thousands; the metrics
count every answer. A caller asks `wanted` before it builds a line's fields, then `log_event`.
When the only handler is the one `configure` installed, `log_event` writes the line itself: no
LogRecord, no handler lock, and one write every WRITE_AFTER_SECONDS (or WRITE_FROM_BYTES) instead
of a flushed write per line. A stdlib LogRecord costs about 15 us a line, more than a binding's
whole policy check. With any other handler present (pytest's caplog, an embedding program's own) it
is a plain `logger.log` call, so nothing is lost or reordered.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

import orjson

from limitguard.http.eventloop import CallLater, running_loop

_STANDARD = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}
_UTF8 = frozenset({"utf-8", "UTF-8", "utf8", "UTF8"})  # TextIOWrapper.encoding, as the stream was opened
# A queued line waits for its write at most this long, or until this much is queued. One write a
# turn of the event loop cost a fifth of the line's CPU time when every answer was logged (an
# unbound pod that fits nowhere, 10,000 a second); records of the stdlib path (errors, and
# anything logged with logger.warning and the like) are written at once, after the queued lines.
WRITE_AFTER_SECONDS = 0.1
WRITE_FROM_BYTES = 256 * 1024
# controller-runtime's (pkg/log/zap, production mode): zapcore.NewSamplerWithOptions(core, time.Second, 100, 100)
SAMPLE_INITIAL = 100
SAMPLE_THEREAFTER = 100
_MILLIS = [f".{ms:03d}Z" for ms in range(1000)]  # a timestamp's milliseconds, formatted once
_MILLIS_CLOSED = [f'{millis}"'.encode() for millis in _MILLIS]  # the same, closing the "ts" string


class _Clock:
    """Timestamps as `2026-11-23T00:40:38.123Z`; the seconds are formatted once per second."""

    def __init__(self) -> None:
        self._second = -1
        self._second_text = ""
        self._line_start = b""  # '{"ts":"2026-11-23T00:40:38', the start of every line that second

    def _at(self, second: int) -> None:
        self._second = second
        self._second_text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        self._line_start = b'{"ts":"' + self._second_text.encode()

    def timestamp(self, created: float) -> str:
        second = int(created)
        if second != self._second:
            self._at(second)
        return self._second_text + _MILLIS[int((created - second) * 1000)]

    def line_start(self, created: float) -> tuple[bytes, bytes]:
        """A queued line's first two parts, `{"ts":"...:38` and `.123Z"`: no text encoded per line."""
        second = int(created)
        if second != self._second:
            self._at(second)
        return self._line_start, _MILLIS_CLOSED[int((created - second) * 1000)]


def _line(ts: str, level: str, logger: str, msg: str, fields: Mapping[str, Any]) -> bytes:
    return orjson.dumps({"ts": ts, "level": level, "logger": logger, "msg": msg, **fields}, default=str)


class JsonFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__()
        self.clock = _Clock()

    def format(self, record: logging.LogRecord) -> str:
        fields = {key: value for key, value in vars(record).items() if key not in _STANDARD}
        if record.exc_info:
            fields["exception"] = self.formatException(record.exc_info)
        ts = self.clock.timestamp(record.created)
        return _line(ts, record.levelname.lower(), record.name, record.getMessage(), fields).decode()


class JsonLinesHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """stderr, one JSON object a line; `log_event` lines are queued and written together.

    Queued lines are written before any record the handler emits and on every flush (which
    logging.shutdown calls at exit), so lines keep their order and none is lost on a clean exit.
    """

    def __init__(self, stream: TextIO, call_later: CallLater | None = None) -> None:
        super().__init__(stream)
        self.formatter: JsonFormatter = JsonFormatter()
        self._queued: list[bytes | memoryview] = []  # the queued lines' parts, each line ending in \n
        self._queued_bytes = 0
        self._heads: dict[tuple[int, str, str], bytes] = {}  # (level, logger, msg) -> ',"level":...,'
        self._call_later = call_later  # the write's timer (tests drive it); None: the loop's
        self._write_on: asyncio.AbstractEventLoop | None = None  # the loop a write is scheduled on

    def serves(self, logger: logging.Logger, level: int) -> bool:
        """Only this handler would see the line (no caplog, no filters, no handlers of its own)."""
        root = logging.getLogger()
        return (
            root.handlers == [self]
            and not logger.handlers
            and logger.propagate
            and not logger.filters
            and not root.filters
            and not self.filters
            and level >= self.level
        )

    def queue(self, level: int, logger: str, msg: str, fields: Mapping[str, Any]) -> None:
        queued = self._queued
        # Four lookups rather than a pass over every field: a quarter of the cost at a dozen fields.
        if fields and not ("ts" in fields or "level" in fields or "logger" in fields or "msg" in fields):
            # The line's fixed part is encoded once per (level, logger, msg), the fields once each:
            # no merged dict per line (a third of the line's cost at one line per request). The
            # parts are joined once per write, not per line: a line is copied once on its way.
            head = self._heads.get((level, logger, msg))
            if head is None:  # ',"level":"info","logger":...,"msg":"admission",'
                empty = _line("", logging.getLevelName(level).lower(), logger, msg, {})
                head = empty[len(b'{"ts":""') : -1] + b","
                if len(self._heads) < 64:  # call sites pass constant messages: a handful
                    self._heads[level, logger, msg] = head
            start, millis = self.formatter.clock.line_start(time.time())
            encoded = orjson.dumps(fields, default=str, option=orjson.OPT_APPEND_NEWLINE)
            queued += (start, millis, head, memoryview(encoded)[1:])
            self._queued_bytes += len(head) + len(encoded) + 30  # 30: the timestamp's parts
        else:
            ts = self.formatter.clock.timestamp(time.time())
            line = _line(ts, logging.getLevelName(level).lower(), logger, msg, fields)
            queued += (line, b"\n")
            self._queued_bytes += len(line)
        if self._queued_bytes >= WRITE_FROM_BYTES:
            self.flush()
            return
        try:
            loop = running_loop()  # no getpid per line, as get_running_loop makes
        except RuntimeError:  # no event loop running: write now
            self.flush()
            return
        if self._write_on is loop:
            return  # a write is already scheduled (one on a loop since closed never runs)
        self._write_on = loop
        (self._call_later or loop.call_later)(WRITE_AFTER_SECONDS, self._scheduled_write)

    def _scheduled_write(self) -> None:
        self._write_on = None
        self.flush()

    def _write_queued(self) -> None:
        if not self._queued:
            return
        with self.lock:  # type: ignore[union-attr]  # created by Handler.__init__
            parts, self._queued, self._queued_bytes = self._queued, [], 0
            text = b"".join(parts)
            binary = getattr(self.stream, "buffer", None)
            if binary is None or getattr(self.stream, "encoding", None) not in _UTF8:
                self.stream.write(text.decode())  # a text-only stream (a test's StringIO), or not UTF-8
                return
            self.stream.flush()  # text written to the stream before stays before
            binary.write(text)  # orjson's bytes are UTF-8 already: no decode and encode again

    def emit(self, record: logging.LogRecord) -> None:
        self._write_queued()
        super().emit(record)

    def flush(self) -> None:
        self._write_queued()
        super().flush()


class Sampler:
    """Each second (of *clock*), the first *initial* lines of one (level, message) pass, then every
    *thereafter*-th (none past the first *initial* when it is 0); *initial* 0 passes every line."""

    __slots__ = ("_clock", "_counts", "_second", "initial", "thereafter")

    def __init__(self, initial: int, thereafter: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.initial = initial
        self.thereafter = thereafter
        self._clock = clock
        self._second = -1
        self._counts: dict[tuple[int, str], int] = {}  # this second's lines by (level, message)

    def admits(self, level: int, msg: str) -> bool:
        if not self.initial:
            return True
        second = int(self._clock())
        if second != self._second:
            self._second = second
            self._counts.clear()
        key = (level, msg)
        count = self._counts.get(key, 0) + 1
        self._counts[key] = count
        if count <= self.initial:
            return True
        return self.thereafter > 0 and (count - self.initial) % self.thereafter == 0


_EVERY_LINE = Sampler(0, 0)


def wanted(logger: logging.Logger, level: int, msg: str) -> bool:
    """Whether a per-request line is to be written: its level is enabled and the sampler admits it
    (asked before the line's fields are built, and once per line: it counts the lines)."""
    return logger.isEnabledFor(level) and _sampler.admits(level, msg)


def log_event(logger: logging.Logger, level: int, msg: str, fields: Mapping[str, Any]) -> None:
    """`logger.log(level, msg, extra=fields)`, cheap enough for a line per request (after `wanted`)."""
    if not logger.isEnabledFor(level):
        return
    handler = _installed
    if handler is not None and handler.serves(logger, level):
        handler.queue(level, logger.name, msg, fields)
    else:
        logger.log(level, msg, extra=fields)


_installed: JsonLinesHandler | None = None
_sampler: Sampler = _EVERY_LINE  # until `configure` says otherwise: tests and embedders see every line


def configure(
    level: str = "info", call_later: CallLater | None = None, sampler: Sampler = _EVERY_LINE
) -> None:
    """JSON lines on stderr at *level*, per-request lines sampled by *sampler* (`serve` passes
    SAMPLE_INITIAL and SAMPLE_THEREAFTER unless told); *call_later* times the queued lines' writes
    (tests drive it)."""
    global _installed, _sampler
    _sampler = sampler
    # The JSON line never shows the caller, thread or process: do not compute them per record
    # (finding the caller walks the stack). Documented switches of the logging module.
    logging._srcfile = None  # type: ignore[attr-defined]
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    if _installed is not None:
        _installed.flush()
    handler = JsonLinesHandler(sys.stderr, call_later)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    _installed = handler
