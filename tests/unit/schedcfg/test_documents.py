"""YAML loading: positions, strictness and the safety limits."""

from __future__ import annotations

import pytest
import yaml

from limitguard.schedcfg import documents, validate_text
from limitguard.schedcfg.documents import YamlInputError, load_documents


def test_syntax_error_has_line_and_column() -> None:
    with pytest.raises(YamlInputError) as excinfo:
        load_documents("a: 1\nb: [1, 2\nc: 3\n")
    assert excinfo.value.line is not None and excinfo.value.line >= 2
    assert excinfo.value.column is not None
    assert str(excinfo.value).startswith(f"YAML syntax error at line {excinfo.value.line}, column")


def test_syntax_error_is_one_finding_with_position() -> None:
    report = validate_text("apiVersion: x\n  kind: y\n: :\n", "f.yaml")
    (error,) = report.errors
    assert error.rule == "yaml.syntax" and error.line == 2
    assert report.format().startswith("f.yaml:2:")


def test_duplicate_keys_are_rejected_like_a_strict_decoder() -> None:
    with pytest.raises(YamlInputError, match="duplicate key 'profiles'") as excinfo:
        load_documents("profiles: []\nprofiles: []\n")
    assert excinfo.value.line == 2


def test_merge_keys_are_not_duplicates() -> None:
    (doc,) = load_documents("base: &b {x: 1}\nother:\n  <<: *b\n  x: 2\n")
    assert doc.data["other"] == {"x": 2}


def test_timestamps_stay_strings() -> None:
    (doc,) = load_documents("timestampFormat: 2006-01-02\n")
    assert doc.data == {"timestampFormat": "2006-01-02"}


def test_alias_bomb_is_refused() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level, prev in zip("bcdefg", "abcdef", strict=True):
        lines.append(f"{level}: &{level} [" + ", ".join([f"*{prev}"] * 10) + "]")
    with pytest.raises(YamlInputError, match="alias bomb") as excinfo:
        load_documents("\n".join(lines) + "\n")
    assert excinfo.value.rule in {"yaml.too-many-nodes", "yaml.too-many-aliases"}


def test_too_many_aliases_is_refused() -> None:
    text = "a: &a 1\nb: [" + ", ".join(["*a"] * (documents.MAX_ALIASES + 1)) + "]\n"
    with pytest.raises(YamlInputError, match="aliases"):
        load_documents(text)


@pytest.mark.parametrize("loader", ["CSafeLoader", "SafeLoader"])
@pytest.mark.parametrize("text", ["[" * 100_000, "{a: " * 5_000, "[" * 65 + "]" * 65])
def test_deep_nesting_is_refused_before_parsing(
    monkeypatch: pytest.MonkeyPatch, loader: str, text: str
) -> None:
    """Our own answer whichever scanner runs first (libyaml refuses >1,000 flow levels by itself)."""
    if not hasattr(yaml, loader):
        pytest.skip(f"this PyYAML has no {loader}")
    monkeypatch.setattr(documents, "_BaseLoader", getattr(yaml, loader))
    with pytest.raises(YamlInputError, match="nesting deeper than 64 levels") as excinfo:
        load_documents(text)
    assert excinfo.value.rule == "yaml.too-deep"


def test_a_syntax_error_keeps_the_parsers_message() -> None:
    with pytest.raises(YamlInputError, match=r"expected the node content|did not find expected node content"):
        load_documents("[" * 10)


def test_recursive_alias_is_refused() -> None:
    with pytest.raises(YamlInputError, match="alias"):
        load_documents("a: &a [*a]\n")


def test_huge_input_is_refused() -> None:
    report = validate_text("# " + "x" * documents.MAX_INPUT_BYTES)
    assert [f.rule for f in report.errors] == ["yaml.too-large"]


def test_positions_of_keys_and_items() -> None:
    (doc,) = load_documents("profiles:\n- schedulerName: a\n  plugins: {}\n")
    assert doc.locate("profiles[0].schedulerName") == (2, 3)
    assert doc.locate("profiles[0].plugins.score.enabled[0]") == (3, 3)  # nearest ancestor


def test_list_of_configmaps_is_searched() -> None:
    text = """
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: c}
  data:
    cfg: |
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: KubeSchedulerConfiguration
      parallelism: 0
"""
    report = validate_text(text)
    (error,) = report.errors
    assert error.path == "items[0].data[cfg].parallelism"
    assert error.line == 12


def test_input_without_configuration_is_an_error() -> None:
    report = validate_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")
    assert [f.rule for f in report.errors] == ["input.no-config"]
    assert [f.rule for f in report.infos] == ["input.skipped"]
