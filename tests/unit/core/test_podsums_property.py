"""Properties of the release rules over generated pods (containers, sidecars, init containers,
resize status with and without allocatedResources, Infeasible or not).

- Without any resize status, every release counts the same: the rules differ only during resizes.
- 1.37's max of sums never exceeds the sum of per-container maxima of earlier releases (unless a
  non-sidecar init container reports status, which only 1.37 reads), and never falls below the spec
  sum while the resize is feasible.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from limitguard.core.podresources import parse_pod_resources, with_api_defaults
from limitguard.core.podrules import RULES
from limitguard.core.podsums import aggregate_containers, guard_limits, upstream_limits

CPU = st.sampled_from(["100m", "500m", "1", "2", "4"])


def amounts():
    return st.fixed_dictionaries({}, optional={"cpu": CPU, "memory": st.sampled_from(["64Mi", "1Gi"])})


@st.composite
def pods(draw, with_status: bool = True):
    def containers(prefix: str, low: int, high: int, init: bool) -> list[dict]:
        made = []
        for index in range(draw(st.integers(low, high))):
            body = {
                "name": f"{prefix}{index}",
                "resources": {"requests": draw(amounts()), "limits": draw(amounts())},
            }
            if init and draw(st.booleans()):
                body["restartPolicy"] = "Always"
            made.append(body)
        return made

    spec = {"containers": containers("c", 1, 3, False), "initContainers": containers("i", 0, 2, True)}
    status: dict = {"containerStatuses": [], "initContainerStatuses": []}
    if with_status:
        for field, key in (("containers", "containerStatuses"), ("initContainers", "initContainerStatuses")):
            for body in spec[field]:
                if draw(st.booleans()):
                    entry = {"name": body["name"], "resources": {"limits": draw(amounts())}}
                    if draw(st.booleans()):
                        entry["allocatedResources"] = draw(amounts())
                    status[key].append(entry)
        if draw(st.booleans()):
            status["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    return spec, status


@settings(max_examples=300, deadline=None)
@given(pods(with_status=False))
def test_without_resize_status_every_release_counts_the_same(pod):
    model = with_api_defaults(parse_pod_resources(*pod))
    counted = {minor: guard_limits(model, rules=rules) for minor, rules in RULES.items()}
    assert len({tuple(sorted(value.items())) for value in counted.values()}) == 1


@settings(max_examples=300, deadline=None)
@given(pods())
def test_the_137_sum_lies_between_one_states_sum_and_the_sum_of_maxima(pod):
    model = parse_pod_resources(*pod)
    new = upstream_limits(model, rules=RULES[37], exclude_overhead=True)
    old = upstream_limits(model, rules=RULES[36], exclude_overhead=True)
    if not any(c.reported for c in model.init_containers if not c.sidecar):  # read from 1.37 only
        for name, amount in new.items():
            assert amount <= old.get(name, 0)
    if not model.resize_infeasible:
        spec_sum = aggregate_containers(model.containers, model.init_containers, lambda c: c.limits)
        for name, amount in spec_sum.items():
            assert new.get(name, 0) >= amount
