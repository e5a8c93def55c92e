import pytest

from webhook.core.ratios import (
    RatioError,
    is_valid_resource_name,
    limit_capacity,
    parse_ratio_annotation,
    parse_ratio_map,
    parse_ratio_percent,
)


@pytest.mark.parametrize(("value", "percent"), [(150, 150), ("150%", 150), (0, 0), ("0%", 0), (600, 600)])
def test_valid_percent_forms(value, percent):
    assert parse_ratio_percent(value) == percent


@pytest.mark.parametrize("value", ["150", 1.5, 150.0, -1, "-5%", "1.5%", True, None, [150], "150 %", "%"])
def test_malformed_percent_forms(value):
    with pytest.raises(RatioError):
        parse_ratio_percent(value)


@pytest.mark.parametrize(
    "name",
    ["cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "nvidia.com/gpu", "kubernetes.io/batch-cpu"],
)
def test_valid_resource_names(name):
    assert is_valid_resource_name(name)


@pytest.mark.parametrize(
    "name", ["", "/gpu", "nvidia.com/", "Bad_Domain.com/gpu", "a/b/c", "-cpu", "x" * 64, 5]
)
def test_invalid_resource_names(name):
    assert not is_valid_resource_name(name)


def test_annotation_replaces_with_exactly_its_map():
    assert parse_ratio_annotation('{"cpu": 150, "memory": "120%"}') == {"cpu": 150, "memory": 120}


@pytest.mark.parametrize(
    "text",
    [
        '{"cpu": "150"}',
        '{"cpu": 1.5}',
        '{"cpu": -10}',
        "[150]",
        '"150%"',
        "not json",
        '{"bad name!": 100}',
        "{",
    ],
)
def test_malformed_annotations(text):
    with pytest.raises(RatioError):
        parse_ratio_annotation(text)


def test_map_error_names_the_resource():
    with pytest.raises(RatioError, match="memory"):
        parse_ratio_map({"cpu": 100, "memory": "120"})


def test_capacity_truncates_with_integer_arithmetic():
    assert limit_capacity(8000, 125) == 10000
    assert limit_capacity(1900, 133) == 2527  # 2527.0 exactly
    assert limit_capacity(7, 150) == 10  # 10.5 truncated
