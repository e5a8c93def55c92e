"""`limitguard explain` and `limitguard audit` on a four-node cluster file, numbers by hand.

cluster.yaml: ratios cpu 125% / memory 120% (config.yaml); node-c's annotation makes them 150% / 100%.
"""

import json
from pathlib import Path

import pytest

from limitguard.cli import audit as audit_command
from limitguard.cli import explain as explain_command
from tests.support import run_command as run

HERE = Path(__file__).resolve().parent
CLUSTER, CONFIG, POD = HERE / "cluster.yaml", HERE / "config.yaml", HERE / "web.yaml"


def explain_json(capsys, *extra: str) -> dict:
    code, out, _ = run(
        explain_command,
        [str(POD), "--cluster", str(CLUSTER), "--config", str(CONFIG), "-o", "json", *extra],
        capsys,
    )
    assert code == 0
    return json.loads(out)


def test_explain_reports_eligibility_sums_and_fit_per_node(capsys):
    report = explain_json(capsys)
    nodes = {row["node"]: row for row in report["nodes"]}
    assert report["limits"] == {"cpu": "4", "memory": "2Gi"}
    cpu = {name: next(r for r in row["resources"] if r["resource"] == "cpu") for name, row in nodes.items()}
    # node-a: 6 + 4 + DaemonSet 2 = 12 before, 16 after, capacity 8 x 125% = 10
    assert (cpu["node-a"]["before"], cpu["node-a"]["after"], cpu["node-a"]["capacity"]) == ("12", "16", "10")
    assert nodes["node-a"]["fits"] is False
    assert nodes["node-a"]["shortfalls"] == [
        "cpu limit 4 exceeds remaining 0 (allocated 12 of capacity 10 = 8 allocatable x 125% (cluster default))"
    ]
    # node-c: the annotation replaces the default: 16 x 150% = 24, memory 64Gi x 100%
    assert (cpu["node-c"]["capacity"], cpu["node-c"]["ratioPercent"]) == ("24", 150)
    memory_c = next(r for r in nodes["node-c"]["resources"] if r["resource"] == "memory")
    assert (memory_c["before"], memory_c["after"], memory_c["capacity"]) == ("8Gi", "10Gi", "64Gi")
    # node-d fits but its taint makes it ineligible
    assert (nodes["node-d"]["eligible"], nodes["node-d"]["fits"]) == (False, True)
    assert nodes["node-d"]["ineligibleReason"] == "untolerated taint dedicated:NoSchedule"


def test_explain_shows_each_nodes_room_labels_beside_its_true_room(capsys):
    nodes = {row["node"]: row["roomLabels"] for row in explain_json(capsys)["nodes"]}
    # node-b: 10 cpu of capacity, 5 counted: 5000 millicores left, its label still says 1500
    assert nodes["node-b"]["cpu"] == {"labelled": "1500", "true": "5000", "unit": "millicores"}
    assert nodes["node-a"]["cpu"] == {"labelled": None, "true": "0", "unit": "millicores"}  # over: 0
    assert nodes["node-c"]["memory"] == {
        "labelled": None,
        "true": str(56 * 1024),
        "unit": "MiB",
    }  # 64Gi - 8Gi
    code, out, _ = run(
        explain_command, [str(POD), "--cluster", str(CLUSTER), "--config", str(CONFIG)], capsys
    )
    assert code == 0
    (line,) = [line for line in out.splitlines() if line.startswith("  node-b ") and "/ 5000" in line]
    assert "1500 / 5000 (behind)" in line


def test_explain_scores_only_the_candidates_the_scheduler_would_send(capsys):
    nodes = {row["node"]: row for row in explain_json(capsys)["nodes"]}
    assert nodes["node-a"]["scores"] == {} and nodes["node-d"]["scores"] == {}
    b, c = nodes["node-b"]["scores"], nodes["node-c"]["scores"]
    # LimitAware raw: node-b cpu (10-9)*100/10 = 10, memory (38.4Gi-4Gi)*100/38.4Gi = 89 -> 49;
    # node-c cpu (24-12)*100/24 = 50, memory (64-10)*100/64 = 84 -> 67; min-max -> 0 / 100
    assert (b["LimitAware"], c["LimitAware"]) == ({"raw": 49, "score": 0}, {"raw": 67, "score": 100})
    # FitPlus cpu/memory LeastAllocated: node-b cpu (8-2.5)/8 = 68, memory (32-2)/32 = 93 -> 80;
    # node-c cpu (16-5)/16 = 68, memory (64-5)/64 = 92 -> 80
    assert (b["NodeResourcesFitPlus"]["score"], c["NodeResourcesFitPlus"]["score"]) == (80, 80)
    # ScarceResourceAvoidance: node-c's GPUs are all the pod leaves unused -> 0
    assert (b["ScarceResourceAvoidance"]["score"], c["ScarceResourceAvoidance"]["score"]) == (100, 0)
    # PodState: node-b 1 terminating -> +1, node-c 1 nominated -> -1
    assert (b["PodState"], c["PodState"]) == ({"raw": 1, "score": 100}, {"raw": -1, "score": 0})
    # only LimitAware counts by default
    assert (nodes["node-b"]["extenderScore"], nodes["node-c"]["extenderScore"]) == (0, 10)


