"""`limitguard certs`: a CA and a serving certificate for the webhook's Service DNS names.

Without cluster flags it only writes files (pure, no API access). The Helm chart's `generate` mode
adds `--secret` (create the TLS Secret once, reuse it afterwards; with `--previous-ca-from` its ca.crt
keeps trusting the CA it replaces) and `--patch-webhook-configuration` (set caBundle on the webhook
configurations); that cluster I/O lives in `limitguard.certs.cluster`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from limitguard.certs import generate as certs
from limitguard.certs.peers import serves_as_client
from limitguard.cli.options import CommandError
from limitguard.core.names import dns1035_label_problem, dns1123_label_problem

WRITTEN = "ca.crt, ca.key, tls.crt and tls.key"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--service", required=True, help="webhook Service name")
    parser.add_argument("--namespace", required=True, help="namespace of the Service")
    parser.add_argument("--out", required=True, help="directory for ca.crt, ca.key, tls.crt, tls.key")
    parser.add_argument("--days", type=int, default=365, help="validity in days")
    existing = parser.add_mutually_exclusive_group()
    existing.add_argument(
        "--reuse-ca",
        action="store_true",
        help="when --out already holds ca.crt and ca.key, sign the new serving certificate with that CA "
        "(the caBundle already given to the webhooks stays valid)",
    )
    existing.add_argument(
        "--force",
        action="store_true",
        help="replace a CA already in --out with a new one (every caBundle holding the old CA must be updated)",
    )
    cluster = parser.add_argument_group("in-cluster (Helm generate mode)")
    cluster.add_argument(
        "--secret",
        metavar="NAME",
        help="TLS Secret in --namespace: created with tls.crt, tls.key and ca.crt if it does not exist, "
        "reused (never regenerated) if it does; --out then receives its ca.crt, tls.crt and tls.key",
    )
    cluster.add_argument(
        "--patch-webhook-configuration",
        metavar="[mutating/|validating/]NAME",
        action="append",
        default=[],
        dest="patch_webhook_configurations",
        help="set caBundle on every webhook of this configuration (repeatable; a bare NAME means both kinds)",
    )
    cluster.add_argument(
        "--previous-ca-from",
        metavar="[mutating/|validating/]NAME",
        action="append",
        default=[],
        dest="previous_ca_from",
        help="with --secret, when the Secret is created: its ca.crt also carries the still valid CAs of this "
        "configuration's caBundle (the CA the running pods serve from), so that every reader of ca.crt "
        "trusts both through a renewal (repeatable; a configuration that does not exist is skipped)",
    )
    cluster.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster credentials)")


def _check_names(service: str, namespace: str) -> None:
    problems = []
    if problem := dns1035_label_problem(service):
        problems.append(f"--service {service!r}: {problem}")
    if problem := dns1123_label_problem(namespace):
        problems.append(f"--namespace {namespace!r}: {problem}")
    if problems:
        raise CommandError("; ".join(problems))


def fresh_or_reused(args: argparse.Namespace, hostnames: list[str]) -> tuple[certs.CertificateSet, str]:
    """A set for --out: never silently replacing a CA already there (--reuse-ca or --force decide)."""
    out = Path(args.out)
    ca_cert, ca_key = out / certs.CA_CERT, out / certs.CA_KEY
    has_ca = ca_cert.exists() or ca_key.exists()
    if not has_ca or args.force:
        return certs.generate(hostnames, valid_days=args.days), "a new CA"
    if not args.reuse_ca:
        raise CommandError(
            f"{out} already holds a CA ({certs.CA_CERT}/{certs.CA_KEY}); replacing it would invalidate every "
            "caBundle that trusts it. Pass --reuse-ca to sign the new serving certificate with it, or --force "
            "to replace it"
        )
    if not (ca_cert.exists() and ca_key.exists()):
        raise CommandError(f"--reuse-ca needs both {ca_cert} and {ca_key}")
    try:
        issued = certs.issue_with_ca(hostnames, ca_cert.read_bytes(), ca_key.read_bytes(), args.days)
    except certs.CAError as error:
        raise CommandError(f"--reuse-ca: {error}") from None
    return issued, f"the existing CA in {out}"


def run(args: argparse.Namespace) -> int:
    try:
        if args.days < 1:
            raise CommandError("--days must be at least 1")
        _check_names(args.service, args.namespace)
        hostnames = certs.service_hostnames(args.service, args.namespace)
        if args.secret and (args.reuse_ca or args.force):
            raise CommandError("--reuse-ca and --force apply to --out files, not to --secret")
        if args.previous_ca_from and not args.secret:
            raise CommandError("--previous-ca-from applies to --secret only")
        if args.secret:
            return _run_in_cluster(args, hostnames, None)
        generated, signer = fresh_or_reused(args, hostnames)
    except CommandError as error:
        print(f"limitguard certs: {error}", file=sys.stderr)
        return 2
    if not args.patch_webhook_configurations:
        certs.write(generated, args.out)
        print(f"wrote {WRITTEN} (signed by {signer}) for {', '.join(hostnames)} to {args.out}")
        return 0
    return _run_in_cluster(args, hostnames, generated)


def _run_in_cluster(
    args: argparse.Namespace, hostnames: list[str], generated: certs.CertificateSet | None
) -> int:
    from limitguard.certs import cluster as certs_cluster

    try:
        cluster = certs_cluster.KubernetesCluster(args.kubeconfig)
        if args.secret:
            secret = certs_cluster.ensure_secret(
                cluster, args.namespace, args.secret, hostnames, args.days, args.previous_ca_from
            )
            certs_cluster.write_files(secret, args.out)
            state = "exists, reused (not regenerated)"
            if secret.created:
                replaced = secret.replaced_cas
                state = f"created (ca.crt also trusts {replaced} previous CA(s))" if replaced else "created"
            print(f"Secret {args.namespace}/{args.secret}: {state}")
            if not serves_as_client(secret.tls_cert):
                print(
                    f"limitguard certs: warning: Secret {args.namespace}/{args.secret}: tls.crt lacks the client "
                    "auth usage the replicas authenticate each other with; until it is replaced, followers "
                    "cannot forward to the leader. Delete the Secret and upgrade again to generate a new one",
                    file=sys.stderr,
                )
            ca_cert = secret.ca_cert
        else:
            assert generated is not None  # run() made it: only --secret reads the set from the cluster
            certs.write(generated, args.out)
            print(f"wrote {WRITTEN} for {', '.join(hostnames)} to {args.out}")
            ca_cert = generated.ca_cert
        if args.patch_webhook_configurations:
            patched = certs_cluster.patch_ca_bundles(cluster, args.patch_webhook_configurations, ca_cert)
            print(f"caBundle set on: {', '.join(patched) if patched else 'nothing (already up to date)'}")
    except certs_cluster.CertsClusterError as error:
        print(f"limitguard certs: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # config loading, connection refused, ...: one clear line for Job logs
        print(f"limitguard certs: cannot reach the cluster: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0
