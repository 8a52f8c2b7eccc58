"""Where a client connects: the server URL from the environment (as the ``acms`` CLI reads it) and the grpcio
channel for a URL."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

import grpc

DEFAULT_URL = "http://127.0.0.1:50051"
"""The server address when none of ``ACMS_URL``, ``ACMS_HOST``, ``ACMS_PORT`` is set."""


def url_from_env(env: Mapping[str, str] | None = None) -> str:
    """``ACMS_URL``, else ``http://ACMS_HOST:ACMS_PORT`` (defaults 127.0.0.1 and 50051), as the CLI dials.

    A shell that exported ``ACMS_PORT`` for ``acms serve`` reaches that server without ``ACMS_URL``; a wildcard
    listen address (0.0.0.0, ::) is dialled on loopback and an IPv6 literal gets its brackets.
    """
    env = os.environ if env is None else env
    url = env.get("ACMS_URL", "").strip()
    if url:
        return url.rstrip("/")
    raw_host = env.get("ACMS_HOST", "").strip() or "127.0.0.1"
    host = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "[::]": "[::1]"}.get(raw_host, raw_host)
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    port = env.get("ACMS_PORT", "").strip() or "50051"
    if not re.fullmatch(r"\d{1,5}", port) or not 1 <= int(port) <= 65535:
        raise ValueError(f'ACMS_PORT must be a port number from 1 to 65535 (dialled when ACMS_URL is unset), got "{port}"')
    return f"http://{host}:{port}"


def _address(url: str) -> tuple[str, bool]:
    """The grpcio target of ``http(s)://host:port`` (or a bare ``host:port``), and whether it needs TLS."""
    match = re.fullmatch(r"(?:(https?)://)?([^/\s]+)/*", url.strip())
    if match is None:
        raise ValueError(f'the server URL must be http://host:port or https://host:port, got "{url}"')
    scheme, address = match.groups()
    tls = scheme == "https"
    if ":" not in address.rsplit("]", 1)[-1]:
        address += ":443" if tls else ":80"
    return address, tls


def open_channel(url: str) -> grpc.Channel:
    """A grpcio channel to ``url`` (TLS with the system roots for ``https://``)."""
    address, tls = _address(url)
    return grpc.secure_channel(address, grpc.ssl_channel_credentials()) if tls else grpc.insecure_channel(address)


def open_aio_channel(url: str) -> grpc.aio.Channel:
    """A ``grpc.aio`` channel to ``url`` (TLS with the system roots for ``https://``)."""
    address, tls = _address(url)
    if tls:
        return grpc.aio.secure_channel(address, grpc.ssl_channel_credentials())
    return grpc.aio.insecure_channel(address)
