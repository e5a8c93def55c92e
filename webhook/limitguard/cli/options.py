"""Options and loading shared by the commands: defined once, so `serve`, `explain` and `audit` agree.

`--config` is limitguard's configuration file; `--cluster FILE` or (without it) `--kubeconfig` say
where the cluster state comes from.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from limitguard.cli.configfile import load_config
from limitguard.core.config import Config, ConfigError
from limitguard.core.kuberelease import from_file, from_flag, resolve_release
from limitguard.core.kubeversion import DEFAULT_MINOR, VersionError, supported_minor, supported_text
from limitguard.core.podrules import PodRules, rules_for
from limitguard.errors import LimitguardError
from limitguard.kube.filefeed import ClusterFileError, load_cluster_file
from limitguard.state.store import ClusterState

DEFAULT_LIVE_TIMEOUT_SECONDS = 60.0


class CommandError(LimitguardError):
    """A problem the user must fix; printed without a traceback, exit code 2."""


def port_number(text: str) -> int:
    """argparse type of a TCP port: without it 99999 would be accepted and bound as 99999 mod 65536."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number: use 1-65535") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(
            f"{value} is not a port number: use 1-65535 (TCP ports end at 65535)"
        )
    return value


def positive_int(text: str) -> int:
    """argparse type of a count or a size that must be at least 1."""
    return _at_least(text, 1)


def count(text: str) -> int:
    """argparse type of a count that may be 0."""
    return _at_least(text, 0)


def _at_least(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{value} is too small: use {least} or more")
    return value


def kubernetes_release(text: str) -> str:
    """argparse type of --kubernetes-version: a supported release; another one is refused."""
    try:
        supported_minor(text)
    except VersionError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        help="LimitGuardConfiguration YAML file (ratios, enforcement, the extender's scorers); "
        "defaults apply when omitted",
    )


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cluster",
        metavar="FILE",
        help="cluster state file (`kubectl get nodes,pods,namespaces -A -o yaml`); without it, the live cluster",
    )
    parser.add_argument("--kubeconfig", help="kubeconfig for the live cluster (when --cluster is not given)")


def add_state_arguments(parser: argparse.ArgumentParser, outputs: tuple[str, ...] = ("text", "json")) -> None:
    """What a one-off report needs: where the state comes from, how long to wait, the output form."""
    add_cluster_options(parser)
    parser.add_argument(
        "--context", help="the kubeconfig context of the live cluster (as kubectl's --context)"
    )
    parser.add_argument(
        "-n",
        "--namespace",
        help="the namespace of a pod whose manifest names none (explain); the namespace whose Reports "
        "audit -o openreports|wgpolicyk8s prints, besides the cluster-scoped ones",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_LIVE_TIMEOUT_SECONDS,
        help="seconds to wait for the live cluster to be fully listed",
    )
    add_config_option(parser)
    parser.add_argument(
        "--kubernetes-version",
        type=kubernetes_release,
        metavar="X.Y",
        help=f"release whose pod rules count the limits ({supported_text()}); default: kubernetesVersion "
        f"in --config, else the live cluster's /version, else 1.{DEFAULT_MINOR}",
    )
    parser.add_argument("--output", "-o", choices=list(outputs), default="text")


async def _live_state(
    kubeconfig: str | None,
    timeout: float,
    follow_release: bool,
    config: Config,
    pod_rules: PodRules,
    context: str | None = None,
) -> tuple[ClusterState, str | None]:
    """The listed state, and the cluster's /version when it decided the pod rules."""
    from limitguard.kube.livefeed import start_live_feed

    state = ClusterState(node_pools=config.limit_aware.node_pools, pod_rules=pod_rules)
    feed = await start_live_feed(state, kubeconfig, follow_release=follow_release, context=context)
    version = feed.release.version if feed.release is not None else None
    try:
        deadline = time.monotonic() + timeout
        while not state.ready:
            if time.monotonic() > deadline:
                raise CommandError(f"the live cluster was not fully listed within {timeout:g}s")
            await asyncio.sleep(0.05)
    finally:
        await feed.stop()
    return state, version


def load_counted_state(args: argparse.Namespace, config: Config) -> tuple[ClusterState, str, list[str]]:
    """The cluster state, which release's pod rules counted it and why (a report's note), and the
    warnings a report must show (a release outside the supported range, judged as the nearest).

    The release (limitguard.core.kuberelease): --kubernetes-version, else the configuration's
    kubernetesVersion, else the live cluster's /version, else the newest supported. The state counts
    every pod under its rules.
    """
    state, note, warnings, _ = load_counted_state_and_version(args, config)
    return state, note, warnings


def load_counted_state_and_version(
    args: argparse.Namespace, config: Config
) -> tuple[ClusterState, str, list[str], str | None]:
    """load_counted_state, and the live cluster's /version when it was read (None otherwise)."""
    flag = from_flag("--kubernetes-version", getattr(args, "kubernetes_version", None))
    configured = from_file("kubernetesVersion", config.kubernetes_version, getattr(args, "config", None))
    release, why = resolve_release(flag, configured)
    state = ClusterState(
        config.limit_aware.binding_ledger_ttl_seconds,
        node_pools=config.limit_aware.node_pools,
        pod_rules=rules_for(release.minor),
    )
    version: str | None = None
    if args.cluster:
        try:
            load_cluster_file(state, args.cluster)
        except ClusterFileError as error:
            raise CommandError(str(error)) from None
    else:
        try:
            follow = flag is None and configured is None
            state, version = asyncio.run(
                _live_state(
                    args.kubeconfig,
                    args.timeout,
                    follow,
                    config,
                    state.pod_rules,
                    getattr(args, "context", None),
                )
            )
        except OSError as error:  # KubeConfigError and connection failures
            raise CommandError(f"cannot read the live cluster: {error}") from None
        if follow:  # the state counted under the rules of this release (kube.release)
            release, why = resolve_release(cluster=version, cluster_asked=True)
    note = f"pod limits counted under the pod rules of Kubernetes {release.name}: {why}"
    return state, note, [release.note] if release.note else [], version


def print_warnings(command: str, warnings: list[str]) -> None:
    """A report's warnings on stderr, whatever the output form (JSON carries them too)."""
    for warning in warnings:
        print(f"limitguard {command}: warning: {warning}", file=sys.stderr)


def load_limitguard_config(args: argparse.Namespace) -> Config:
    try:
        return load_config(args.config)
    except ConfigError as error:
        raise CommandError(str(error)) from None
