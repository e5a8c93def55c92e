"""`make bench-check`: the wrk scenarios against the floor at 5,000 nodes; non-zero exit under the goals.

Runs `limitguard serve` (default settings: log level info, event loop auto) and the floor
(bench/floor_server.py on asyncio's loop) over the 5,000-node cluster of bench/wrk_bench.py, and
drives each scenario with `wrk -t1 -c16` in alternating rounds, limitguard then the floor. The goals
(bench/goals.py) are judged on the median of the rounds' ratios. Prioritize's rounds have a third
run, the floor sending the protocol's answer pre-built (its floor answers `[]`), printed beside the
goals and not judged. Then the same with client authentication on: wrk presents no client
certificate, so a local haproxy takes wrk's requests in plain HTTP and connects to each server over
TLS presenting one (serve with --client-ca-file and the client's name on every route, the floor
asking for the same certificate), both behind the same proxy: a request crosses one TLS connection,
the server's, as the apiserver's and kube-scheduler's do (`--tls-front`: wrk speaks TLS to haproxy
too, as the runs up to 2026-11-27 were measured). Without haproxy that part is skipped, and said so.

    python -m bench.check                 # 3 rounds of 5 s per side and scenario
    python -m bench.check --rounds 5 --no-client-auth
    python -m bench.check --server-path /tmp/before   # a folder whose `limitguard` is the code before
"""

from __future__ import annotations

import argparse
import os
import shutil
import ssl
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.x509.oid import ExtendedKeyUsageOID

from bench.goals import LEAST_SHARE, Goal, Round, judge_all, medians, missed, print_goals
from bench.harness import free_ports, start_floor, stop
from bench.wrk_bench import Workload, bench_workdir, prepare, serve_workload
from bench.wrk_runner import wrk
from limitguard.certs import generate as certs
from limitguard.testing.clientcerts import client_pair

NODES = 5000
CLIENT_NAME = "limitguard-apiserver"
PATHS = {
    "binding": "/validate",
    "unbound": "/validate",
    "mutate": "/mutate",
    "prioritize": "/extender/prioritize",
}
BODIES = {"binding": "binding", "unbound": "unbound", "mutate": "mutate", "prioritize": "extender"}
# Mutate first, as it always ran: the defaulted pod gets its placement hint (one Gt term over the
# nodes' room labels, which bench.synthetic writes), so the scenario measures /mutate with a hint.
ORDER = ("mutate", "binding", "unbound", "prioritize")
assert set(ORDER) == set(LEAST_SHARE), "every goal's scenario is measured, once"
# The prioritize floor answers `[]` where limitguard sends every candidate's score (160 KB at 5,000
# names): a third run a round sends that answer pre-built, so a run shows what the answer alone costs.
PREBUILT = {"prioritize": "/extender-prebuilt/prioritize"}

HAPROXY = """global
    nbthread 1
    maxconn 256
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    http-reuse always
frontend limitguard
    bind 127.0.0.1:{proxy_serve}{front_tls}
    default_backend limitguard
frontend floor
    bind 127.0.0.1:{proxy_floor}{front_tls}
    default_backend floor
backend limitguard
    server serve 127.0.0.1:{serve} ssl crt {client} ca-file {ca} verify required verifyhost localhost
backend floor
    server floor 127.0.0.1:{floor} ssl crt {client} ca-file {ca} verify required verifyhost localhost
"""


