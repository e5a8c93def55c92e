"""The fake apiserver as a process: a synthetic cluster, then the port on stdout.

python -m limitguard.testing.fakeapiserver --nodes N --pods M
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from limitguard.testing import fakeapi
from limitguard.testing.builders import make_namespace, make_node, make_pod
from limitguard.testing.fakeapi.server import FakeApiServer


def populate(server: FakeApiServer, nodes: int, pods: int, namespaces: int = 50) -> None:
    """A synthetic cluster: pods spread round-robin over nodes and namespaces, all Running."""
    for index in range(namespaces):
        server.apply("namespaces", make_namespace(f"ns-{index}"))
    for index in range(nodes):
        server.apply("nodes", make_node(f"node-{index:05d}"))
    for index in range(pods):
        server.apply(
            "pods",
            make_pod(
                f"ns-{index % namespaces}",
                f"app-{index:06d}",
                node=f"node-{index % nodes:05d}",
                cpu_limit="250m",
            ),
        )
    server.compact()  # the bulk load is not history anyone will watch from


async def _serve(args: argparse.Namespace) -> None:
    server = FakeApiServer(token=args.token, bookmark_interval=args.bookmark_interval)
    populate(server, args.nodes, args.pods)
    await server.start("127.0.0.1", args.port)
    print(server.port, flush=True)
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=(fakeapi.__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--pods", type=int, default=10)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", default=None)
    parser.add_argument("--bookmark-interval", type=float, default=60.0)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(parser.parse_args()))


if __name__ == "__main__":
    main()
