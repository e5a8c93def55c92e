"""The scheduler-plugins development branch (master at commit 903da7df, not in a release yet;
``--scheduler scheduler-plugins@main``): NodeMetadataArgs and NodeResourceTopologyMatchArgs'
preemptionMode, from the project's own tables at that commit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from limitguard.schedcfg.args.sigs import MAIN, V0_34_7
from tests.support import FIXTURES
from tests.unit.schedcfg.sigs_helpers import UNRELEASED, defaulted, errors, run

PLUGINS = V0_34_7.plugins
UNRELEASED_PLUGINS = MAIN.plugins

NUMBER_HIGHEST = {"metadataSource": "Label", "metadataType": "Number", "scoringStrategy": "Highest"}

# kubernetes-sigs/scheduler-plugins apis/config/validation/validation_plugingargs_test.go @ 903da7df,
# TestValidateNodeMetadataArgs (internal args: an empty string where the Go test leaves a field empty).
NODE_METADATA_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("correct config with label source and numeric type", {"metadataKey": "priority", **NUMBER_HIGHEST}, []),
    (
        "correct config with annotation source and timestamp type",
        {
            "metadataKey": "lastUpdate",
            "metadataSource": "Annotation",
            "metadataType": "Timestamp",
            "scoringStrategy": "Newest",
        },
        [],
    ),
    (
        "missing MetadataKey",
        {"metadataKey": "", **NUMBER_HIGHEST},
        ['args.metadataKey: Invalid value: "": metadataKey cannot be empty'],
    ),
    (
        "invalid MetadataSource",
        {"metadataKey": "priority", **NUMBER_HIGHEST, "metadataSource": "InvalidSource"},
        [
            'args.metadataSource: Invalid value: "InvalidSource": metadataSource must be either "Label" or "Annotation"'
        ],
    ),
    (
        "invalid MetadataType",
        {"metadataKey": "priority", **NUMBER_HIGHEST, "metadataType": "InvalidType"},
        [
            'args.metadataType: Invalid value: "InvalidType": metadataType must be either "Number" or "Timestamp"'
        ],
    ),
    (
        "invalid ScoringStrategy",
        {"metadataKey": "priority", **NUMBER_HIGHEST, "scoringStrategy": "InvalidStrategy"},
        [
            'args.scoringStrategy: Invalid value: "InvalidStrategy": scoringStrategy must be one of "Highest", '
            '"Lowest", "Newest", or "Oldest"'
        ],
    ),
    (
        "numeric type with Newest strategy (mismatch)",
        {"metadataKey": "priority", **NUMBER_HIGHEST, "scoringStrategy": "Newest"},
        [
            'args.scoringStrategy: Invalid value: "Newest": scoringStrategy "Newest" and "Oldest" are only valid '
            'for metadataType "Timestamp"'
        ],
    ),
    (
        "timestamp type with Highest strategy (mismatch)",
        {
            "metadataKey": "lastUpdate",
            "metadataSource": "Annotation",
            "metadataType": "Timestamp",
            "scoringStrategy": "Highest",
        },
        [
            'args.scoringStrategy: Invalid value: "Highest": scoringStrategy "Highest" and "Lowest" are only valid '
            'for metadataType "Number"'
        ],
    ),
    (
        "all valid combinations - Lowest with Number",
        {
            "metadataKey": "cost",
            "metadataSource": "Annotation",
            "metadataType": "Number",
            "scoringStrategy": "Lowest",
        },
        [],
    ),
    (
        "all valid combinations - Oldest with Timestamp",
        {
            "metadataKey": "provisionedAt",
            "metadataSource": "Label",
            "metadataType": "Timestamp",
            "scoringStrategy": "Oldest",
        },
        [],
    ),
]

# Same file, TestValidateNodeResourceTopologyMatchArgs: the cases master added.
PREEMPTION_MODE_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("correct config with explicit PreemptionMode disabled", {"preemptionMode": "Disabled"}, []),
    ("correct config with explicit PreemptionMode enabled", {"preemptionMode": "Enabled"}, []),
    (
        "incorrect config, wrong PreemptionMode",
        {"preemptionMode": "not existent"},
        ['args.preemptionMode: Invalid value: "not existent": invalid PreemptionMode'],
    ),
]


@pytest.mark.parametrize(
    ("name", "args", "expected"), NODE_METADATA_CASES, ids=[c[0] for c in NODE_METADATA_CASES]
)
def test_node_metadata_table(name: str, args: dict[str, Any], expected: list[str]) -> None:
    assert errors("NodeMetadataArgs", args, UNRELEASED) == expected


@pytest.mark.parametrize(
    ("name", "args", "expected"), PREEMPTION_MODE_CASES, ids=[c[0] for c in PREEMPTION_MODE_CASES]
)
def test_preemption_mode_table(name: str, args: dict[str, Any], expected: list[str]) -> None:
    args = {"scoringStrategy": {"type": "MostAllocated"}, **args}
    assert errors("NodeResourceTopologyMatchArgs", args, UNRELEASED) == expected


def test_released_topology_match_has_no_preemption_mode() -> None:
    """v0.34.7 (and v0.33.5) types.go has no such field: its strict decoder refuses it, and the message
    names the build that has it and how to choose it."""
    for spec in ("scheduler-plugins@v0.34.7", "scheduler-plugins@v0.33.5"):
        assert errors("NodeResourceTopologyMatchArgs", {"preemptionMode": "Enabled"}, spec=spec) == [
            'args.preemptionMode: Forbidden: unknown field "preemptionMode" (scheduler-plugins '
            f"{spec.partition('@')[2]} does not have it; scheduler-plugins main (903da7df) has it: choose it "
            "with --scheduler scheduler-plugins@main (or the limitguard.io/scheduler annotation))"
        ]


def test_unreleased_defaults() -> None:
    """apis/config/v1/defaults_test.go @ 903da7df: preemptionMode defaults to Disabled and keeps Enabled;
    SetDefaults_NodeMetadataArgs (and New for an empty string) give Timestamp values the RFC 3339 layout."""
    assert defaulted("NodeResourceTopologyMatchArgs", {}, UNRELEASED)["preemptionMode"] == "Disabled"
    assert defaulted("NodeResourceTopologyMatchArgs", {"preemptionMode": "Enabled"}, UNRELEASED)[
        "preemptionMode"
    ] == ("Enabled")
    timestamp = {
        "metadataKey": "k",
        "metadataSource": "Label",
        "metadataType": "Timestamp",
        "scoringStrategy": "Oldest",
    }
    for given in ({}, {"timestampFormat": ""}, {"timestampFormat": None}):
        assert defaulted("NodeMetadataArgs", {**timestamp, **given}, UNRELEASED)["timestampFormat"] == (
            "2006-01-02T15:04:05Z07:00"
        )
    assert "timestampFormat" not in defaulted(
        "NodeMetadataArgs", {"metadataKey": "k", **NUMBER_HIGHEST}, UNRELEASED
    )


def test_node_metadata_is_a_score_plugin_on_master_only() -> None:
    """cmd/scheduler/main.go registers nodemetadata.New on master, not at v0.34.7; NodeResourceTopologyMatch
    gains PreFilter there."""
    assert "NodeMetadata" not in PLUGINS
    assert UNRELEASED_PLUGINS["NodeMetadata"] == frozenset({"score"})
    assert UNRELEASED_PLUGINS["NodeResourceTopologyMatch"] - PLUGINS["NodeResourceTopologyMatch"] == {
        "preFilter"
    }


def test_the_node_metadata_examples_pass() -> None:
    """tests/fixtures/schedcfg-v1-multidoc-nodemetadata.scheduler-plugins.yaml (manifests/nodemetadata/
    scheduler-config.yaml @ 903da7df, see tests/fixtures/SOURCES.md): four profiles, each clean."""
    path: Path = FIXTURES / "schedcfg-v1-multidoc-nodemetadata.scheduler-plugins.yaml"
    entries = [
        entry
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8"))
        for profile in document["profiles"]
        for entry in profile["pluginConfig"]
    ]
    assert [e["name"] for e in entries] == ["NodeMetadata"] * 4
    for entry in entries:
        assert run("NodeMetadataArgs", entry["args"], UNRELEASED)[0] == []
