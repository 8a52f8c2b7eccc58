"""What the blocking client (client.py, generated from async_client.py by generate.sh) takes from grpcio: the
names ``_aio`` gives the asyncio client, from grpcio's blocking API."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeAlias, TypeVar

from grpc import Channel, UnaryStreamMultiCallable, UnaryUnaryMultiCallable

from .connection import open_channel

__all__ = ["Channel", "RequestStream", "UnaryStreamMultiCallable", "UnaryUnaryMultiCallable", "open_channel", "request_iterator"]

_T = TypeVar("_T")

RequestStream: TypeAlias = Iterable[_T]
"""What a client stream sends: an iterable of its request messages."""


def request_iterator(messages: RequestStream[_T]) -> Iterator[_T]:
    """The iterator grpcio sends ``messages`` from."""
    return iter(messages)
