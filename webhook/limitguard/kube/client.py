"""The HTTP connection to the Kubernetes API server used by the live feed.

Credentials come from the `kubernetes` package's loaders, so limitguard finds a cluster exactly like
kubectl and client-go do (service account in a pod, else a kubeconfig). The transport is our own
aiohttp session: the official client is synchronous, and the event loop that answers admissions must
never block on a watch.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import orjson
from kubernetes import config as kube_config
from kubernetes.client import Configuration
from kubernetes.config.config_exception import ConfigException

from limitguard.clock import Clock, SystemClock
from limitguard.errors import LimitguardError

USER_AGENT = "limitguard/0.1"
DEFAULT_KUBECONFIG = "~/.kube/config"


class KubeConfigError(LimitguardError, OSError):
    """No usable credentials for the cluster (an environment problem, reported like one)."""


class ApiError(LimitguardError):
    """A non-2xx answer from the API server, with its Status fields when it sent one."""

    def __init__(self, status: int, reason: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.retry_after = retry_after


def load_configuration(
    kubeconfig: str | None, environ: Mapping[str, str] | None = None, context: str | None = None
) -> tuple[Configuration, str]:
    """Credentials in client-go's order; returns the configuration and where it came from.

    An explicit --kubeconfig wins (the operator asked for it); otherwise the pod's service account;
    otherwise $KUBECONFIG (a path list, merged) or ~/.kube/config. A *context* names a kubeconfig
    context, so it skips the service account. Blocking: exec plugins may run.
    """
    env = os.environ if environ is None else environ
    configuration = Configuration()
    if kubeconfig or context:
        path = kubeconfig or env.get("KUBECONFIG") or DEFAULT_KUBECONFIG
        where = f"kubeconfig {path}" + (f", context {context}" if context else "")
        return _from_kubeconfig(configuration, path, context), where
    try:
        kube_config.load_incluster_config(client_configuration=configuration)
        return configuration, "in-cluster service account"
    except ConfigException as in_cluster_problem:
        in_cluster_reason = str(in_cluster_problem)
    path = env.get("KUBECONFIG") or DEFAULT_KUBECONFIG
    try:
        return _from_kubeconfig(configuration, path), f"kubeconfig {path}"
    except KubeConfigError as error:
        raise KubeConfigError(
            f"no cluster credentials: not in a pod ({in_cluster_reason}) and {error}; "
            "pass --kubeconfig, set KUBECONFIG, or use --cluster FILE"
        ) from None


def _from_kubeconfig(configuration: Configuration, path: str, context: str | None = None) -> Configuration:
    expanded = os.pathsep.join(os.path.expanduser(part) for part in path.split(os.pathsep))
    if not any(os.path.exists(part) for part in expanded.split(os.pathsep)):
        raise KubeConfigError(f"kubeconfig {path} does not exist")
    try:
        kube_config.load_kube_config(
            config_file=expanded, context=context, client_configuration=configuration
        )
    except (ConfigException, ValueError, OSError) as error:
        raise KubeConfigError(f"kubeconfig {path}: {error}") from None
    return configuration


def tls_context(configuration: Configuration) -> ssl.SSLContext | None:
    """TLS as the kubeconfig asks: its CA only (not the system roots), client cert, or no verification."""
    if not str(configuration.host).startswith("https"):
        return None
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert or None)
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file or None)
    return context


class BearerToken:
    """The Authorization header, refreshed through the loader's hook.

    In-cluster tokens are projected and rotate (about hourly); exec plugins mint short-lived ones.
    The hook reads files or runs commands, so it runs in a thread, at most once per *refresh_seconds*.
    """

    def __init__(
        self,
        configuration: Configuration,
        refresh_seconds: float = 30.0,
        clock: Clock | None = None,
    ) -> None:
        self._configuration = configuration
        self._refresh_seconds = refresh_seconds
        self._clock = clock or SystemClock()
        self._value = self._read() if configuration.refresh_api_key_hook is None else None
        self._read_at = self._clock.now()
        self._lock = asyncio.Lock()

    def _read(self) -> str | None:
        value = self._configuration.get_api_key_with_prefix("BearerToken", alias="authorization")
        return str(value) if value else None

    async def header(self) -> str | None:
        if self._configuration.refresh_api_key_hook is None:
            return self._value
        async with self._lock:
            if self._value is None or self._clock.now() - self._read_at >= self._refresh_seconds:
                self._value = await asyncio.to_thread(self._read)
                self._read_at = self._clock.now()
            return self._value


def _basic_auth(configuration: Configuration) -> aiohttp.BasicAuth | None:
    if configuration.username and configuration.password:
        return aiohttp.BasicAuth(configuration.username, configuration.password)
    return None


async def _api_error(response: aiohttp.ClientResponse) -> ApiError:
    """Turn an error answer into ApiError, using the Status body the API server sends."""
    body = await response.read()
    message, reason = body[:200].decode(errors="replace"), response.reason or ""
    try:
        status = orjson.loads(body)
        if isinstance(status, dict):
            message = str(status.get("message") or message)
            reason = str(status.get("reason") or reason)
    except orjson.JSONDecodeError:
        pass
    retry_after = response.headers.get("Retry-After")
    seconds = float(retry_after) if retry_after and retry_after.isdigit() else None
    return ApiError(response.status, reason, message, seconds)


class KubeClient:
    """Requests to one API server, with fresh credentials on each request."""

    def __init__(
        self, configuration: Configuration, token_refresh_seconds: float = 30.0, clock: Clock | None = None
    ) -> None:
        self.base_url = str(configuration.host).rstrip("/")
        self._token = BearerToken(configuration, token_refresh_seconds, clock)
        self._server_hostname = getattr(configuration, "tls_server_name", None) or None
        self._proxy = configuration.proxy or None
        self._auth = _basic_auth(configuration)
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=tls_context(configuration) or False),
            headers={"Accept": "application/json", "User-Agent": USER_AGENT},
            auth=self._auth,
        )

    @property
    def closed(self) -> bool:
        return self._session.closed

    async def _headers(self) -> dict[str, str]:
        token = await self._token.header()
        return {"Authorization": token} if token else {}

    @asynccontextmanager
    async def get(
        self, path: str, params: Mapping[str, str], timeout: aiohttp.ClientTimeout
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """An open 200 response (streamed); any other status raises ApiError."""
        extra: dict[str, Any] = {}
        if self._server_hostname:
            extra["server_hostname"] = self._server_hostname
        async with self._session.get(
            self.base_url + path,
            params=params,
            headers=await self._headers(),
            timeout=timeout,
            proxy=self._proxy,
            **extra,
        ) as response:
            if response.status != 200:
                raise await _api_error(response)
            yield response

    async def get_json(self, path: str, params: Mapping[str, str], timeout: aiohttp.ClientTimeout) -> Any:
        async with self.get(path, params, timeout) as response:
            return orjson.loads(await response.read())

    async def send_json(
        self,
        method: str,
        path: str,
        body: Any,
        timeout: aiohttp.ClientTimeout,
        content_type: str = "application/json",
        params: Mapping[str, str] | None = None,
    ) -> Any:
        """A write (POST, PUT, PATCH with its patch *content_type*, DELETE) or single-object GET; any non-2xx
        status raises ApiError. Used for the leader-election Lease, the cluster writes and the reports."""
        extra: dict[str, Any] = {}
        if self._server_hostname:
            extra["server_hostname"] = self._server_hostname
        headers = await self._headers()
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = orjson.dumps(body)
        async with self._session.request(
            method,
            self.base_url + path,
            params=params,
            data=data,
            headers=headers,
            timeout=timeout,
            proxy=self._proxy,
            **extra,
        ) as response:
            if not 200 <= response.status < 300:
                raise await _api_error(response)
            return orjson.loads(await response.read())

    async def server_version(self, timeout_seconds: float = 10.0) -> str:
        """The API server's gitVersion from GET /version (e.g. "v1.33.2")."""
        body = await self.get_json("/version", {}, aiohttp.ClientTimeout(total=timeout_seconds))
        return str(body.get("gitVersion", "")) if isinstance(body, dict) else ""

    async def close(self) -> None:
        await self._session.close()
