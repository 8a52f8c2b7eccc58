"""What every client method accepts besides its request fields: per-call overrides of the client's defaults."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict


class CallOptions(TypedDict, total=False):
    """Keyword arguments every RPC method takes after its request fields, each overriding the client's default
    for that one call::

        acms.search("deploy", scope_id=other_scope, timeout=5.0)
    """

    scope_id: str
    """Sent as ``acms-scope`` instead of the client's scope."""
    api_key: str
    """Sent as ``authorization: Bearer <api_key>`` instead of the client's key."""
    timeout: float
    """Deadline of the call in seconds (for a stream: of the whole stream)."""
    headers: Sequence[tuple[str, str]]
    """More gRPC metadata (headers) for this call, e.g. a W3C ``traceparent``."""


def call_metadata(api_key: str, scope_id: str | None, options: CallOptions) -> tuple[tuple[str, str], ...]:
    """The headers of one call: key and scope from ``options`` when given, else the client's."""
    scope = options.get("scope_id", scope_id)
    return (
        ("authorization", f"Bearer {options.get('api_key', api_key)}"),
        *((("acms-scope", scope),) if scope else ()),
        *options.get("headers", ()),
    )
