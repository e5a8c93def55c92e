"""docs/metrics.md is the catalogue of /metrics: every family a running server exposes has its row
there (name, type, labels), and every row names a family the server exposes.

The server is the whole `limitguard serve` in live mode against the fake API server, as two replicas
(so the leader, forwarding and catch-up families exist), with reports and events on (their families)
and a ratio'd node (the per-node gauges), and one request on every route (the request path's
counters are created by their first answer)."""

from __future__ import annotations

import re

import orjson
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.kube.replicaset import ReplicaSet, cluster
from tests.support import REPO, binding

CATALOGUE = REPO / "docs" / "metrics.md"
ROW = re.compile(r"^\| `(?P<name>limitguard_[a-z_]+)` \| (?P<type>\w+) \| (?P<labels>[^|]*) \|")


def catalogue() -> dict[str, tuple[str, frozenset[str]]]:
    """Family name (as the client library names it: a counter without `_total`) -> (type, labels)."""
    rows: dict[str, tuple[str, frozenset[str]]] = {}
    for line in CATALOGUE.read_text().splitlines():
        row = ROW.match(line)
        if row is None:
            continue
        kind = row["type"]
        name = row["name"].removesuffix("_total") if kind == "counter" else row["name"]
        assert name not in rows, f"metrics.md lists {row['name']} twice"
        rows[name] = (kind, frozenset(re.findall(r"`([a-z_]+)`", row["labels"])))
    return rows


def served(text: str) -> dict[str, tuple[str, frozenset[str]]]:
    """Family name -> (type, the labels its series carry); a counter's `_created` series (the text
    format shows them as a gauge family of their own) belong to the counter."""
    families = {}
    for family in text_string_to_metric_families(text):
        labels = {label for sample in family.samples for label in sample.labels} - {"le"}
        families[family.name] = (family.type, frozenset(labels))
    return {
        name: kind
        for name, kind in families.items()
        if not (name.endswith("_created") and name.removesuffix("_created") in families)
    }


async def scrape(replicas: ReplicaSet, url: str) -> str:
    assert replicas.session is not None
    async with replicas.session.get(url + "/metrics") as answer:
        assert answer.status == 200
        return await answer.text()


async def touch_every_route(replicas: ReplicaSet, url: str) -> None:
    """One answer on each route, and one bad request, so each request-path family has a sample."""
    assert replicas.session is not None
    json = {"Content-Type": "application/json"}
    for route in ("/validate", "/mutate"):
        async with replicas.session.post(
            url + route, data=orjson.dumps(binding("p-000", "node1")), headers=json
        ):
            pass
        async with replicas.session.post(url + route, data=b"{", headers=json):
            pass
    args = {"Pod": {"metadata": {"name": "x", "namespace": "default"}, "spec": {}}, "NodeNames": ["node1"]}
    for verb in ("filter", "prioritize"):
        async with replicas.session.post(url + f"/extender/{verb}", data=orjson.dumps(args), headers=json):
            pass


async def test_the_catalogue_and_a_running_server_name_the_same_families(replicas: ReplicaSet) -> None:
    cluster(replicas.apiserver, "8", 3)
    await replicas.start(2, settings={"reports": {"enabled": True}, "events": {"enabled": True}})
    leader = await replicas.elected()
    follower = next(member for member in replicas.members if member is not leader)
    await replicas.bind(follower, "p-000")  # forwarded to the leader: the forwarding families
    families: dict[str, tuple[str, frozenset[str]]] = {}
    for member in replicas.members:
        await touch_every_route(replicas, member.url)
        for name, (kind, labels) in served(await scrape(replicas, member.url)).items():
            known = families.get(name, (kind, frozenset()))
            families[name] = (kind, known[1] | labels)
    rows = catalogue()
    assert sorted(set(families) - set(rows)) == [], "served but not in docs/metrics.md"
    assert sorted(set(rows) - set(families)) == [], "in docs/metrics.md but not served"
    for name, (kind, labels) in families.items():
        documented_kind, documented_labels = rows[name]
        assert kind == documented_kind, f"{name}: served as a {kind}, documented as a {documented_kind}"
        # A family with no series yet shows no labels: what it shows must be documented.
        assert labels <= documented_labels, (
            f"{name}: labels {sorted(labels - documented_labels)} undocumented"
        )
