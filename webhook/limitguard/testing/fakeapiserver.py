"""The fake apiserver under its historical name: see limitguard.testing.fakeapi for what it reproduces
(list/watch of nodes, pods and namespaces, Leases, and GET /version).

python -m limitguard.testing.fakeapiserver --nodes N --pods M    # a process for the benchmarks
"""

from __future__ import annotations

from limitguard.testing.builders import make_namespace, make_node, make_pod
from limitguard.testing.fakeapi import *  # noqa: F403  (the public names, listed in its __all__)
from limitguard.testing.fakeapi import FakeApiServer
from limitguard.testing.fakeapi.main import main, populate

__all__ = ["FakeApiServer", "main", "make_namespace", "make_node", "make_pod", "populate"]

if __name__ == "__main__":
    main()
