"""The chart's values schema reports every refused `config.*` value in one `helm template` run, as
limitguard's own loader does for the file: problems in four sections of the configuration need one
round of edits, not four."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.chart.conftest import CHART, NAMESPACE, RELEASE, Helm

FOUR_SECTIONS = """\
config:
  limitAware:
    enforcement: Dent
    nodePools:
    - {name: GPU, nodeSelector: {}, limitToAllocatableRatio: {cpu: 150}}
  placementHints: {weight: 1000}
  replicas: {forwardTimeoutSeconds: 0}
  liveState: {notReadyAfterSeconds: 1}
"""


def test_every_refused_config_value_is_reported_in_one_run(helm: Helm, tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(FOUR_SECTIONS)
    result = helm.run(
        "template", RELEASE, str(CHART), "--namespace", NAMESPACE, "-f", str(values), check=False
    )
    assert result.returncode != 0
    for where in (
        "/config/limitAware/enforcement",
        "/config/limitAware/nodePools/0/name",
        "/config/placementHints/weight",
        "/config/replicas/forwardTimeoutSeconds",
        "/config/liveState/notReadyAfterSeconds",
    ):
        assert where in result.stderr, f"{where} not reported:\n{result.stderr}"
