"""Fixtures of the live-server tests: the server named by ACMS_URL, a project seeded through the client itself,
and sync and asyncio clients.

Environment: ACMS_URL (unset: every test that needs a server is skipped), ACMS_API_KEY (a key with write access
to ACMS_PROJECT's namespace), ACMS_PROJECT (the base name of the projects the tests create, default
local/pysdk; a random suffix keeps reruns against one server apart), ACMS_OUTSIDE_PROJECT (a project the key's
scopes never hold, default other/secret), ACMS_EMBEDDING_DIM (the server's vector dimension, default 384).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from live_server import DOCS, Seed, Server, triple

from acms_client import AcmsClient, AsyncAcmsClient, document_batches
from acms_client.gen.acms.v1 import index_pb2


@pytest.fixture(scope="session")
def server() -> Server:
    url = os.environ.get("ACMS_URL", "").strip()
    if not url:
        pytest.skip("ACMS_URL is unset: no server to test against")
    return Server(
        url=url,
        api_key=os.environ.get("ACMS_API_KEY", ""),
        project_base=os.environ.get("ACMS_PROJECT", "") or "local/pysdk",
        outside_project=os.environ.get("ACMS_OUTSIDE_PROJECT", "") or "other/secret",
        embedding_dim=int(os.environ.get("ACMS_EMBEDDING_DIM", "") or "384"),
    )


@pytest.fixture(scope="session")
def seed(server: Server) -> Seed:
    project = server.new_project()
    with AcmsClient(server.url, server.api_key) as acms:
        acms.create_project(project)
        resource_id = acms.register_resource(project, "handbook", "docs").resource.id
        documents = [
            index_pb2.DocumentInput(path=path, content=content, chunks=[index_pb2.ChunkInput(text=content, embedding=server.unit_vector(i))])
            for i, (path, content) in enumerate(DOCS.items())
        ]
        acms.upsert_documents(document_batches(resource_id, documents))
        acms.put_triples(
            resource_id,
            [
                triple("onboarding", "next", "deploy"),
                triple("deploy", "next", "oncall"),
                triple("onboarding", "title", "Onboarding", literal=True),
            ],
        )
        scope_id = acms.resolve_scope([project]).scope.scope_id
    return Seed(project, resource_id, scope_id)


@pytest.fixture
def acms(server: Server) -> Iterator[AcmsClient]:
    """A blocking client with the key and no default scope."""
    with AcmsClient(server.url, server.api_key) as client:
        yield client


@pytest_asyncio.fixture
async def async_acms(server: Server) -> AsyncIterator[AsyncAcmsClient]:
    """An asyncio client with the key and no default scope (made inside the test's event loop)."""
    async with AsyncAcmsClient(server.url, server.api_key) as client:
        yield client
