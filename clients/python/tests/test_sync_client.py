"""The blocking client against a live server: every service, the headers, typed results and typed errors."""

from __future__ import annotations

import grpc
import pytest

from acms_client import AcmsClient, AcmsError, BadRequestError, ScopeViolationError, document_batches, tier_name
from acms_client.gen.acms.v1 import index_pb2, tiers_pb2

from live_server import DOC, DOCS, OUTSIDE_RESOURCE, VOCAB, Seed, Server, triple


def test_registry_lists_and_resolves_the_seeded_project(acms: AcmsClient, seed: Seed) -> None:
    assert seed.project in [p.name for p in acms.list_projects().projects]
    resources = acms.list_resources(seed.project).resources
    assert [(r.id, r.alias, r.kind) for r in resources] == [(seed.resource_id, "handbook", "docs")]
    assert acms.resolve_alias(seed.project, "handbook").resource_id == seed.resource_id
    assert list(acms.validate_aliases(seed.project).errors) == []


def test_resolve_scope_stores_a_scope_get_scope_reads_back(acms: AcmsClient, seed: Seed) -> None:
    scope = acms.resolve_scope([seed.project], exclude_paths=["style.md"]).scope
    assert len(scope.scope_id) == 26
    assert list(scope.resource_ids) == [seed.resource_id]
    assert list(scope.project_names) == [seed.project]
    assert list(scope.exclude_paths) == ["style.md"]
    again = acms.get_scope(scope.scope_id).scope
    assert (again.scope_id, list(again.resource_ids)) == (scope.scope_id, [seed.resource_id])


def test_text_search_ranks_in_the_scope_and_says_which(acms: AcmsClient, seed: Seed) -> None:
    found = acms.search("onboarding checklist", max_results=3, scope_id=seed.scope_id)
    assert found.scope_id == seed.scope_id
    assert found.results[0].path == "onboarding.md"
    assert found.results[0].uko_uri.startswith(f"uko://{seed.resource_id}/onboarding.md")
    assert all(0.0 <= r.score <= 1.0 for r in found.results)


def test_search_stream_yields_the_unary_results_in_order(acms: AcmsClient, seed: Seed) -> None:
    unary = acms.search("engineer", max_results=4, scope_id=seed.scope_id).results
    streamed = [m.result for m in acms.search_stream("engineer", max_results=4, scope_id=seed.scope_id)]
    assert len(streamed) >= 2
    assert [r.uko_uri for r in streamed] == [r.uko_uri for r in unary]


def test_similarity_search_finds_the_nearest_vector(acms: AcmsClient, seed: Seed, server: Server) -> None:
    found = acms.similarity_search(server.unit_vector(1), top_k=2, scope_id=seed.scope_id)
    assert found.results[0].path == "deploy.md"
    assert found.results[0].score == pytest.approx(1.0)
    streamed = [m.result.path for m in acms.similarity_search_stream(server.unit_vector(2), top_k=1, scope_id=seed.scope_id)]
    assert streamed == ["oncall.md"]


def test_hybrid_search_fuses_sources_and_streams(acms: AcmsClient, seed: Seed, server: Server) -> None:
    found = acms.hybrid_search("onboarding checklist", embedding=server.unit_vector(0), top_k=3, sources=["text", "vector"], scope_id=seed.scope_id)
    best = found.results[0]
    assert best.path == "onboarding.md"
    assert sorted(c.source for c in best.contributions) == sorted([1, 2])
    streamed = [m.result.uko_uri for m in acms.hybrid_search_stream("onboarding checklist", top_k=3, sources=["text"], weights={"text": 2.0}, scope_id=seed.scope_id)]
    assert streamed[0] == best.uko_uri


def test_fetch_content_keeps_the_order_asked_and_lists_the_missing(acms: AcmsClient, seed: Seed) -> None:
    uris = [f"uko://{seed.resource_id}/deploy.md", f"uko://{seed.resource_id}/onboarding.md", f"uko://{seed.resource_id}/absent.md"]
    fetched = acms.fetch_content(uris, scope_id=seed.scope_id)
    assert [item.path for item in fetched.items] == ["deploy.md", "onboarding.md"]
    assert fetched.items[0].content == DOCS["deploy.md"]
    assert list(fetched.missing) == [uris[2]]


