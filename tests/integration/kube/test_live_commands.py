"""`limitguard audit` and `explain` against a live cluster (the fake API server), not a file."""

from __future__ import annotations

import argparse
import asyncio
import json

from limitguard.cli import audit as audit_command
from limitguard.cli import explain as explain_command
from limitguard.testing.builders import make_namespace, make_node, make_pod
from tests.integration.kube.helpers import TOKEN, write_kubeconfig


def parse(module, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    return parser.parse_args(argv)


async def test_audit_and_explain_list_the_live_cluster_once(apiserver, tmp_path, capsys):
    apiserver.apply("namespaces", make_namespace("default"))
    apiserver.apply("nodes", make_node("full", cpu="4"))
    apiserver.apply("nodes", make_node("roomy", cpu="16"))
    apiserver.apply("pods", make_pod("default", "big", "full", cpu_limit="6"))
    url = await apiserver.start()
    kubeconfig = write_kubeconfig(tmp_path, url, token=TOKEN)
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\n"
        "limitAware: {defaultLimitToAllocatableRatio: {cpu: 125}}\n"
    )
    common = [
        "--kubeconfig",
        kubeconfig,
        "--config",
        str(config),
        "--timeout",
        "120",
        "-o",
        "json",
    ]  # a hang guard

    # The commands run their own event loop; the fake API server runs on this one.
    code = await asyncio.to_thread(audit_command.run, parse(audit_command, common))
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert (report["nodesChecked"], report["nodesOver"]) == (2, 1)
    assert [finding["node"] for finding in report["findings"]] == ["full"]  # 6 cpu of capacity 5

    pod = tmp_path / "pod.yaml"
    pod.write_text(json.dumps(make_pod("default", "new", "", cpu_limit="2", phase="Pending")))
    code = await asyncio.to_thread(explain_command.run, parse(explain_command, [str(pod), *common]))
    explanation = json.loads(capsys.readouterr().out)
    assert code == 0
    fits = {row["node"]: row["fits"] for row in explanation["nodes"]}
    assert fits == {"full": False, "roomy": True}


async def test_unreachable_cluster_is_exit_2(tmp_path, capsys):
    kubeconfig = write_kubeconfig(tmp_path, "http://127.0.0.1:9", token=TOKEN)  # nothing listens there
    code = await asyncio.to_thread(
        audit_command.run, parse(audit_command, ["--kubeconfig", kubeconfig, "--timeout", "1"])
    )
    assert code == 2
    assert "limitguard audit:" in capsys.readouterr().err
