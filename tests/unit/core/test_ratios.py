import pytest

from limitguard.core.ratios import (
    MAX_RATIO_RESOURCES,
    RatioError,
    limit_capacity,
    parse_ratio_annotation,
    parse_ratio_map,
)

# The accepted percent forms and resource names are tested in tests/schedcfg/test_helpers.py,
# including a property test that the LimitAwareArgs schema agrees with parse_ratio_percent.


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


def test_a_map_naming_more_than_the_cap_is_refused_before_its_entries_are_read():
    at_cap = {f"example.com/r{i}": 100 for i in range(MAX_RATIO_RESOURCES)}
    assert len(parse_ratio_map(at_cap)) == MAX_RATIO_RESOURCES
    over = {**at_cap, "example.com/one-more": 100}
    with pytest.raises(RatioError, match=f"names {MAX_RATIO_RESOURCES + 1} resources; at most 32"):
        parse_ratio_map(over)


def test_an_invalid_resource_name_is_echoed_clipped():
    with pytest.raises(RatioError) as excinfo:
        parse_ratio_map({"!" * 100_000: 100})
    assert len(str(excinfo.value)) < 400
    assert "more characters" in str(excinfo.value)