def test_explain_with_configured_scorers(tmp_path, capsys):
    config = tmp_path / "config.yaml"
    config.write_text(
        CONFIG.read_text()
        + "extender:\n  scorers:\n  - {name: LimitAware, weight: 1}\n  - {name: ScarceResourceAvoidance, weight: 1}\n"
        "  - {name: PodState, weight: 2}\n"
    )
    nodes = {row["node"]: row for row in explain_json(capsys, "--config", str(config))["nodes"]}
    # node-b (0 + 100 + 2*100)/4 = 75, node-c (100 + 0 + 0)/4 = 25
    assert (nodes["node-b"]["total"], nodes["node-c"]["total"]) == (75, 25)
    assert (nodes["node-b"]["extenderScore"], nodes["node-c"]["extenderScore"]) == (7, 2)


def test_explain_text_is_a_table(capsys):
    code, out, _ = run(
        explain_command, [str(POD), "--cluster", str(CLUSTER), "--config", str(CONFIG)], capsys
    )
    assert code == 0
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("NODE"))
    assert header.split() == [
        "NODE", "ELIGIBLE", "FITS", "RATIOS", "CPU(cores)", "BEFORE->AFTER/CAP", "MEMORY(Gi)", "BEFORE->AFTER/CAP",
        "LA", "NRFP", "SRA", "PS", "TOTAL", "EXT",
    ]  # fmt: skip
    row = next(line for line in lines if line.startswith("node-c"))
    assert row.split() == [
        "node-c",
        "yes",
        "yes",
        "annotation",
        "8->12/24",
        "(150%)",
        "8->10/64",
        "(100%)",
        "100",
        "80",
        "0",
        "0",
        "100",
        "10",
    ]
    assert (
        "  node-a: cpu limit 4 exceeds remaining 0 (allocated 12 of capacity 10 = 8 allocatable x 125% "
        "(cluster default))" in lines
    )
    # One unit per column: memory in Gi everywhere (32Gi x 120% = 38.4Gi is not whole), cpu in cores.
    node_b = next(line for line in lines if line.startswith("node-b")).split()
    assert node_b[3:8] == ["default", "5->9/10", "(125%)", "2->4/~38.4", "(120%)"]
    # node-d is tainted: no fit verdict, and only the reason it is out in "why".
    assert next(line for line in lines if line.startswith("node-d")).split()[:3] == ["node-d", "no", "-"]
    assert [line for line in lines if line.startswith("  node-d:")] == [
        "  node-d: not eligible: untolerated taint dedicated:NoSchedule"
    ]


def test_explain_of_a_pod_with_a_node_name_judges_that_node_alone(tmp_path, capsys):
    """spec.nodeName bypasses the scheduler: the other nodes are not eligible and nothing is scored."""
    pod = tmp_path / "bound.yaml"
    pod.write_text(POD.read_text().replace("spec:\n", "spec:\n  nodeName: node-b\n", 1))
    code, out, _ = run(
        explain_command, [str(pod), "--cluster", str(CLUSTER), "--config", str(CONFIG), "-o", "json"], capsys
    )
    assert code == 0
    report = json.loads(out)
    rows = {row["node"]: row for row in report["nodes"]}
    assert [name for name, row in rows.items() if row["eligible"]] == ["node-b"]
    assert rows["node-a"]["ineligibleReason"] == "the pod names node node-b (spec.nodeName)"
    assert all(row["scores"] == {} and row["extenderScore"] is None for row in rows.values())
    assert any("spec.nodeName is node-b" in note for note in report["notes"])


