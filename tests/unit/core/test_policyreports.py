"""Policy report objects: both APIs' upstream CRD schemas accept them, result IDs are stable, upgrade
readiness says what the next release adds."""

from __future__ import annotations

from typing import Any

import pytest

from limitguard.core.config import Enforcement, LimitAwareConfig, ReportsApi
from limitguard.core.pools import ANNOTATION
from limitguard.core.reports.audit import PodShare
from limitguard.core.reports.policyreport import (
    REPORT_APIS,
    ObjectRef,
    Result,
    result_id,
    steady,
)
from limitguard.core.reports.ratioreports import (
    PodViolation,
    node_report,
    node_rows,
    over_resources,
    pod_report,
    pod_violation_rows,
    top_holders,
)
from limitguard.core.reports.schedreports import configmap_report, configmap_scope, upgrade_results, verdict
from limitguard.schedcfg import Finding
from limitguard.state.records import node_record
from limitguard.testing.builders import node
from tests.reportschemas import schema_validator

CONFIG = LimitAwareConfig(default_ratios={"cpu": 100, "memory": 100})


def error(path: str, rule: str, severity: str = "error") -> Finding:
    return Finding(severity, path, f"{rule} at {path}", rule)


def sample_reports(api: ReportsApi) -> list[tuple[bool, dict[str, Any]]]:
    info = REPORT_APIS[api]
    record = node_record(node("n1", cpu="4", memory="8Gi", uid="uid-n1"))
    rows = node_rows(record, {"cpu": 6000, "memory": 1 << 30}, CONFIG)
    holders = top_holders(
        [PodShare("shop/a", {"cpu": 4000}), PodShare("shop/b", {"cpu": 2000})], over_resources(rows)
    )
    scope = ObjectRef("v1", "Pod", "a", "shop", "uid-a")
    violation = PodViolation(
        scope, "n1", Enforcement.WARN, {"cpu": 4000}, pod_violation_rows({"cpu": 4000}, rows)
    )
    current = verdict("1.35", "kube-scheduler", [error("data[c].x", "fit.ratio", "warning")])
    upcoming = verdict("1.36", "kube-scheduler", [error("data[c].x", "fit.ratio")])
    configmap = configmap_report(info, configmap_scope("sched", "cfg", "uid-cm"), current, upcoming, "1.36")
    return [
        (False, node_report(info, record, "uid-n1", rows, holders)),
        (True, pod_report(info, violation)),
        (True, configmap),
    ]


@pytest.mark.parametrize("api", list(ReportsApi))
def test_the_upstream_crd_schemas_accept_every_report(api: ReportsApi) -> None:
    for namespaced, report in sample_reports(api):
        problems = [e.message for e in schema_validator(api, namespaced).iter_errors(report)]
        assert not problems, (report["kind"], problems)
        assert report["kind"] == REPORT_APIS[api].kind(namespaced)
        assert all(r["source"] == "limitguard" for r in report["results"])
        assert all(isinstance(v, str) for r in report["results"] for v in r["properties"].values())


@pytest.mark.parametrize("api", list(ReportsApi))
def test_the_schema_check_has_teeth(api: ReportsApi) -> None:
    """A status outside the enum, or a property that is not a string, is refused."""
    _, report = sample_reports(api)[0]
    report["results"][0]["result"] = "failed"
    report["results"][1]["properties"]["limitCapacity"] = 10
    assert len(list(schema_validator(api, namespaced=False).iter_errors(report))) == 2


def test_only_openreports_carries_a_top_level_source_and_configuration() -> None:
    _, pod_open = sample_reports(ReportsApi.OPENREPORTS)[1]
    _, pod_wg = sample_reports(ReportsApi.WGPOLICYK8S)[1]
    assert pod_open["source"] == "limitguard"
    assert pod_open["configuration"] == {"limits": {"statusFilter": ["warn", "fail"]}}
    assert "source" not in pod_wg and "configuration" not in pod_wg


