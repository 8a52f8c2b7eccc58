"""Every RPC of every service in proto/acms/v1 has a method on both clients, named after it (no server needed)."""

from __future__ import annotations

import inspect
import re

import pytest

from acms_client import AcmsClient, AsyncAcmsClient
from acms_client.gen.acms.v1 import graph_pb2, index_pb2, rag_pb2, registry_pb2, scope_pb2, text_pb2, tiers_pb2, vector_pb2

MODULES = [graph_pb2, index_pb2, rag_pb2, registry_pb2, scope_pb2, text_pb2, tiers_pb2, vector_pb2]
RPCS = [(service.name, method) for module in MODULES for service in module.DESCRIPTOR.services_by_name.values() for method in service.methods]


def snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def test_the_services_hold_the_rpcs_counted_in_the_contract() -> None:
    assert len(RPCS) == 39


@pytest.mark.parametrize(("service", "method"), RPCS, ids=[f"{s}.{m.name}" for s, m in RPCS])
def test_both_clients_wrap_the_rpc(service: str, method: object) -> None:
    name = snake_case(getattr(method, "name"))
    server_streaming = getattr(method, "server_streaming")
    sync, aio = getattr(AcmsClient, name, None), getattr(AsyncAcmsClient, name, None)
    assert sync is not None and aio is not None, f"{service}.{getattr(method, 'name')} has no {name} method"
    # Unary and client-streaming RPCs are coroutines on the asyncio client; server streams are async iterators.
    assert inspect.iscoroutinefunction(aio) != server_streaming
