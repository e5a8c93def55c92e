import pytest

from limitguard.core.podlimits import PodSpecError, pod_amounts, pod_limits, pod_requests
from limitguard.core.podrules import DEFAULT_RULES
from tests.support import container


def spec(containers=(), init=(), overhead=None):
    body = {"containers": list(containers), "initContainers": list(init)}
    if overhead:
        body["overhead"] = overhead
    return body


def test_limit_wins_over_request_and_request_stands_in_for_missing_limit():
    limits = pod_limits(
        spec([container(limits={"cpu": "2"}, requests={"cpu": "1", "memory": "1Gi"})]), None, DEFAULT_RULES
    )
    assert limits == {"cpu": 2000, "memory": 1024**3}


def test_regular_containers_are_summed():
    limits = pod_limits(
        spec([container("a", limits={"cpu": "1"}), container("b", limits={"cpu": "500m"})]),
        None,
        DEFAULT_RULES,
    )
    assert limits == {"cpu": 1500}


def test_init_container_peak_wins_when_larger_than_the_sum():
    limits = pod_limits(
        spec([container(limits={"cpu": "1"})], init=[container("init", limits={"cpu": "3"})]),
        None,
        DEFAULT_RULES,
    )
    assert limits == {"cpu": 3000}


def test_sidecars_add_to_the_long_running_sum_and_to_later_init_containers():
    sidecar = container("proxy", limits={"cpu": "1"}, restartPolicy="Always")
    late_init = container("migrate", limits={"cpu": "2500m"})
    # long running: app 1 + sidecar 1 = 2; init peak: migrate 2.5 + sidecar started before it 1 = 3.5
    limits = pod_limits(
        spec([container(limits={"cpu": "1"})], init=[sidecar, late_init]), None, DEFAULT_RULES
    )
    assert limits == {"cpu": 3500}


def test_init_container_before_the_sidecar_does_not_pay_for_it():
    early_init = container("setup", limits={"cpu": "2500m"})
    sidecar = container("proxy", limits={"cpu": "1"}, restartPolicy="Always")
    # init peak 2.5 (no sidecar started yet) exceeds the long-running sum app 1 + sidecar 1 = 2
    assert pod_limits(
        spec([container(limits={"cpu": "1"})], init=[early_init, sidecar]), None, DEFAULT_RULES
    ) == {"cpu": 2500}


def test_overhead_is_added_after_the_max():
    limits = pod_limits(
        spec([container(limits={"cpu": "1", "memory": "1Gi"})], overhead={"cpu": "250m", "memory": "160Mi"}),
        None,
        DEFAULT_RULES,
    )
    assert limits == {"cpu": 1250, "memory": 1024**3 + 160 * 1024**2}


def test_resources_are_independent_in_the_max():
    limits = pod_limits(
        spec(
            [container(limits={"cpu": "4", "memory": "1Gi"})],
            init=[container("i", limits={"cpu": "1", "memory": "2Gi"})],
        ),
        None,
        DEFAULT_RULES,
    )
    assert limits == {"cpu": 4000, "memory": 2 * 1024**3}


def test_extended_resources_and_hugepages_are_counted_as_integers():
    limits = pod_limits(
        spec([container(limits={"nvidia.com/gpu": 2, "hugepages-2Mi": "20Mi", "cpu": "1"})]),
        None,
        DEFAULT_RULES,
    )
    assert limits == {"nvidia.com/gpu": 2, "hugepages-2Mi": 20 * 1024**2, "cpu": 1000}


def test_no_resources_means_no_limits():
    assert pod_limits(spec([{"name": "a", "image": "x"}]), None, DEFAULT_RULES) == {}
    assert pod_limits({}, None, DEFAULT_RULES) == {}


@pytest.mark.parametrize(
    "bad",
    [
        {"containers": "nope"},
        {"containers": [42]},
        {"containers": [{"name": "a", "resources": {"limits": {"cpu": "lots"}}}]},
        {"containers": [{"name": "a", "resources": {"limits": ["cpu"]}}]},
        {"containers": [], "overhead": {"cpu": "x"}},
    ],
)
def test_malformed_specs_raise_a_clear_error(bad):
    with pytest.raises(PodSpecError):
        pod_limits(bad, None, DEFAULT_RULES)


def test_amounts_are_memoised_per_resource_shape_and_shared():
    from limitguard.core.podlimits import pod_amounts

    first = pod_amounts(
        spec([container("a", limits={"cpu": "2"}, requests={"cpu": "1"})]), None, DEFAULT_RULES
    )
    again = pod_amounts(
        spec([container("b", limits={"cpu": "2"}, requests={"cpu": "1"})]), None, DEFAULT_RULES
    )  # other name
    assert again is first
    assert first.limits == {"cpu": 2000}
    assert first.scoring_requests == {"cpu": 1000, "memory": 200 * 1024**2}
    other = pod_amounts(
        spec([container("a", limits={"cpu": "3"}, requests={"cpu": "1"})]), None, DEFAULT_RULES
    )
    assert other.limits == {"cpu": 3000}