def test_node_results_name_the_top_holders_on_a_fail_only() -> None:
    _, report = sample_reports(ReportsApi.OPENREPORTS)[0]
    results = {r["rule"]: r for r in report["results"]}
    assert results["cpu"]["result"] == "fail" and results["cpu"]["properties"]["topPods"] == "shop/a, shop/b"
    assert results["memory"]["result"] == "pass" and "topPods" not in results["memory"]["properties"]
    assert report["summary"] == {"pass": 1, "fail": 1, "warn": 0, "error": 0, "skip": 0}


def test_a_result_id_names_what_it_is_about_not_its_numbers() -> None:
    scope = ObjectRef("v1", "Node", "n1", "", "uid-n1")

    def result(message: str, status: str = "fail", subject: str = "cpu") -> Result:
        return Result("node-limit-ratio", subject, status, "medium", "Limit ratio", message, subject)

    assert result_id(scope, result("cpu limits 12 exceed 10")) == result_id(
        scope, result("cpu limits 13 exceed 10")
    )
    assert result_id(scope, result("x")) != result_id(scope, result("x", status="pass"))
    assert result_id(scope, result("x")) != result_id(scope, result("x", subject="memory"))
    other = ObjectRef("v1", "Node", "n1", "", "uid-n1-recreated")
    assert result_id(scope, result("x")) != result_id(other, result("x"))


def test_steady_content_ignores_the_numbers_that_move_with_every_pod() -> None:
    info = REPORT_APIS[ReportsApi.OPENREPORTS]
    record = node_record(node("n1", cpu="4", uid="uid-n1"))

    def report(allocated: int, percent: int = 100) -> dict[str, Any]:
        config = LimitAwareConfig(default_ratios={"cpu": percent})
        return node_report(info, record, "uid-n1", node_rows(record, {"cpu": allocated}, config), {})

    assert report(1000) != report(2000)
    assert steady(report(1000)) == steady(report(2000))  # only allocatedLimits and the message moved
    assert steady(report(1000)) != steady(report(5000))  # pass -> fail
    assert steady(report(1000)) != steady(report(1000, 150))  # a new ratio and capacity


def test_upgrade_readiness_counts_what_the_next_release_adds() -> None:
    current = verdict("1.35", "kube-scheduler", [error("a", "fit.ratio", "warning"), error("b", "old.error")])
    upcoming = verdict("1.36", "kube-scheduler", [error("a", "fit.ratio"), error("b", "old.error")])
    results = upgrade_results(current, upcoming, "1.36")
    # the warning that becomes an error is new; the error already failing now is not repeated
    assert [(r.rule, r.result, r.subject) for r in results] == [("fit.ratio", "fail", "a")]
    clean = verdict("1.36", "kube-scheduler", [])
    assert [(r.rule, r.result) for r in upgrade_results(clean, clean, "1.37")] == [("ready", "pass")]
    assert [(r.rule, r.result) for r in upgrade_results(clean, None, "1.38")] == [("ready", "skip")]


def test_errors_under_a_guessed_scheduler_are_warnings() -> None:
    guessed = verdict("1.37", "kube-scheduler", [error("a", "x")], certain=False)
    info = REPORT_APIS[ReportsApi.OPENREPORTS]
    report = configmap_report(info, configmap_scope("s", "c", "u"), guessed, None, "1.38")
    (first, _) = report["results"]
    assert (first["result"], first["properties"]["schedulerCertain"]) == ("warn", "false")


def test_a_node_with_a_malformed_annotation_says_so() -> None:
    record = node_record(
        node("n1", cpu="4", uid="u", annotations={"node.koordinator.sh/limit-to-allocatable": "{"})
    )
    assert record.ratio_source != ANNOTATION
    report = node_report(REPORT_APIS[ReportsApi.OPENREPORTS], record, "u", node_rows(record, {}, CONFIG), {})
    assert all("malformed" in r["properties"]["ratioWarning"] for r in report["results"])
