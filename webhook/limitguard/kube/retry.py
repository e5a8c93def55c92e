"""Retrying the apiserver: jittered backoff, and what an operator should check for each failure."""

from __future__ import annotations

import random

import aiohttp

from limitguard.kube.client import ApiError


class Backoff:
    """Exponential backoff with jitter: the n-th delay is uniform in [c/2, c], c = min(cap, initial * 2^n).

    Half the ceiling is kept as a floor so a retry storm cannot collapse to near-zero delays.
    """

    def __init__(self, initial: float, maximum: float, rng: random.Random) -> None:
        self._initial = initial
        self._maximum = maximum
        self._rng = rng
        self._attempt = 0

    def reset(self) -> None:
        self._attempt = 0

    def next_delay(self) -> float:
        ceiling = min(self._maximum, self._initial * 2**self._attempt)
        self._attempt += 1
        return self._rng.uniform(ceiling / 2, ceiling)


def describe(error: BaseException) -> str:
    """The error's type and text; a bare timeout says what it was."""
    text = str(error) or ("no answer in time" if isinstance(error, TimeoutError) else "")
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def what_to_check(error: BaseException | None, kind: str) -> str:
    """What an operator should look at for this failure, in one line."""
    if isinstance(error, ApiError):
        if error.status == 401:
            return "the credentials: the apiserver does not accept this token or client certificate"
        if error.status == 403:
            return f"RBAC: this identity needs get, list and watch on {kind} (kubectl auth can-i list {kind} --as=...)"
        if error.status == 404:
            return "the server address: something answers there, but not a Kubernetes apiserver with this API"
        if error.status == 410:
            return "nothing: the watch history was compacted and a relist follows"
        return "the apiserver's health and logs: it answered with an error"
    if isinstance(error, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError):
        return "the CA: the apiserver's certificate is not trusted by the kubeconfig's or the ServiceAccount's CA"
    if isinstance(error, TimeoutError):  # before OSError, its base class
        return "that the apiserver is up and reachable: the connection or the answer timed out"
    if isinstance(error, aiohttp.ClientConnectorError | OSError):
        return (
            "the server address and the path to it: DNS, routes, NetworkPolicy egress, the apiserver running"
        )
    return "the apiserver's logs and this server's logs above"
