"""`limitguard certs`: a CA and a serving certificate for the webhook's Service DNS names."""

from __future__ import annotations

import argparse

from webhook import certs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--service", required=True, help="webhook Service name")
    parser.add_argument("--namespace", required=True, help="namespace of the Service")
    parser.add_argument("--out", required=True, help="directory for ca.crt, ca.key, tls.crt, tls.key")
    parser.add_argument("--days", type=int, default=365, help="validity in days")


def run(args: argparse.Namespace) -> int:
    hostnames = certs.service_hostnames(args.service, args.namespace)
    certs.write(certs.generate(hostnames, valid_days=args.days), args.out)
    print(f"wrote ca.crt, tls.crt and tls.key for {', '.join(hostnames)} to {args.out}")
    return 0
