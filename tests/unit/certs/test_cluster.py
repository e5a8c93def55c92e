"""The in-cluster Secret and caBundle logic of `limitguard certs`, over an in-memory cluster."""

from __future__ import annotations

import base64
import datetime
import json
from typing import Any

import jsonpatch
import pytest
from cryptography import x509

from limitguard.certs import cluster as certs_cluster
from limitguard.certs import generate as certs
from tests.unit.certs.webhook_configurations import NS, SERVICE, bundle_of, configuration

HOSTS = certs.service_hostnames(SERVICE, NS)


class MemoryCluster:
    def __init__(self) -> None:
        self.secrets: dict[tuple[str, str], dict[str, Any]] = {}
        self.configurations: dict[tuple[str, str], dict[str, Any]] = {}
        self.patches: list[tuple[str, str, list[dict[str, Any]]]] = []
        self.creates = 0
        self.lose_create_race = False

    def get_secret(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.secrets.get((namespace, name))

    def create_secret(self, namespace: str, body: dict[str, Any]) -> bool:
        self.creates += 1
        key = (namespace, body["metadata"]["name"])
        if self.lose_create_race:
            winner = certs.generate(certs.service_hostnames(SERVICE, NS))
            self.secrets[key] = certs_cluster.secret_manifest(namespace, key[1], winner)
        if key in self.secrets:
            return False
        self.secrets[key] = json.loads(json.dumps(body))
        return True

    def get_webhook_configuration(self, kind: str, name: str) -> dict[str, Any] | None:
        return self.configurations.get((kind, name))

    def patch_webhook_configuration(self, kind: str, name: str, patch: list[dict[str, Any]]) -> None:
        self.patches.append((kind, name, patch))
        self.configurations[(kind, name)] = jsonpatch.apply_patch(self.configurations[(kind, name)], patch)


def test_secret_is_created_once_and_then_reused_never_regenerated() -> None:
    cluster = MemoryCluster()
    first = certs_cluster.ensure_secret(cluster, NS, "tls", HOSTS, 30)
    assert first.created and cluster.creates == 1
    stored = cluster.secrets[(NS, "tls")]
    assert stored["type"] == "kubernetes.io/tls" and set(stored["data"]) == {"tls.crt", "tls.key", "ca.crt"}
    assert "ca.key" not in stored["data"]  # nobody can mint certificates the webhooks would trust
    for _ in range(3):  # upgrades, GitOps re-syncs
        again = certs_cluster.ensure_secret(cluster, NS, "tls", HOSTS, 30)
        assert not again.created
        assert (again.ca_cert, again.tls_cert, again.tls_key) == (
            first.ca_cert,
            first.tls_cert,
            first.tls_key,
        )
    assert cluster.creates == 1


def test_losing_the_create_race_reuses_the_winners_secret() -> None:
    cluster = MemoryCluster()
    cluster.lose_create_race = True
    result = certs_cluster.ensure_secret(cluster, NS, "tls", HOSTS, 30)
    assert not result.created
    assert result.ca_cert == base64.b64decode(cluster.secrets[(NS, "tls")]["data"]["ca.crt"])


def test_unusable_existing_secrets_are_reported_not_replaced() -> None:
    cluster = MemoryCluster()
    other = certs.generate(certs.service_hostnames("renamed", NS))
    cluster.secrets[(NS, "tls")] = certs_cluster.secret_manifest(NS, "tls", other)
    with pytest.raises(certs_cluster.CertsClusterError, match=f"does not cover {SERVICE}"):
        certs_cluster.ensure_secret(cluster, NS, "tls", HOSTS, 30)
    del cluster.secrets[(NS, "tls")]["data"]["ca.crt"]
    with pytest.raises(certs_cluster.CertsClusterError, match=r"no 'ca\.crt' key"):
        certs_cluster.ensure_secret(cluster, NS, "tls", HOSTS, 30)
    assert cluster.creates == 0


def test_ca_bundle_is_patched_on_every_webhook_and_only_when_needed() -> None:
    cluster = MemoryCluster()
    cluster.configurations[("mutating", "lg")] = configuration("defaults.x.io")
    cluster.configurations[("validating", "lg")] = configuration("pods.x.io", "bindings.x.io", "nodes.x.io")
    secret = certs_cluster.ensure_secret(cluster, NS, "tls", HOSTS, 30)
    patched = certs_cluster.patch_ca_bundles(cluster, ["mutating/lg", "validating/lg"], secret.ca_cert)
    assert patched == ["mutating/lg", "validating/lg"]
    ca = x509.load_pem_x509_certificate(secret.ca_cert)
    for config in cluster.configurations.values():
        for index in range(len(config["webhooks"])):
            assert bundle_of(config, index) == [ca]
    # Every change is guarded by a test of the webhook's name.
    (_, _, operations) = cluster.patches[1]
    assert [op["op"] for op in operations] == ["test", "add"] * 3
    assert operations[0] == {"op": "test", "path": "/webhooks/0/name", "value": "pods.x.io"}
    # Re-running (upgrade, re-sync) changes nothing.
    assert certs_cluster.patch_ca_bundles(cluster, ["lg"], secret.ca_cert) == []
    assert len(cluster.patches) == 2


def test_rotation_keeps_the_previous_ca_trusted_and_drops_expired_ones() -> None:
    old, older = certs.generate(HOSTS), certs.generate(HOSTS, valid_days=1)
    current_bundle = base64.b64encode(old.ca_cert + older.ca_cert).decode()
    cluster = MemoryCluster()
    cluster.configurations[("validating", "lg")] = configuration("pods.x.io", ca_bundle=current_bundle)
    new = certs.generate(HOSTS)
    certs_cluster.patch_ca_bundles(cluster, ["validating/lg"], new.ca_cert)
    load = x509.load_pem_x509_certificate
    assert bundle_of(cluster.configurations[("validating", "lg")]) == [
        load(new.ca_cert),
        load(old.ca_cert),
        load(older.ca_cert),
    ]
    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=2)
    merged = certs_cluster.merged_ca_bundle(new.ca_cert + old.ca_cert + older.ca_cert, new.ca_cert, now=later)
    assert x509.load_pem_x509_certificates(merged) == [load(new.ca_cert), load(old.ca_cert)]
    many = b"".join(certs.generate(HOSTS).ca_cert for _ in range(4))
    assert len(x509.load_pem_x509_certificates(certs_cluster.merged_ca_bundle(many, new.ca_cert))) == 3