def test_explain_names_a_request_counted_as_the_limit(tmp_path, capsys):
    """No cpu limit: the cpu request (4) is what counts, and explain says so in text and JSON."""
    pod = tmp_path / "requests.yaml"
    pod.write_text(
        POD.read_text()
        .replace('requests: {cpu: "1", memory: 1Gi}', 'requests: {cpu: "4", memory: 1Gi}')
        .replace('limits: {cpu: "4", memory: 2Gi}', "limits: {memory: 2Gi}")
    )
    arguments = [str(pod), "--cluster", str(CLUSTER), "--config", str(CONFIG)]
    code, out, _ = run(explain_command, [*arguments, "-o", "json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert (report["limits"], report["limitSources"]) == ({"cpu": "4", "memory": "2Gi"}, {"cpu": "request"})
    node_a = next(row for row in report["nodes"] if row["node"] == "node-a")
    assert node_a["shortfalls"] == [
        "cpu limit 4 (its request; no limit set) exceeds remaining 0 (allocated 12 of capacity 10 = 8 allocatable x 125% (cluster default))"
    ]
    code, out, _ = run(explain_command, arguments, capsys)
    assert "  limits:           cpu 4 (its request; no limit set), memory 2Gi\n" in out
    assert "  node-a: cpu limit 4 (its request; no limit set) exceeds remaining 0" in out


def test_explain_counts_a_best_effort_pod_with_the_defaults_its_namespace_gives(tmp_path, capsys):
    """The mutating webhook's rules decide: defaults only in a namespace labelled
    limitguard.io/defaults=enabled; then explain counts the injected limits."""
    pod = tmp_path / "bare.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: bare, namespace: default}\n"
        "spec:\n  containers: [{name: app, image: nginx}]\n"
    )
    argv = [str(pod), "--config", str(CONFIG), "-o", "json"]
    code, out, _ = run(explain_command, [*argv, "--cluster", str(CLUSTER)], capsys)
    assert code == 0 and json.loads(out)["limits"] == {}  # "default" did not opt in: unlimited
    opted_in = tmp_path / "cluster.yaml"
    opted_in.write_text(
        CLUSTER.read_text().replace(
            "{apiVersion: v1, kind: Namespace, metadata: {name: default}}",
            "{apiVersion: v1, kind: Namespace, metadata: {name: default, labels: {limitguard.io/defaults: enabled}}}",
        )
    )
    code, out, _ = run(explain_command, [*argv, "--cluster", str(opted_in)], capsys)
    report = json.loads(out)
    assert report["limits"] == {"cpu": "500m", "memory": "512Mi"}
    assert report["notes"][0].startswith("best-effort pod: counted with the defaults")
    cpu_b = next(
        r
        for r in {row["node"]: row for row in report["nodes"]}["node-b"]["resources"]
        if r["resource"] == "cpu"
    )
    assert (cpu_b["before"], cpu_b["after"]) == ("5", "5500m")


def test_explain_errors_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: ConfigMap\n")
    code, _, err = run(explain_command, [str(bad), "--cluster", str(CLUSTER)], capsys)
    assert code == 2 and "expected a Pod with a spec" in err
    code, _, err = run(explain_command, [str(POD), "--cluster", str(tmp_path / "none.yaml")], capsys)
    assert code == 2 and "cannot read" in err


def test_audit_finds_the_node_over_its_ratio_and_exits_1(capsys):
    code, out, _ = run(
        audit_command, ["--cluster", str(CLUSTER), "--config", str(CONFIG), "-o", "json"], capsys
    )
    assert code == 1
    report = json.loads(out)
    assert (report["nodesChecked"], report["nodesOver"]) == (4, 1)
    (finding,) = report["findings"]
    assert finding["node"] == "node-a"
    assert finding["over"] == [
        {
            "resource": "cpu",
            "allocated": "12",
            "capacity": "10",
            "excess": "2",
            "allocatable": "8",
            "ratioPercent": 125,
            "actualPercent": 150.0,
        }
    ]
    assert [(p["pod"], p["limits"], p["daemonSet"]) for p in finding["topPods"]] == [
        ("default/a1", {"cpu": "6"}, False),
        ("default/a2", {"cpu": "4"}, False),
        ("default/agent-x7k2p", {"cpu": "2"}, True),
    ]


def test_audit_text_and_top(capsys):
    code, out, _ = run(
        audit_command, ["--cluster", str(CLUSTER), "--config", str(CONFIG), "--top", "1"], capsys
    )
    assert code == 1
    assert out.splitlines()[:5] == [
        "1 of 4 checked nodes are over their limit-to-allocatable ratio",
        "",
        "node node-a",
        "  over: cpu limits 12 exceed capacity 10 by 2 (150% of 8 allocatable, ratio 125% (cluster default))",
        "  pods contributing most:",
    ]
    assert out.splitlines()[5] == "    default/a1  cpu 6"
    assert "a2" not in out


@pytest.mark.parametrize("ratio", ["150", "200"])
def test_audit_exits_0_when_every_node_is_within(tmp_path, capsys, ratio):
    config = tmp_path / "config.yaml"
    config.write_text(  # node-a: 8 x 150% = 12 holds its 12
        "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\n"
        f"limitAware:\n  defaultLimitToAllocatableRatio: {{cpu: {ratio}}}\n"
    )
    code, out, _ = run(audit_command, ["--cluster", str(CLUSTER), "--config", str(config)], capsys)
    assert (code, out) == (0, "all 4 checked nodes are within their limit-to-allocatable ratio\n")
