"""parse_ratio_percent and is_valid_resource_name (limitguard.core): one definition for the validator and the node-annotation webhook."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from limitguard.core.names import RESOURCE_NAME_PATTERN, is_valid_resource_name
from limitguard.core.ratios import parse_ratio_percent
from limitguard.schedcfg import schemas


@pytest.mark.parametrize(("value", "percent"), [(150, 150), ("150%", 150), (0, 0), ("0%", 0), ("007%", 7)])
def test_parse_ratio_percent_accepts(value: Any, percent: int) -> None:
    assert parse_ratio_percent(value) == percent


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("150", '"150%"'),
        (150.0, "float"),
        (1.5, "float"),
        (-1, "negative"),
        (True, "boolean"),
        (False, "boolean"),
        ("", '150 or "150%"'),
        ("%", '150 or "150%"'),
        ("-5%", '150 or "150%"'),
        (" 150%", '150 or "150%"'),
        ("150%%", '150 or "150%"'),
        ("1.5%", '150 or "150%"'),
        (None, '150 or "150%"'),
        ([150], '150 or "150%"'),
    ],
)
def test_parse_ratio_percent_rejects(value: Any, fragment: str) -> None:
    with pytest.raises(ValueError, match="invalid ratio") as excinfo:
        parse_ratio_percent(value)
    assert fragment in str(excinfo.value)


RATIO_SCHEMA = schemas.load_schema("args/LimitAwareArgs.schema.json")["properties"][
    "defaultLimitToAllocatableRatio"
]["additionalProperties"]


@given(
    st.one_of(
        st.integers(-1000, 10**12),
        st.floats(allow_nan=False),
        st.booleans(),
        st.none(),
        st.text(max_size=8),
        st.integers(0, 10**6).map(lambda n: f"{n}%"),
    )
)
def test_schema_and_helper_agree_on_ratios(value: Any) -> None:
    """The LimitAwareArgs schema and parse_ratio_percent must accept exactly the same values."""
    validator = schemas.args_validator("LimitAwareArgs")
    schema_ok = validator.is_valid({"defaultLimitToAllocatableRatio": {"cpu": value}})
    try:
        parse_ratio_percent(value)
        helper_ok = True
    except ValueError:
        helper_ok = False
    assert schema_ok is helper_ok
    assert RATIO_SCHEMA["pattern"] == "^[0-9]+%$"


@pytest.mark.parametrize(
    "name",
    [
        "cpu",
        "memory",
        "ephemeral-storage",
        "pods",
        "storage",
        "hugepages-2Mi",
        "hugepages-1Gi",
        "nvidia.com/gpu",
        "kubernetes.io/batch-cpu",
        "example.com/Foo_bar.baz",
        "a/b",
        "intel.com/foo",
        "ex.com/" + "x" * 63,
        "hugepages-1.5Gi",
        "a" * 253 + "/x",
    ],
)
def test_valid_resource_names(name: str) -> None:
    assert is_valid_resource_name(name)
    assert re.search(RESOURCE_NAME_PATTERN, name)  # the schemas' pattern agrees


@pytest.mark.parametrize(
    "name",
    [
        "",
        "gpu",
        "CPU",
        "hugepages-",
        "hugepages-two",
        "nvidia.com/",
        "/gpu",
        "Nvidia.com/gpu",
        "nvidia.com/gpu/x",
        "nvidia com/gpu",
        "nvidia.com/-gpu",
        "nvidia.com/gpu-",
        "ex.com/" + "x" * 64,
        "a" * 254 + "/x",
        "-ex.com/x",
        "a..com/x",
        "bad name",
        "cpu ",
    ],
)
def test_invalid_resource_names(name: str) -> None:
    assert not is_valid_resource_name(name)
    assert not re.search(RESOURCE_NAME_PATTERN, name)  # the schemas' pattern agrees


def test_resource_name_rejects_non_strings() -> None:
    assert not is_valid_resource_name(None)  # type: ignore[arg-type]
    assert not is_valid_resource_name(5)  # type: ignore[arg-type]
