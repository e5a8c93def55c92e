from limitguard.core.fit import describe_node, shortfalls

CPU_125 = {"cpu": 125}


def test_spec_worked_example():
    allocatable = {"cpu": 8000}
    # node1: pods with limits 6 and 4 -> allocated 10 of capacity 10; pod5 (4) does not fit.
    node1 = shortfalls({"cpu": 4000}, allocatable, {"cpu": 10000}, CPU_125)
    assert [s.resource for s in node1] == ["cpu"]
    assert describe_node("node1", node1) == (
        'node "node1": cpu limit 4 exceeds remaining 0 (allocated 10 of capacity 10 = 8 allocatable x 125%)'
    )
    # node2: pods 3 and 2 -> allocated 5; 9 <= 10 fits.
    assert shortfalls({"cpu": 4000}, allocatable, {"cpu": 5000}, CPU_125) == []


def test_equality_fits_and_one_more_millicore_does_not():
    assert shortfalls({"cpu": 5000}, {"cpu": 8000}, {"cpu": 5000}, CPU_125) == []
    assert len(shortfalls({"cpu": 5001}, {"cpu": 8000}, {"cpu": 5000}, CPU_125)) == 1


def test_resources_missing_from_the_ratio_map_are_never_limited():
    assert shortfalls({"memory": 10**15, "nvidia.com/gpu": 99}, {"memory": 1}, {}, CPU_125) == []


def test_zero_limits_always_fit_even_on_an_overcommitted_node():
    assert shortfalls({}, {"cpu": 1000}, {"cpu": 99999}, CPU_125) == []
    assert shortfalls({"memory": 1}, {"cpu": 1000}, {"cpu": 99999}, CPU_125) == []


def test_every_failing_resource_is_named_with_its_numbers():
    found = shortfalls(
        {"cpu": 3000, "memory": 4 * 1024**3},
        {"cpu": 2000, "memory": 8 * 1024**3},
        {"memory": 6 * 1024**3},
        {"cpu": 100, "memory": 120},
    )
    text = describe_node("n", found)
    assert "cpu limit 3 exceeds remaining 2 (allocated 0 of capacity 2 = 2 allocatable x 100%)" in text
    # 8Gi x 120% = 10307921510.4 bytes, truncated; remaining = that - 6Gi.
    assert (
        "memory limit 4Gi exceeds remaining 3865470566 (allocated 6Gi of capacity 10307921510 = 8Gi allocatable x 120%)"
        in text
    )
    assert [s.resource for s in found] == ["cpu", "memory"]


def test_extended_resource_with_ratio_but_not_on_node_has_no_capacity():
    found = shortfalls({"nvidia.com/gpu": 1}, {"cpu": 8000}, {}, {"nvidia.com/gpu": 100})
    assert found and found[0].capacity == 0


def test_remaining_is_never_shown_negative():
    found = shortfalls({"cpu": 1000}, {"cpu": 1000}, {"cpu": 5000}, {"cpu": 100})
    assert "remaining 0 (allocated 5 of capacity 1" in found[0].describe()


def test_a_limit_that_is_a_request_is_named_as_one():
    sources = {"cpu": "request", "memory": "limit-and-request"}
    found = shortfalls(
        {"cpu": 4000, "memory": 4 * 1024**3},
        {"cpu": 8000, "memory": 1024**3},
        {"cpu": 10000},
        {"cpu": 125, "memory": 100},
        sources,
    )
    text = describe_node("node1", found)
    assert "cpu limit 4 (its request; no limit set) exceeds remaining 0 (allocated 10 of capacity 10" in text
    assert (
        "memory limit 4Gi (with the requests of containers that set no limit) exceeds remaining 1Gi" in text
    )
    assert [row.limit_source for row in found] == ["request", "limit-and-request"]
