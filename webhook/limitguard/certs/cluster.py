"""The in-cluster half of `limitguard certs`: a TLS Secret created once, and caBundle patching.

Used by the Helm chart's `generate` certificate mode (hook Jobs). Two rules make it safe under
upgrades and GitOps re-syncs:

- an existing Secret is never regenerated (its CA keeps matching every webhook's caBundle);
- a renewal (delete the Secret, upgrade) keeps the previous, still valid CAs trusted next to the new
  one: the new Secret's `ca.crt` carries them after the new CA (read from the webhooks' caBundle,
  `previous_from`), and caBundle gets that same list. So the apiserver, the replicas and the second
  scheduler trust both the certificate the pods still serve and the new one
  (limitguard.certs.renewal says how the old CA is dropped again).

The cluster is reached through the small `Cluster` protocol so the logic is tested without an
apiserver; `KubernetesCluster` implements it with the `kubernetes` client.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from limitguard.certs import generate as certs
from limitguard.errors import LimitguardError

FIELD_MANAGER = "limitguard-certs"
KINDS = ("mutating", "validating")
MAX_PREVIOUS_CAS = 2  # how many earlier CAs stay trusted next to the current one


class CertsClusterError(LimitguardError, RuntimeError):
    """A problem the operator must fix (printed as is by `limitguard certs`)."""


class Cluster(Protocol):
    def get_secret(self, namespace: str, name: str) -> dict[str, Any] | None: ...

    def create_secret(self, namespace: str, body: dict[str, Any]) -> bool:
        """Create; False when a Secret of that name already exists (a concurrent Job won)."""
        ...

    def get_webhook_configuration(self, kind: str, name: str) -> dict[str, Any] | None: ...

    def patch_webhook_configuration(self, kind: str, name: str, patch: list[dict[str, Any]]) -> None: ...


@dataclass(frozen=True)
class ServingSecret:
    ca_cert: bytes  # ca.crt: the CA that issued tls.crt, then any CAs it replaced (a renewal)
    tls_cert: bytes
    tls_key: bytes
    created: bool

    @property
    def replaced_cas(self) -> int:
        """How many CAs ca.crt carries besides the one that issued tls.crt."""
        return max(0, len(_pem_certificates(self.ca_cert)) - 1)


# -- Secret -------------------------------------------------------------------------------------
def secret_manifest(
    namespace: str, name: str, certificates: certs.CertificateSet, ca_bundle: bytes | None = None
) -> dict[str, Any]:
    """A kubernetes.io/tls Secret whose ca.crt is *ca_bundle* (default: the set's CA); the CA
    private key is deliberately not stored anywhere."""

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {
            "name": name,
            "namespace": namespace,
            # Not labelled as part of the Helm release: `helm uninstall` keeps it, a reinstall reuses it.
            "labels": {"app.kubernetes.io/created-by": FIELD_MANAGER},
        },
        "data": {
            certs.TLS_CERT: b64(certificates.tls_cert),
            certs.TLS_KEY: b64(certificates.tls_key),
            certs.CA_CERT: b64(certificates.ca_cert if ca_bundle is None else ca_bundle),
        },
    }


def _secret_value(secret: dict[str, Any], key: str, where: str) -> bytes:
    data = secret.get("data") or {}
    if key not in data:
        raise CertsClusterError(
            f"Secret {where} has no {key!r} key; delete it to let limitguard generate a new one"
        )
    try:
        return base64.b64decode(data[key], validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise CertsClusterError(f"Secret {where}: {key!r} is not valid base64") from None


def _dns_names(certificate_pem: bytes) -> set[str]:
    certificate = x509.load_pem_x509_certificate(certificate_pem)
    try:
        extension = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        return set()
    return set(extension.value.get_values_for_type(x509.DNSName))


def ensure_secret(
    cluster: Cluster,
    namespace: str,
    name: str,
    hostnames: list[str],
    days: int,
    previous_from: Sequence[str] = (),
) -> ServingSecret:
    """The Secret's certificates, creating the Secret first if (and only if) it does not exist.

    A created Secret's ca.crt is the new CA, then the still valid CAs of the caBundles of the
    *previous_from* webhook configurations (those that exist): the CAs the running pods may still
    serve from, trusted by every reader of ca.crt until they have all moved to the new one.
    """
    where = f"{namespace}/{name}"
    existing = cluster.get_secret(namespace, name)
    if existing is None:
        generated = certs.generate(hostnames, valid_days=days)
        ca_bundle = merged_ca_bundle(configured_ca_bundles(cluster, previous_from), generated.ca_cert)
        if cluster.create_secret(namespace, secret_manifest(namespace, name, generated, ca_bundle)):
            return ServingSecret(ca_bundle, generated.tls_cert, generated.tls_key, created=True)
        existing = cluster.get_secret(namespace, name)  # another Job created it in between
        if existing is None:
            raise CertsClusterError(f"Secret {where} was reported to exist but cannot be read")
    found = ServingSecret(
        _secret_value(existing, certs.CA_CERT, where),
        _secret_value(existing, certs.TLS_CERT, where),
        _secret_value(existing, certs.TLS_KEY, where),
        created=False,
    )
    try:
        missing = set(hostnames) - _dns_names(found.tls_cert)
    except ValueError:
        raise CertsClusterError(f"Secret {where}: tls.crt is not a PEM certificate") from None
    if missing:
        raise CertsClusterError(
            f"Secret {where}: tls.crt does not cover {', '.join(sorted(missing))} "
            "(was the Service renamed?); delete the Secret and upgrade to generate a new one"
        )
    return found


def write_files(secret: ServingSecret, directory: str | Path) -> None:
    """ca.crt, tls.crt and tls.key (0600) into *directory*, each replaced atomically."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for file_name, data, mode in (
        (certs.CA_CERT, secret.ca_cert, 0o644),
        (certs.TLS_KEY, secret.tls_key, 0o600),
        (certs.TLS_CERT, secret.tls_cert, 0o644),
    ):
        certs.write_file(out / file_name, data, mode)