def test_graph_queries_see_the_resource_graph(acms: AcmsClient, seed: Seed) -> None:
    select = acms.sparql_query(f"SELECT ?o WHERE {{ <{DOC}onboarding> <{VOCAB}next> ?o }}", scope_id=seed.scope_id)
    assert list(select.variables) == ["o"]
    assert [row.bindings["o"].value for row in select.rows] == [f"{DOC}deploy"]
    assert acms.sparql_query(f"ASK {{ <{DOC}deploy> <{VOCAB}next> <{DOC}oncall> }}", scope_id=seed.scope_id).boolean
    streamed = list(acms.sparql_query_stream(f"SELECT ?s WHERE {{ ?s <{VOCAB}next> ?o }} ORDER BY ?s", scope_id=seed.scope_id))
    assert [m.WhichOneof("item") for m in streamed] == ["variables", "row", "row"]
    assert [m.row.bindings["s"].value for m in streamed[1:]] == [f"{DOC}deploy", f"{DOC}onboarding"]
    about = acms.get_triples(f"{DOC}onboarding", scope_id=seed.scope_id)
    assert sorted(t.predicate.value for t in about.triples) == [f"{VOCAB}next", f"{VOCAB}title"]
    near = acms.traverse(f"{DOC}onboarding", depth=0, scope_id=seed.scope_id)
    far = acms.traverse(f"{DOC}onboarding", depth=2, scope_id=seed.scope_id)
    assert len(near.triples) == 2
    assert f"{DOC}oncall" in [t.object.value for t in far.triples]


def test_a_refusal_is_a_scope_violation_error_with_its_fields(acms: AcmsClient, seed: Seed, server: Server) -> None:
    with pytest.raises(ScopeViolationError) as refused:
        acms.validate_resource_scope([seed.resource_id, OUTSIDE_RESOURCE], scope_id=seed.scope_id)
    assert refused.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert refused.value.resource_ids == [OUTSIDE_RESOURCE]
    assert refused.value.scope_project_names == [seed.project]
    assert refused.value.project_names == []
    with pytest.raises(ScopeViolationError) as projects:
        acms.validate_project_scope([server.outside_project], scope_id=seed.scope_id)
    assert projects.value.project_names == [server.outside_project]
    with pytest.raises(ScopeViolationError) as fetch:
        acms.fetch_content([f"uko://{OUTSIDE_RESOURCE}/secret.md"], scope_id=seed.scope_id)
    assert fetch.value.resource_ids == [OUTSIDE_RESOURCE]
    # A scope check that passes answers the empty response.
    acms.validate_resource_scope([seed.resource_id], scope_id=seed.scope_id)


def test_an_invalid_field_is_a_bad_request_error_naming_it(acms: AcmsClient, seed: Seed) -> None:
    with pytest.raises(BadRequestError) as bad:
        acms.search("onboarding", max_results=0, scope_id=seed.scope_id)
    assert bad.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert bad.value.fields == ["max_results"]
    assert bad.value.field_violations[0].description
    # The same refusal arrives while iterating a stream.
    with pytest.raises(BadRequestError) as streamed:
        list(acms.search_stream("", scope_id=seed.scope_id))
    assert streamed.value.fields == ["query"]


def test_other_failures_are_acms_errors_with_their_code(acms: AcmsClient, seed: Seed) -> None:
    with pytest.raises(AcmsError) as no_scope:
        acms.search("onboarding")
    assert no_scope.value.code == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(AcmsError) as bad_key:
        acms.list_projects(api_key="acms_not_a_key")
    assert bad_key.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert str(bad_key.value).startswith("unauthenticated: ")
    with pytest.raises(AcmsError) as unknown:
        acms.resolve_alias(seed.project, "no-such-alias")
    assert unknown.value.code == grpc.StatusCode.NOT_FOUND


