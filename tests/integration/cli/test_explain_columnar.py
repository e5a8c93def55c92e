"""explain scores its candidates on the node table exactly as the per-node reference does."""

from pathlib import Path

from limitguard.cli.configfile import load_config
from limitguard.core.podlimits import pod_limits
from limitguard.core.podrules import DEFAULT_RULES
from limitguard.core.reports.explain import explain_pod
from limitguard.core.scoring import PodFacts, with_all_scorers
from limitguard.extender.columnar import score_rows
from limitguard.extender.facts import NodeFactsReader
from limitguard.kube.filefeed import load_cluster_file
from limitguard.state.store import ClusterState

HERE = Path(__file__).parent


def test_table_scores_equal_the_reference_scores_in_explain():
    state = ClusterState()
    load_cluster_file(state, HERE / "cluster.yaml")
    config = load_config(None)
    scorers = with_all_scorers(config.scorers)
    pod = {
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]},
    }
    facts = PodFacts.from_spec(pod["spec"], None, DEFAULT_RULES)
    reader = NodeFactsReader(state)
    used: list[int] = []

    def score(nodes):
        names = [node.traits.name for node in nodes]
        table = state.node_table()
        scored = score_rows(
            table, table.node_rows(names), names, facts, scorers, config.limit_aware.default_ratios
        )
        used.append(len(names))
        return scored.to_sheet()

    arguments = (
        pod,
        pod_limits(pod["spec"], None, DEFAULT_RULES),
        facts,
        list(state.nodes()),
        state.allocated,
        reader.facts,
    )
    on_table = explain_pod(*arguments, config.limit_aware, scorers, score=score)
    reference = explain_pod(*arguments, config.limit_aware, scorers)
    assert used and used[0] > 1  # the table scored several candidates
    assert on_table.to_dict() == reference.to_dict()
