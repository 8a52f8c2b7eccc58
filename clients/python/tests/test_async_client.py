"""The asyncio client against a live server: the same contract as the blocking one, awaited and async-iterated."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest
from live_server import DOC, OUTSIDE_RESOURCE, VOCAB, Seed, Server

from acms_client import AcmsError, AsyncAcmsClient, BadRequestError, ScopeViolationError, tier_name
from acms_client.gen.acms.v1 import index_pb2


@pytest.mark.asyncio
async def test_resolve_scope_and_read_it_back(async_acms: AsyncAcmsClient, seed: Seed) -> None:
    scope = (await async_acms.resolve_scope([seed.project], include_paths=["*.md"])).scope
    assert list(scope.resource_ids) == [seed.resource_id]
    assert list(scope.include_paths) == ["*.md"]
    assert (await async_acms.get_scope(scope.scope_id)).scope.scope_id == scope.scope_id
    assert (await async_acms.resolve_alias(seed.project, "handbook")).resource_id == seed.resource_id


@pytest.mark.asyncio
async def test_each_search_kind_unary_and_streamed(async_acms: AsyncAcmsClient, seed: Seed, server: Server) -> None:
    scoped = async_acms.with_scope(seed.scope_id)
    text = await scoped.search("onboarding checklist", max_results=3)
    assert (text.scope_id, text.results[0].path) == (seed.scope_id, "onboarding.md")
    assert [m.result.uko_uri async for m in scoped.search_stream("onboarding checklist", max_results=3)] == [r.uko_uri for r in text.results]
    vector = await scoped.similarity_search(server.unit_vector(3), top_k=1)
    assert [r.path for r in vector.results] == ["style.md"]
    assert [m.result.path async for m in scoped.similarity_search_stream(server.unit_vector(3), top_k=1)] == ["style.md"]
    hybrid = await scoped.hybrid_search("deploys release pipeline", embedding=server.unit_vector(1), top_k=2)
    assert hybrid.results[0].path == "deploy.md"
    assert [m.result.uko_uri async for m in scoped.hybrid_search_stream("deploys release pipeline", embedding=server.unit_vector(1), top_k=2)][0] == hybrid.results[0].uko_uri
    fetched = await scoped.fetch_content([hybrid.results[0].uko_uri])
    assert [item.uko_uri for item in fetched.items] == [hybrid.results[0].uko_uri]


@pytest.mark.asyncio
async def test_graph_unary_and_streamed(async_acms: AsyncAcmsClient, seed: Seed) -> None:
    scoped = async_acms.with_scope(seed.scope_id)
    query = f"SELECT ?o WHERE {{ <{DOC}deploy> <{VOCAB}next> ?o }}"
    assert [row.bindings["o"].value for row in (await scoped.sparql_query(query)).rows] == [f"{DOC}oncall"]
    streamed = [m async for m in scoped.sparql_query_stream(query)]
    assert list(streamed[0].variables.names) == ["o"]
    assert [m.row.bindings["o"].value for m in streamed[1:]] == [f"{DOC}oncall"]
    assert len((await scoped.get_triples(f"{DOC}deploy")).triples) == 1
    assert len((await scoped.traverse(f"{DOC}deploy", depth=1)).triples) >= 1


@pytest.mark.asyncio
async def test_a_refusal_is_a_scope_violation_error_with_its_fields(async_acms: AsyncAcmsClient, seed: Seed, server: Server) -> None:
    with pytest.raises(ScopeViolationError) as refused:
        await async_acms.validate_resource_scope([OUTSIDE_RESOURCE], scope_id=seed.scope_id)
    assert refused.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert (refused.value.resource_ids, refused.value.scope_project_names) == ([OUTSIDE_RESOURCE], [seed.project])
    with pytest.raises(ScopeViolationError) as projects:
        await async_acms.validate_project_scope([seed.project, server.outside_project], scope_id=seed.scope_id)
    assert projects.value.project_names == [server.outside_project]


@pytest.mark.asyncio
async def test_bad_requests_and_other_failures(async_acms: AsyncAcmsClient, seed: Seed) -> None:
    with pytest.raises(BadRequestError) as bad:
        await async_acms.similarity_search([], scope_id=seed.scope_id)
    assert bad.value.fields == ["embedding"]
    with pytest.raises(BadRequestError) as streamed:
        async for _ in async_acms.search_stream("onboarding", max_results=-1, scope_id=seed.scope_id):
            pass
    assert streamed.value.fields == ["max_results"]
    with pytest.raises(AcmsError) as no_scope:
        await async_acms.get_metrics()
    assert no_scope.value.code == grpc.StatusCode.FAILED_PRECONDITION


@pytest.mark.asyncio
async def test_the_scope_of_a_call_overrides_the_client_scope(async_acms: AsyncAcmsClient, seed: Seed) -> None:
    scoped = async_acms.with_scope(seed.scope_id)
    narrowed = (await scoped.narrow_scope(deny_resource_ids=[seed.resource_id])).scope
    assert list(narrowed.resource_ids) == []
    assert (await scoped.search("engineer")).results
    with pytest.raises(ScopeViolationError):
        # Everything denied while the scope had resources: refused on every call that uses it.
        await scoped.search("engineer", scope_id=narrowed.scope_id)


@pytest.mark.asyncio
async def test_concurrent_calls_share_one_channel(async_acms: AsyncAcmsClient, seed: Seed) -> None:
    scoped = async_acms.with_scope(seed.scope_id)
    answers = await asyncio.gather(*(scoped.search(q, max_results=1) for q in ["onboarding", "deploys", "pages", "formatter"]))
    assert [a.results[0].path for a in answers] == ["onboarding.md", "deploy.md", "oncall.md", "style.md"]


@pytest.mark.asyncio
async def test_tiers_store_and_recall(async_acms: AsyncAcmsClient, seed: Seed) -> None:
    scoped = async_acms.with_scope(seed.scope_id)
    stored = (await scoped.store_fragment("async plan", project_name=seed.project, tier="warm")).fragment
    assert tier_name(stored.tier) == "warm"
    assert (await scoped.get_fragment(stored.fragment_id)).fragment.content == "async plan"
    strategist = (await scoped.get_for_actor("strategist", project_names=[seed.project])).fragments
    reviewer = (await scoped.get_for_actor("reviewer", project_names=[seed.project])).fragments
    assert stored.fragment_id in [f.fragment_id for f in strategist]
    assert stored.fragment_id not in [f.fragment_id for f in reviewer]
    assert (await scoped.get_metrics()).warm_population >= 1


async def notes_resource(acms: AsyncAcmsClient, server: Server, alias: str) -> tuple[str, str]:
    """A new project and one resource registered in it: (project, resource id)."""
    project = server.new_project()
    await acms.create_project(project)
    return project, (await acms.register_resource(project, alias, "notes")).resource.id


@pytest.mark.asyncio
async def test_search_grouped_by_document(async_acms: AsyncAcmsClient, server: Server) -> None:
    project, resource_id = await notes_resource(async_acms, server, "grouped")
    chunks = [index_pb2.ChunkInput(text="zgroupq zgroupq"), index_pb2.ChunkInput(text="zgroupq")]
    documents = [index_pb2.DocumentInput(path="two.md", content="two chunks", chunks=chunks), index_pb2.DocumentInput(path="one.md", content="zgroupq and more")]

    async def messages() -> AsyncIterator[index_pb2.UpsertDocumentsRequest]:
        yield index_pb2.UpsertDocumentsRequest(resource_id=resource_id, documents=documents)

    await async_acms.upsert_documents(messages())
    scoped = async_acms.with_scope((await async_acms.resolve_scope([project])).scope.scope_id)
    assert len((await scoped.search("zgroupq")).results) == 3
    grouped = await scoped.search("zgroupq", group_by_document=True)
    assert [(r.path, r.content) for r in grouped.results] == [("two.md", "zgroupq zgroupq"), ("one.md", "zgroupq and more")]
    assert [m.result.path async for m in scoped.search_stream("zgroupq", max_results=1, group_by_document=True)] == ["two.md"]


@pytest.mark.asyncio
async def test_upsert_documents_takes_an_async_iterable(async_acms: AsyncAcmsClient, server: Server) -> None:
    project, resource_id = await notes_resource(async_acms, server, "async-notes")

    async def messages() -> AsyncIterator[index_pb2.UpsertDocumentsRequest]:
        for i in range(3):
            yield index_pb2.UpsertDocumentsRequest(resource_id=resource_id, documents=[index_pb2.DocumentInput(path=f"a{i}.md", content=f"async note zasync{i}q")])

    written = await async_acms.upsert_documents(messages())
    assert (written.documents_upserted, written.messages_received) == (3, 3)
    scope_id = (await async_acms.resolve_scope([project])).scope.scope_id
    assert [r.path for r in (await async_acms.search("zasync2q", scope_id=scope_id)).results] == ["a2.md"]