def test_memo_keeps_sidecars_and_init_containers_apart():
    from limitguard.core.podlimits import pod_amounts

    init = container("i", limits={"cpu": "2"})
    sidecar = container("i", limits={"cpu": "2"}, restartPolicy="Always")
    app = [container(limits={"cpu": "1"})]
    assert pod_amounts(spec(app, init=[init]), None, DEFAULT_RULES).limits == {"cpu": 2000}
    assert pod_amounts(spec(app, init=[sidecar]), None, DEFAULT_RULES).limits == {"cpu": 3000}
    assert pod_amounts(spec([*app, init]), None, DEFAULT_RULES).limits == {
        "cpu": 3000
    }  # a regular container, summed


def test_memo_still_rejects_unhashable_quantities():
    from limitguard.core.podlimits import pod_amounts

    with pytest.raises(PodSpecError):
        pod_amounts(
            {"containers": [{"name": "a", "resources": {"limits": {"cpu": ["2"]}}}]}, None, DEFAULT_RULES
        )


# -- issue 13: the guard rules on top of component-helpers -----------------------------------------
def test_overhead_is_added_only_to_non_zero_values():
    """Upstream PodLimits: a pod that names no cpu is unlimited for cpu; overhead does not limit it."""
    limits = pod_limits(
        spec([container(limits={"memory": "1Gi"})], overhead={"cpu": "250m", "memory": "160Mi"}),
        None,
        DEFAULT_RULES,
    )
    assert limits == {"memory": 1024**3 + 160 * 1024**2}


def test_a_pod_level_request_alone_raises_the_value_but_never_lowers_it():
    small = spec([container(limits={"cpu": "1"})])
    small["resources"] = {"requests": {"cpu": "2"}}
    assert pod_limits(small, None, DEFAULT_RULES) == {"cpu": 2000}
    big = spec([container(limits={"cpu": "3"})])
    big["resources"] = {"requests": {"cpu": "2"}}
    assert pod_limits(big, None, DEFAULT_RULES) == {"cpu": 3000}


def test_a_pod_level_limit_replaces_even_a_larger_container_sum_and_takes_overhead():
    body = spec(
        [container("a", limits={"cpu": "2"}), container("b", limits={"cpu": "2"})], overhead={"cpu": "100m"}
    )
    body["resources"] = {"limits": {"cpu": "2"}}
    assert pod_limits(body, None, DEFAULT_RULES) == {"cpu": 2100}


def test_memoised_amounts_tell_resize_statuses_apart():
    from limitguard.core.podlimits import pod_amounts

    body = spec([container("a", limits={"cpu": "1"})])
    running_more = {"containerStatuses": [{"name": "a", "resources": {"limits": {"cpu": "3"}}}]}
    infeasible = {
        **running_more,
        "conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
    }
    upsize = spec([container("a", limits={"cpu": "4"})])
    assert pod_amounts(body, None, DEFAULT_RULES).limits == {"cpu": 1000}
    assert pod_amounts(body, running_more, DEFAULT_RULES).limits == {"cpu": 3000}  # a pending downsize
    assert pod_amounts(upsize, running_more, DEFAULT_RULES).limits == {"cpu": 4000}  # a pending upsize
    assert pod_amounts(upsize, infeasible, DEFAULT_RULES).limits == {"cpu": 3000}  # only what runs
    assert pod_amounts(body, None, DEFAULT_RULES).limits == {"cpu": 1000}  # the memo kept them apart


def test_an_empty_status_resources_object_still_counts_allocated_resources():
    """Upstream tests cs.Resources != nil: an empty object still brings allocatedResources in."""
    body = spec([container("a", requests={"cpu": "1"})])
    status = {"containerStatuses": [{"name": "a", "resources": {}, "allocatedResources": {"cpu": "2"}}]}
    assert pod_requests(body, status=status, rules=DEFAULT_RULES) == {"cpu": 2000}
    assert pod_requests(body, status={"containerStatuses": [{"name": "a"}]}, rules=DEFAULT_RULES) == {
        "cpu": 1000
    }


@pytest.mark.parametrize(
    ("pod_spec", "sources"),
    [
        (spec([container(limits={"cpu": "4"})]), {}),
        (spec([container(requests={"cpu": "4", "memory": "1Gi"})]), {"cpu": "request", "memory": "request"}),
        (
            spec(
                [container("a", requests={"cpu": "4"}), container("b", limits={"cpu": "2", "memory": "1Gi"})]
            ),
            {"cpu": "limit-and-request"},
        ),
        # the init container's request is below the regular container's limit: the limit alone counts
        (spec([container(limits={"cpu": "4"})], init=[container("init", requests={"cpu": "2"})]), {}),
        (
            {"containers": [container(limits={"cpu": "2"})], "resources": {"requests": {"cpu": "3"}}},
            {"cpu": "limit-and-request"},
        ),
        ({"containers": [container(requests={"cpu": "1"})], "resources": {"limits": {"cpu": "3"}}}, {}),
    ],
)
def test_sources_name_the_limits_that_count_requests(pod_spec, sources):
    """A message about a pod's limit says when what it counts is a request (no limit set)."""
    assert dict(pod_amounts(pod_spec, None, DEFAULT_RULES).sources) == sources