# -- caBundle ----------------------------------------------------------------------------------
def _pem_certificates(bundle: bytes) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(bundle)
    except ValueError:
        return []


def merged_ca_bundle(current: bytes, ca_bundle: bytes, now: datetime.datetime | None = None) -> bytes:
    """The first CA of *ca_bundle* (the one that issues), then up to MAX_PREVIOUS_CAS other
    still-valid CAs: those after it in *ca_bundle*, then those of *current* (PEM)."""
    now = now or datetime.datetime.now(datetime.UTC)
    new, *carried = x509.load_pem_x509_certificates(ca_bundle)
    previous: list[x509.Certificate] = []
    for certificate in [*carried, *_pem_certificates(current)]:
        if certificate != new and certificate not in previous and certificate.not_valid_after_utc > now:
            previous.append(certificate)
    return b"".join(
        certificate.public_bytes(Encoding.PEM) for certificate in [new, *previous[:MAX_PREVIOUS_CAS]]
    )


def _ca_bundle_of(webhook: dict[str, Any]) -> bytes:
    try:
        return base64.b64decode((webhook.get("clientConfig") or {}).get("caBundle") or "")
    except (binascii.Error, ValueError, TypeError):
        return b""


def configured_ca_bundles(cluster: Cluster, references: Iterable[str]) -> bytes:
    """Every caBundle of the referenced webhook configurations, one PEM text; a configuration that
    does not exist (yet: before the first install's post-install hook) holds none."""
    bundles: list[bytes] = []
    for reference in references:
        for kind, name in parse_configuration_reference(reference):
            configuration = cluster.get_webhook_configuration(kind, name)
            for webhook in (configuration or {}).get("webhooks") or []:
                bundles.append(_ca_bundle_of(webhook))
    return b"".join(bundle if bundle.endswith(b"\n") else bundle + b"\n" for bundle in bundles if bundle)


def parse_configuration_reference(reference: str) -> list[tuple[str, str]]:
    """`mutating/NAME`, `validating/NAME`, or `NAME` (both kinds) -> [(kind, name)]."""
    kind, slash, name = reference.partition("/")
    if not slash:
        return [(k, reference) for k in KINDS]
    if kind not in KINDS or not name:
        raise CertsClusterError(
            f"--patch-webhook-configuration {reference!r}: expected [mutating/|validating/]NAME"
        )
    return [(kind, name)]


