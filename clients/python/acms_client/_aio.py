"""What the asyncio client (async_client.py) takes from ``grpc.aio``. client.py is generated from
async_client.py by generate.sh (unasync), which reads this module's name as ``_sync``: the blocking client
takes the same names from grpcio's blocking API there."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import TypeAlias, TypeVar

from grpc.aio import Channel, UnaryStreamMultiCallable, UnaryUnaryMultiCallable

from .connection import open_aio_channel as open_channel

__all__ = ["Channel", "RequestStream", "UnaryStreamMultiCallable", "UnaryUnaryMultiCallable", "open_channel", "request_iterator"]

_T = TypeVar("_T")

RequestStream: TypeAlias = Iterable[_T] | AsyncIterable[_T]
"""What a client stream sends: an iterable or an async iterable of its request messages."""


def request_iterator(messages: RequestStream[_T]) -> Iterator[_T] | AsyncIterator[_T]:
    """The iterator ``grpc.aio`` sends ``messages`` from."""
    return messages.__aiter__() if isinstance(messages, AsyncIterable) else iter(messages)
