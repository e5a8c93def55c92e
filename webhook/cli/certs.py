"""`limitguard certs`: a CA and a serving certificate for the webhook's Service DNS names.

Without cluster flags it only writes files (pure, no API access). The Helm chart's `generate` mode
adds `--secret` (create the TLS Secret once, reuse it afterwards) and `--patch-webhook-configuration`
(set caBundle on the webhook configurations); that cluster I/O lives in `limitguard.certs.cluster`.
"""

from __future__ import annotations

import argparse
import sys

from limitguard.certs import generate as certs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--service", required=True, help="webhook Service name")
    parser.add_argument("--namespace", required=True, help="namespace of the Service")
    parser.add_argument("--out", required=True, help="directory for ca.crt, ca.key, tls.crt, tls.key")
    parser.add_argument("--days", type=int, default=365, help="validity in days")
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
    cluster.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster credentials)")


def run(args: argparse.Namespace) -> int:
    if args.days < 1:
        print("limitguard certs: --days must be at least 1", file=sys.stderr)
        return 2
    hostnames = certs.service_hostnames(args.service, args.namespace)
    if not (args.secret or args.patch_webhook_configurations):
        certs.write(certs.generate(hostnames, valid_days=args.days), args.out)
        print(f"wrote ca.crt, tls.crt and tls.key for {', '.join(hostnames)} to {args.out}")
        return 0
    return _run_in_cluster(args, hostnames)


def _run_in_cluster(args: argparse.Namespace, hostnames: list[str]) -> int:
    from limitguard.certs import cluster as certs_cluster

    try:
        cluster = certs_cluster.KubernetesCluster(args.kubeconfig)
        if args.secret:
            secret = certs_cluster.ensure_secret(cluster, args.namespace, args.secret, hostnames, args.days)
            certs_cluster.write_files(secret, args.out)
            state = "created" if secret.created else "exists, reused (not regenerated)"
            print(f"Secret {args.namespace}/{args.secret}: {state}")
            ca_cert = secret.ca_cert
        else:
            generated = certs.generate(hostnames, valid_days=args.days)
            certs.write(generated, args.out)
            print(f"wrote ca.crt, tls.crt and tls.key for {', '.join(hostnames)} to {args.out}")
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