def ca_bundle_patch(configuration: dict[str, Any], ca_bundle: bytes) -> list[dict[str, Any]]:
    """JSON patch setting caBundle on every webhook that does not carry the wanted bundle yet: the
    Secret's *ca_bundle* merged with what the webhook trusts now (`merged_ca_bundle`).

    Each change is guarded by a `test` of the webhook's name, so a concurrent reorder of the list
    makes the patch fail instead of writing a bundle onto the wrong webhook.
    """
    operations: list[dict[str, Any]] = []
    for index, webhook in enumerate(configuration.get("webhooks") or []):
        current = _ca_bundle_of(webhook)
        wanted = merged_ca_bundle(current, ca_bundle)
        if wanted == current:
            continue
        operations.append({"op": "test", "path": f"/webhooks/{index}/name", "value": webhook.get("name")})
        value = base64.b64encode(wanted).decode()
        operations.append({"op": "add", "path": f"/webhooks/{index}/clientConfig/caBundle", "value": value})
    return operations


def patch_ca_bundles(cluster: Cluster, references: Iterable[str], ca_bundle: bytes) -> list[str]:
    """Set caBundle on every webhook of the referenced configurations; returns what was patched."""
    patched: list[str] = []
    for reference in references:
        targets = parse_configuration_reference(reference)
        found = 0
        for kind, name in targets:
            configuration = cluster.get_webhook_configuration(kind, name)
            if configuration is None:
                continue
            found += 1
            patch = ca_bundle_patch(configuration, ca_bundle)
            if patch:
                cluster.patch_webhook_configuration(kind, name, patch)
                patched.append(f"{kind}/{name}")
        if not found:
            kinds = " or ".join(f"{kind}webhookconfiguration" for kind, _ in targets)
            raise CertsClusterError(f"no {kinds} named {targets[0][1]!r}")
    return patched


# -- the kubernetes client ---------------------------------------------------------------------
class KubernetesCluster:
    """`Cluster` over the official client; in-cluster credentials unless a kubeconfig is given."""

    def __init__(self, kubeconfig: str | None = None, api_client: Any = None) -> None:
        from kubernetes import client, config

        if api_client is None:
            if kubeconfig:
                config.load_kube_config(kubeconfig)
            else:
                try:
                    config.load_incluster_config()
                except config.ConfigException:
                    config.load_kube_config()
            api_client = client.ApiClient()
        self._core = client.CoreV1Api(api_client)
        self._admission = client.AdmissionregistrationV1Api(api_client)

    @staticmethod
    def _json(call: Any, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        """Raw JSON of a call (None on 404): the models would turn base64 fields into bytes."""
        from kubernetes.client.exceptions import ApiException

        try:
            response = call(*args, _preload_content=False, **kwargs)
        except ApiException as error:
            if error.status == 404:
                return None
            raise CertsClusterError(f"API error {error.status}: {error.reason}: {error.body}") from None
        if response.status == 404:
            return None
        if response.status >= 300:
            raise CertsClusterError(f"API error {response.status}: {response.data!r}")
        return json.loads(response.data)

    def get_secret(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._json(self._core.read_namespaced_secret, name, namespace)

    def create_secret(self, namespace: str, body: dict[str, Any]) -> bool:
        from kubernetes.client.exceptions import ApiException

        try:
            response = self._core.create_namespaced_secret(
                namespace, body, field_manager=FIELD_MANAGER, _preload_content=False
            )
        except ApiException as error:
            if error.status == 409:
                return False
            raise CertsClusterError(f"cannot create Secret: API error {error.status}: {error.body}") from None
        if response.status == 409:
            return False
        if response.status >= 300:
            raise CertsClusterError(f"cannot create Secret: API error {response.status}: {response.data!r}")
        return True

    def _methods(self, kind: str) -> tuple[Any, Any]:
        noun = f"{kind}_webhook_configuration"
        return getattr(self._admission, f"read_{noun}"), getattr(self._admission, f"patch_{noun}")

    def get_webhook_configuration(self, kind: str, name: str) -> dict[str, Any] | None:
        return self._json(self._methods(kind)[0], name)

    def patch_webhook_configuration(self, kind: str, name: str, patch: list[dict[str, Any]]) -> None:
        self._json(
            self._methods(kind)[1],
            name,
            patch,
            field_manager=FIELD_MANAGER,
            _content_type="application/json-patch+json",
        )
