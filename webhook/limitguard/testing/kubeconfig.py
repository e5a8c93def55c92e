"""A kubeconfig file pointing at the fake apiserver with a bearer token (tests and benchmarks)."""

from __future__ import annotations

from pathlib import Path

TOKEN = "test-token"


def write_kubeconfig(directory: Path, server: str, token: str = TOKEN, ca_file: str | None = None) -> str:
    """Write *directory*/kubeconfig for *server* (http or https) and return its path."""
    cluster = f"    server: {server}\n" + (f"    certificate-authority: {ca_file}\n" if ca_file else "")
    path = directory / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: fake\n  cluster:\n{cluster}"
        f"users:\n- name: tester\n  user:\n    token: {token}\n"
        "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: tester\n"
        "current-context: fake\n"
    )
    return str(path)