def measure(
    workload: Workload, serve_url: str, floor_url: str, rounds: int, seconds: int
) -> tuple[dict[str, list[Round]], dict[str, list[Round]]]:
    """Each scenario's alternating rounds, limitguard at *serve_url* and the floor at *floor_url*;
    and for PREBUILT's scenarios, a third run a round: the floor sending the answer pre-built, as a
    Round against the floor's own run."""
    found: dict[str, list[Round]] = {}
    prebuilt: dict[str, list[Round]] = {}
    for scenario in ORDER:
        path, bodies = PATHS[scenario], workload.bodies[BODIES[scenario]]
        found[scenario] = []
        for _ in range(rounds):
            ours = wrk(serve_url + path, bodies, seconds)
            floor = wrk(floor_url + path, bodies, seconds)
            found[scenario].append(Round(ours.rps, floor.rps, ours.p99_ms, floor.p99_ms, ours.errors))
            if scenario in PREBUILT:
                sent = wrk(floor_url + PREBUILT[scenario], bodies, seconds)
                prebuilt.setdefault(scenario, []).append(
                    Round(sent.rps, floor.rps, sent.p99_ms, floor.p99_ms, sent.errors)
                )
        print(f"  {scenario:<11} " + _figures(found[scenario]), flush=True)
        if scenario in prebuilt:
            print(f"  {'  prebuilt':<11} " + _figures(prebuilt[scenario]), flush=True)
    return found, prebuilt


def _figures(rounds: Sequence[Round]) -> str:
    return "  ".join(
        f"{run.rps:,.0f}/{run.floor_rps:,.0f} p99 {run.p99_ms:.1f}/{run.floor_p99_ms:.1f}" for run in rounds
    )


def print_prebuilt(found: Mapping[str, Sequence[Round]], prebuilt: Mapping[str, Sequence[Round]]) -> None:
    """Where the goals' floor sends less than the protocol's answer: what the answer alone costs,
    next to limitguard's figures (for reading those goals; not judged)."""
    for scenario, sent in prebuilt.items():
        sent_share, sent_p99 = medians(sent)
        share, p99 = medians(found[scenario])
        print(
            f"  {scenario}: the floor sending the answer pre-built did {sent_share:.0%} of the floor's rate, "
            f"p99 {sent_p99:.2f}x the floor's (limitguard: {share:.0%}, {p99:.2f}x); not a goal"
        )


@dataclass(frozen=True)
class Setup:
    workload: Workload
    work: Path
    context: ssl.SSLContext
    rounds: int
    seconds: int
    env: Mapping[str, str] | None  # the server's environment: PYTHONPATH for --server-path
    tls_front: bool  # wrk speaks TLS to haproxy too: two TLS legs a request, as measured up to 2026-11-27


def client_auth_files(
    work: Path, serve: int, floor: int, proxy_serve: int, proxy_floor: int, tls_front: bool = False
) -> tuple[str, ...]:
    """A client CA, a client pair for haproxy and haproxy's configuration (from the proxy's ports,
    plain HTTP unless *tls_front*, to the servers'); serve's options for them."""
    certs.write(certs.generate(["client-ca"]), work / "client-ca")
    pair = client_pair(work, "client", work / "client-ca", CLIENT_NAME, [], [ExtendedKeyUsageOID.CLIENT_AUTH])
    (work / "client.pem").write_bytes(pair[0].read_bytes() + pair[1].read_bytes())
    server_dir = work / "certs"
    if tls_front:
        (work / "frontend.pem").write_bytes(
            (server_dir / certs.TLS_CERT).read_bytes() + (server_dir / certs.TLS_KEY).read_bytes()
        )
    (work / "haproxy.cfg").write_text(
        HAPROXY.format(
            proxy_serve=proxy_serve,
            proxy_floor=proxy_floor,
            serve=serve,
            floor=floor,
            front_tls=f" ssl crt {work / 'frontend.pem'}" if tls_front else "",
            client=work / "client.pem",
            ca=server_dir / certs.CA_CERT,
        )
    )
    client_ca = str(work / "client-ca" / certs.CA_CERT)
    return (
        "--client-ca-file",
        client_ca,
        "--client-name",
        CLIENT_NAME,
        "--extender-client-name",
        CLIENT_NAME,
    )