def test_configuration_references() -> None:
    assert certs_cluster.parse_configuration_reference("lg") == [("mutating", "lg"), ("validating", "lg")]
    assert certs_cluster.parse_configuration_reference("validating/lg") == [("validating", "lg")]
    with pytest.raises(certs_cluster.CertsClusterError, match="expected"):
        certs_cluster.parse_configuration_reference("admission/lg")
    cluster = MemoryCluster()
    with pytest.raises(certs_cluster.CertsClusterError, match="no mutatingwebhookconfiguration named 'lg'"):
        certs_cluster.patch_ca_bundles(cluster, ["mutating/lg"], certs.generate(HOSTS).ca_cert)


def test_a_renewal_carries_the_replaced_cas_in_ca_crt_and_the_same_list_into_ca_bundle() -> None:
    """The pre-upgrade Job reads the CA the pods serve from where it still is (the webhooks'
    caBundle), so ca.crt trusts both; the post-upgrade Job then finds caBundle to be that list."""
    old, short_lived = certs.generate(HOSTS), certs.generate(HOSTS, valid_days=1)
    cluster = MemoryCluster()
    bundle = base64.b64encode(old.ca_cert + short_lived.ca_cert).decode()
    cluster.configurations[("validating", "lg")] = configuration("pods.x.io", ca_bundle=bundle)
    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=2)
    carried = certs_cluster.merged_ca_bundle(b"", old.ca_cert + short_lived.ca_cert, now=later)
    assert x509.load_pem_x509_certificates(carried) == [x509.load_pem_x509_certificate(old.ca_cert)]

    secret = certs_cluster.ensure_secret(cluster, NS, "tls", HOSTS, 30, ["lg"])  # mutating/lg does not exist
    assert secret.created and secret.replaced_cas == 2
    stored = base64.b64decode(cluster.secrets[(NS, "tls")]["data"]["ca.crt"])
    assert stored == secret.ca_cert
    new_ca, *replaced = x509.load_pem_x509_certificates(stored)
    serving = x509.load_pem_x509_certificate(secret.tls_cert)
    serving.verify_directly_issued_by(new_ca)  # the first CA issues
    load = x509.load_pem_x509_certificate
    assert replaced == [load(old.ca_cert), load(short_lived.ca_cert)]

    assert certs_cluster.patch_ca_bundles(cluster, ["validating/lg"], secret.ca_cert) == ["validating/lg"]
    assert bundle_of(cluster.configurations[("validating", "lg")]) == [new_ca, *replaced]
    assert certs_cluster.patch_ca_bundles(cluster, ["validating/lg"], secret.ca_cert) == []
    # Later upgrades reuse the Secret: its ca.crt stays as it was, whatever caBundle holds by then.
    cluster.configurations[("validating", "lg")] = configuration("pods.x.io", ca_bundle="")
    assert certs_cluster.ensure_secret(cluster, NS, "tls", HOSTS, 30, ["lg"]).ca_cert == stored


def test_a_first_install_has_no_previous_ca_to_carry() -> None:
    cluster = MemoryCluster()  # pre-install: the webhook configurations do not exist yet
    secret = certs_cluster.ensure_secret(cluster, NS, "tls", HOSTS, 30, ["mutating/lg", "validating/lg"])
    assert secret.created and secret.replaced_cas == 0
    assert len(x509.load_pem_x509_certificates(secret.ca_cert)) == 1
    garbled = configuration("pods.x.io", ca_bundle="not base64!")
    cluster.configurations[("validating", "lg")] = garbled
    assert certs_cluster.configured_ca_bundles(cluster, ["lg"]) == b""
