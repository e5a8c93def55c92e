"""parse_go_duration is Go's time.ParseDuration: the tables of golang/go src/time/time_test.go
(parseDurationTests and parseDurationErrorTests as of the go1.18 change that admits the smallest int64,
golang.org/issue/48629), plus the cases issue 28 names; an out-of-range duration is a field-path error."""

from __future__ import annotations

import pytest

from limitguard.schedcfg import Report
from limitguard.schedcfg.fields.durations import parse_go_duration, parse_go_duration_ns
from tests.unit.schedcfg.helpers import check, config, paths, with_args

NS, US, MS, S, M, H = 1, 1_000, 1_000_000, 1_000_000_000, 60_000_000_000, 3_600_000_000_000

GO_VALID = [
    # simple
    ("0", 0),
    ("5s", 5 * S),
    ("30s", 30 * S),
    ("1478s", 1478 * S),
    # sign
    ("-5s", -5 * S),
    ("+5s", 5 * S),
    ("-0", 0),
    ("+0", 0),
    # decimal
    ("5.0s", 5 * S),
    ("5.6s", 5 * S + 600 * MS),
    ("5.s", 5 * S),
    (".5s", 500 * MS),
    ("1.0s", 1 * S),
    ("1.00s", 1 * S),
    ("1.004s", 1 * S + 4 * MS),
    ("1.0040s", 1 * S + 4 * MS),
    ("100.00100s", 100 * S + 1 * MS),
    # different units
    ("10ns", 10 * NS),
    ("11us", 11 * US),
    ("12µs", 12 * US),  # U+00B5
    ("12μs", 12 * US),  # U+03BC
    ("13ms", 13 * MS),
    ("14s", 14 * S),
    ("15m", 15 * M),
    ("16h", 16 * H),
    # composite durations
    ("3h30m", 3 * H + 30 * M),
    ("10.5s4m", 4 * M + 10 * S + 500 * MS),
    ("-2m3.4s", -(2 * M + 3 * S + 400 * MS)),
    ("1h2m3s4ms5us6ns", 1 * H + 2 * M + 3 * S + 4 * MS + 5 * US + 6 * NS),
    ("39h9m14.425s", 39 * H + 9 * M + 14 * S + 425 * MS),
    # large value
    ("52763797000ns", 52763797000 * NS),
    # more than 9 digits after decimal point, see https://golang.org/issue/6617
    ("0.3333333333333333333h", 20 * M),
    # 9007199254740993 = 1<<53+1 cannot be stored precisely in a float64
    ("9007199254740993ns", (1 << 53) + 1),
    # largest duration that can be represented by int64 in nanoseconds
    ("9223372036854775807ns", (1 << 63) - 1),
    ("9223372036854775.807us", (1 << 63) - 1),
    ("9223372036s854ms775us807ns", (1 << 63) - 1),
    ("-9223372036854775808ns", -(1 << 63)),
    ("-9223372036854775.808us", -(1 << 63)),
    ("-9223372036s854ms775us808ns", -(1 << 63)),
    # largest negative round trip value, see https://golang.org/issue/48629
    ("-2562047h47m16.854775808s", -(1 << 63)),
    # huge string; issue 15011.
    ("0.100000000000000000000h", 6 * M),
    # This value tests the first overflow check in leadingFraction.
    ("0.830103483285477580700h", 49 * M + 48 * S + 372539827 * NS),
    # issue 28's own
    ("1h2m3.5s", H + 2 * M + 3500 * MS),
    ("1.5h", 90 * M),
    ("-1.5h", -90 * M),
    ("1µs", US),
    ("1us", US),
    ("1μs", US),
    ("1ns", NS),
]

GO_INVALID = [
    # invalid
    "",
    "3",
    "-",
    "s",
    ".",
    "-.",
    ".s",
    "+.s",
    "1d",
    "\x85\x85",
    "\xffff",
    "hello \xffff world",
    "\ufffd",
    "\ufffd hello \ufffd world",
    # overflow
    "9223372036854775810ns",
    "9223372036854775808ns",
    "-9223372036854775809ns",
    "9223372036854776us",
    "3000000h",
    "9223372036854775.808us",
    "9223372036854ms775us808ns",
    # issue 28's own
    "5",
    "1.2.3s",
    "+-3s",
    "-+3s",
    "1h 2m",
    " 1s",
    "1S",
    "0s0",
    "00",
    "+",
]


@pytest.mark.parametrize(("text", "nanoseconds"), GO_VALID)
def test_go_accepts(text: str, nanoseconds: int) -> None:
    assert parse_go_duration_ns(text) == nanoseconds
    assert parse_go_duration(text) == pytest.approx(nanoseconds / 1e9)


@pytest.mark.parametrize("text", GO_INVALID)
def test_go_refuses(text: str) -> None:
    assert parse_go_duration_ns(text) is None
    assert parse_go_duration(text) is None


@pytest.mark.parametrize("value", [None, 5, 1.5, True, b"5s", ["5s"]])
def test_not_a_string(value: object) -> None:
    assert parse_go_duration(value) is None


def test_fractions_truncate_to_whole_nanoseconds() -> None:
    assert parse_go_duration_ns("1.9ns") == 1
    assert parse_go_duration_ns("-1.9ns") == -1
    assert parse_go_duration_ns("0.5ns") == 0


TOO_LONG = "9223372036854775808ns"  # the schemas' syntax, past int64 nanoseconds


def _errors(report: Report) -> list[str]:
    return [f"{f.path}: {f.message}" for f in report.errors]


def test_out_of_range_leader_election_duration_is_a_field_error() -> None:
    report = check(config(leaderElection={"leaseDuration": TOO_LONG}))
    assert paths(report) == ["leaderElection.leaseDuration"]
    assert "out of range: a Go duration holds int64 nanoseconds" in report.errors[0].message
    assert [f.rule for f in report.errors] == ["schema.go-duration-range"]
    # the smallest int64 is a duration (negative, so the leader-election rule refuses it as such)
    report = check(config(leaderElection={"leaseDuration": "-9223372036854775808ns"}))
    assert [f.rule for f in report.errors] == ["leader-election.positive-duration"]


def test_out_of_range_plugin_arg_durations_are_field_errors() -> None:
    report = check(with_args("DynamicResources", {"filterTimeout": "3000000h"}, score=False))
    assert paths(report) == ["profiles[0].pluginConfig[0].args.filterTimeout"]
    assert "int64 nanoseconds" in _errors(report)[0]
    koord = with_args("ElasticQuota", {"delayEvictTime": TOO_LONG}, score=False)
    report = check(koord, scheduler="koord-scheduler")
    assert paths(report) == ["profiles[0].pluginConfig[0].args.delayEvictTime"]
    assert "int64 nanoseconds" in _errors(report)[0]


def test_go_syntax_the_old_parser_missed_is_valid() -> None:
    assert check(config(leaderElection={"leaseDuration": "15.s", "renewDeadline": ".5s"})).ok