def start_haproxy(work: Path) -> subprocess.Popen:
    proxy = subprocess.Popen(["haproxy", "-db", "-f", str(work / "haproxy.cfg")], stdout=subprocess.DEVNULL)
    time.sleep(1.0)  # it binds at once, or exits
    if proxy.poll() is not None:
        raise RuntimeError(f"haproxy exited with {proxy.returncode}")
    return proxy


def judged(setup: Setup, client_auth: bool) -> list[Goal]:
    """Serve and the floor started, measured (through haproxy with *client_auth*), judged, stopped."""
    work = setup.work
    serve, floor_port, proxy_serve, proxy_floor = free_ports(4)
    options = (
        client_auth_files(work, serve, floor_port, proxy_serve, proxy_floor, setup.tls_front)
        if client_auth
        else ()
    )
    front = "TLS" if setup.tls_front else "HTTP"
    if client_auth:
        print(
            f"\nwith client authentication: wrk -({front})-> haproxy -(TLS, presenting a client certificate)->"
            " limitguard or the floor:"
        )
    else:
        print(
            "limitguard and the floor, wrk connecting to each (req/s and p99 ms, limitguard/floor per round):"
        )
    with (work / f"serve{'-client-auth' if client_auth else ''}.log").open("wb") as log_file:
        server = serve_workload(
            setup.workload, work, serve, setup.context, *options, env=setup.env, log_file=log_file
        )
        floor = proxy = None
        try:
            floor = start_floor(
                work / "certs",
                floor_port,
                setup.context,
                client_ca_file=options[1] if options else "",
                prioritize_answer_for=setup.workload.bodies[BODIES["prioritize"]],
            )
            if client_auth:
                proxy = start_haproxy(work)
                scheme = "https" if setup.tls_front else "http"
                urls = (f"{scheme}://localhost:{proxy_serve}", f"{scheme}://localhost:{proxy_floor}")
            else:
                urls = (f"https://localhost:{serve}", f"https://localhost:{floor_port}")
            found, prebuilt = measure(setup.workload, *urls, setup.rounds, setup.seconds)
            print_prebuilt(found, prebuilt)
            return judge_all(found)
        finally:
            stop(proxy, server, floor)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs per side and scenario")
    parser.add_argument("--seconds", type=int, default=5, help="duration of each wrk run")
    parser.add_argument("--no-client-auth", action="store_true", help="skip the runs behind haproxy")
    parser.add_argument(
        "--tls-front",
        action="store_true",
        help="wrk speaks TLS to haproxy too: two TLS legs a request, as the runs up to 2026-11-27 were measured",
    )
    parser.add_argument(
        "--server-path",
        help="serve limitguard from this folder (PYTHONPATH): the other side of a before/after",
    )
    args = parser.parse_args(argv)
    with bench_workdir("limitguard-check-", "make bench-check") as (work, context):
        workload = prepare(NODES, work)
        print(
            f"{NODES:,} nodes, wrk -t1 -c16, {args.rounds} alternating rounds of {args.seconds} s per side; "
            "wrk, the servers (and haproxy) share this machine, so a loaded machine moves the figures"
        )
        env = {**os.environ, "PYTHONPATH": args.server_path} if args.server_path else None
        setup = Setup(workload, work, context, args.rounds, args.seconds, env, args.tls_front)
        columns = {"direct": judged(setup, client_auth=False)}
        if args.no_client_auth:
            print("\nclient authentication: skipped (--no-client-auth)")
        elif shutil.which("haproxy") is None:
            print(
                "\nclient authentication: SKIPPED, haproxy is not installed (Debian: apt-get install -y "
                "haproxy; `make bench-check` tries); its goals were not checked"
            )
        else:
            columns["client auth"] = judged(setup, client_auth=True)
    print_goals(columns)
    failures = missed(columns)
    if failures:
        print("\nbench-check: goals missed:\n  " + "\n  ".join(failures))
        return 1
    print("\nbench-check: every goal met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
