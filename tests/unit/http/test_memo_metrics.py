"""Every memo's counters on /metrics, read at scrape time and summed by memo name."""

from __future__ import annotations

import shutil
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from prometheus_client import CollectorRegistry

from limitguard.core.memo import KiB, Memo, live_memos
from limitguard.http.memo_metrics import MemoCollector
from limitguard.http.peers import PeerGate
from limitguard.testing.clientcerts import client_pair
from tests.integration.http.certificates import CLIENT, certificate_dir


def test_the_collector_sums_memos_of_one_name_at_scrape_time() -> None:
    registry = CollectorRegistry()
    registry.register(MemoCollector())
    first, second = (Memo("collector-test", entries=8, max_bytes=64 * KiB) for _ in range(2))
    first.put(("a",), 1)
    second.put(("b",), 2)
    first.get(("a",))
    second.get(("missing",))
    value = registry.get_sample_value
    assert value("limitguard_memo_entries", {"memo": "collector-test"}) == 2
    assert value("limitguard_memo_hits_total", {"memo": "collector-test"}) == 1
    assert value("limitguard_memo_misses_total", {"memo": "collector-test"}) == 1
    assert value("limitguard_memo_max_bytes", {"memo": "collector-test"}) == 128 * KiB
    assert (
        value("limitguard_memo_bytes", {"memo": "collector-test"})
        == first.stats().bytes + second.stats().bytes
    )


def _counts(name: str) -> tuple[int, int]:
    """Hits and misses of every live memo called *name*."""
    named = [stats for stats in live_memos() if stats.name == name]
    return sum(stats.hits for stats in named), sum(stats.misses for stats in named)


class _Peer:
    """What a PeerGate reads of a request: its connection's verified certificate."""

    def __init__(self, der: bytes) -> None:
        self.transport = self
        self._der = der

    def get_extra_info(self, name: str) -> object:
        return self if name == "ssl_object" else None

    def getpeercert(self, binary_form: bool) -> bytes:
        return self._der


def test_a_peer_gate_keeps_its_verdicts_in_a_memo_and_forgets_them_when_its_ca_reloads(
    tmp_path: Path,
) -> None:
    first_ca = certificate_dir(tmp_path / "first")
    other_ca = certificate_dir(tmp_path / "other")
    cert_file, _ = client_pair(tmp_path / "clients", "apiserver", first_ca, "apiserver", [], CLIENT)
    der = x509.load_pem_x509_certificate(cert_file.read_bytes()).public_bytes(Encoding.DER)
    bundle = tmp_path / "bundle.crt"
    shutil.copy(first_ca / "ca.crt", bundle)
    gate = PeerGate("client authentication", bundle, ["apiserver"])
    before = _counts("peer-verdicts")
    assert gate.problem(_Peer(der)) is None and gate.problem(_Peer(der)) is None  # admitted, then remembered
    after = _counts("peer-verdicts")
    assert (after[0] - before[0], after[1] - before[1]) == (1, 1)
    shutil.copy(other_ca / "ca.crt", bundle)
    gate.reload()  # the remembered "admitted" goes with the CA that made it
    assert gate.problem(_Peer(der)) is not None