def test_the_scope_of_a_call_overrides_the_client_scope(acms: AcmsClient, seed: Seed) -> None:
    scoped = acms.with_scope(seed.scope_id)
    narrowed = scoped.narrow_scope(exclude_paths=["onboarding.md"]).scope
    assert narrowed.parent_scope_id == seed.scope_id
    assert [r.path for r in scoped.search("onboarding checklist").results][:1] == ["onboarding.md"]
    assert "onboarding.md" not in [r.path for r in scoped.search("onboarding checklist", scope_id=narrowed.scope_id).results]
    # The client's own scope is untouched by the override.
    assert scoped.search("onboarding checklist").scope_id == seed.scope_id


def test_tiers_store_recall_move_and_count(acms: AcmsClient, seed: Seed) -> None:
    scoped = acms.with_scope(seed.scope_id)
    plan = scoped.store_fragment("Plan: read the onboarding checklist", project_name=seed.project, tier="hot", metadata={"kind": "plan"}).fragment
    note = scoped.store_fragment("Evidence: deploy.md", project_name=seed.project, tier=tiers_pb2.TIER_WARM, resource_id=seed.resource_id).fragment
    assert (tier_name(plan.tier), tier_name(note.tier)) == ("hot", "warm")
    assert plan.token_count > 0 and plan.metadata["kind"] == "plan"
    assert scoped.get_fragment(plan.fragment_id).fragment.content == "Plan: read the onboarding checklist"
    executor = [f.fragment_id for f in scoped.get_for_actor("executor", project_names=[seed.project]).fragments]
    reviewer = [f.fragment_id for f in scoped.get_for_actor("reviewer").fragments]
    assert {plan.fragment_id, note.fragment_id} <= set(executor)
    assert plan.fragment_id in reviewer and note.fragment_id not in reviewer
    assert tier_name(scoped.promote_fragment(note.fragment_id).fragment.tier) == "hot"
    assert tier_name(scoped.demote_fragment(note.fragment_id).fragment.tier) == "warm"
    metrics = scoped.get_metrics()
    assert metrics.hot_population >= 1 and metrics.hot_hits >= 1
    cold = scoped.store_fragment("an old note", project_name=seed.project, tier="cold").fragment
    evicted = scoped.evict_lru("cold", 10).fragment_ids
    assert cold.fragment_id in list(evicted)


def test_writes_create_link_upsert_delete_and_rebuild(acms: AcmsClient, server: Server) -> None:
    project, other = server.new_project(), server.new_project()
    assert acms.create_project(project).project.name == project
    acms.create_project(other)
    resource = acms.register_resource(project, "notes", "docs", metadata={"origin": "python"}).resource
    assert (resource.alias, resource.metadata["origin"], resource.owner_project) == ("notes", "python", project)
    link = acms.link_resource(other, resource.id, "shared-notes").link
    assert (link.project, link.resource_id, link.alias) == (other, resource.id, "shared-notes")
    docs = (index_pb2.DocumentInput(path=f"n{i}.md", content=f"python note {i} mentions zpy{i}q") for i in range(5))
    written = acms.upsert_documents(document_batches(resource.id, docs, batch_size=2))
    assert (written.documents_upserted, written.messages_received) == (5, 3)
    assert acms.delete_documents(resource.id, ["n4.md", "absent.md"]).count == 1
    put = acms.put_triples(resource.id, [triple("n1", "mentions", "zpy1q", literal=True)], replace=True)
    assert put.count == 1
    rebuilt = acms.rebuild([resource.id])
    assert rebuilt.resources_rebuilt == 1 and rebuilt.index_generation >= written.index_generation
    scope_id = acms.resolve_scope([other]).scope.scope_id
    assert [r.path for r in acms.search("zpy3q", scope_id=scope_id).results] == ["n3.md"]
    assert acms.search("zpy4q", scope_id=scope_id).results == []
