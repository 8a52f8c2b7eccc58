"""Python grpcio interop client for the ACMS server, run by test/interop/python-client.test.ts.

Uses only grpcio, protobuf and googleapis-common-protos (the pinned venv of clients/python/dev-venv.sh) and
the raw stubs generated into clients/python/acms_client/gen (imported from the source tree, not through the
client wrapper).
Registers two tenants, resolves, narrows and validates scopes, gets refused with a decodable
ScopeViolation naming every out-of-scope id, sends bad input of every kind and checks the codes and
BadRequest fields, then checks the server still serves. Prints one line per check; exits 1 on the first
failure.

Then indexes documents with a client stream and searches them (text, vector, hybrid, fetch; unary and
server streams) inside a scope, checking nothing of another tenant ever comes back.

Usage: interop_client.py HOST:PORT   (keys in ACMS_KEY_ADMIN, ACMS_KEY_WRITER, ACMS_KEY_READER, ACMS_KEY_OTHER;
the server's ACMS_EMBEDDING_DIM must be 4)
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
GEN = os.path.join(ROOT, "clients", "python", "acms_client", "gen")
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))

import grpc  # noqa: E402
import google.protobuf  # noqa: E402
from acms_client.gen.acms.v1 import errors_pb2, index_pb2, index_pb2_grpc, rag_pb2, rag_pb2_grpc, registry_pb2, registry_pb2_grpc  # noqa: E402
from acms_client.gen.acms.v1 import scope_pb2, scope_pb2_grpc, text_pb2, text_pb2_grpc, vector_pb2, vector_pb2_grpc  # noqa: E402
from google.rpc import error_details_pb2, status_pb2  # noqa: E402

CHECKS = 0


def check(cond, what):
    global CHECKS
    if not cond:
        print(f"FAIL: {what}", flush=True)
        sys.exit(1)
    CHECKS += 1
    print(f"ok: {what}", flush=True)


def md(key=None, scope=None):
    out = []
    if key is not None:
        out.append(("authorization", f"Bearer {key}"))
    if scope is not None:
        out.append(("acms-scope", scope))
    return out


def details(err):
    """The google.rpc.Status of a failed call, from the grpc-status-details-bin trailer."""
    for k, v in err.trailing_metadata() or ():
        if k == "grpc-status-details-bin":
            status = status_pb2.Status()
            status.ParseFromString(v)
            return status
    return None


def scope_violation(err):
    status = details(err)
    for any_msg in status.details if status else ():
        v = errors_pb2.ScopeViolation()
        if any_msg.Unpack(v):
            return v
    return None


def bad_fields(err):
    status = details(err)
    for any_msg in status.details if status else ():
        br = error_details_pb2.BadRequest()
        if any_msg.Unpack(br):
            return [fv.field for fv in br.field_violations]
    return []


def fails(call, request, metadata):
    try:
        call(request, metadata=metadata, timeout=10)
    except grpc.RpcError as err:
        return err
    raise AssertionError(f"expected {call} to fail")


def expect_invalid(call, request, metadata, field):
    err = fails(call, request, metadata)
    fields = bad_fields(err)
    check(
        err.code() == grpc.StatusCode.INVALID_ARGUMENT and any(f.startswith(field) for f in fields),
        f"{call._method.decode()} with a bad {field} is INVALID_ARGUMENT naming it ({err.code().name}, {fields})",
    )


def index_and_search(channel, keys):
    """Client-stream indexing, then scoped text, vector and hybrid search and fetch, unary and streamed."""
    reg = registry_pb2_grpc.RegistryServiceStub(channel)
    index = index_pb2_grpc.IndexServiceStub(channel)
    text = text_pb2_grpc.TextBackendServiceStub(channel)
    vector = vector_pb2_grpc.VectorBackendServiceStub(channel)
    rag = rag_pb2_grpc.RagServiceStub(channel)
    scopes = scope_pb2_grpc.ScopeServiceStub(channel)
    admin, writer = md(keys["admin"]), md(keys["writer"])

    reg.CreateProject(registry_pb2.CreateProjectRequest(name="local/pysearch"), metadata=admin)
    reg.CreateProject(registry_pb2.CreateProjectRequest(name="other/pysearch"), metadata=admin)
    docs = reg.RegisterResource(registry_pb2.RegisterResourceRequest(project="local/pysearch", alias="docs", kind="docs"), metadata=admin).resource
    secret = reg.RegisterResource(registry_pb2.RegisterResourceRequest(project="other/pysearch", alias="secret", kind="docs"), metadata=admin).resource

    def doc(path, chunk_text, embedding):
        return index_pb2.DocumentInput(path=path, content=chunk_text, metadata={"lang": "en"}, chunks=[index_pb2.ChunkInput(text=chunk_text, embedding=embedding)])

    upserted = index.UpsertDocuments(
        iter([
            index_pb2.UpsertDocumentsRequest(resource_id=docs.id, documents=[doc("guide/fox.md", "the quick brown fox jumps over the fence", [1, 0, 0, 0])]),
            index_pb2.UpsertDocumentsRequest(resource_id=docs.id, documents=[doc("notes/dog.md", "the lazy dog sleeps all day long", [0, 1, 0, 0])]),
        ]),
        metadata=writer,
    )
    check(upserted.documents_upserted == 2 and upserted.messages_received == 2 and upserted.vectors_indexed == 2, f"UpsertDocuments takes a client stream ({upserted.documents_upserted} documents)")
    index.UpsertDocuments(
        iter([index_pb2.UpsertDocumentsRequest(resource_id=secret.id, documents=[doc("secret.md", "the quick brown fox secret plans", [1, 0, 0, 0])])]),
        metadata=admin,
    )
    err = fails(index.UpsertDocuments, iter([index_pb2.UpsertDocumentsRequest(resource_id=secret.id, documents=[doc("x.md", "x", [1, 0, 0, 0])])]), writer)
    check(err.code() == grpc.StatusCode.PERMISSION_DENIED and list(scope_violation(err).resource_ids) == [secret.id], "writing into another tenant's resource is refused and named")

    scope = scopes.ResolveScope(scope_pb2.ResolveScopeRequest(projects=["local/pysearch"]), metadata=writer).scope
    scoped = md(keys["writer"], scope.scope_id)
    prefix = f"uko://{docs.id}/"

    found = text.Search(text_pb2.SearchRequest(query="fox"), metadata=scoped)
    check([r.path for r in found.results] == ["guide/fox.md"] and found.results[0].uko_uri.startswith(prefix), "text search finds the in-scope document only")
    check(found.scope_id == scope.scope_id and 0 <= found.results[0].score <= 1, "text search names its scope and scores in [0, 1]")
    streamed = [m.result.uko_uri for m in text.SearchStream(text_pb2.SearchStreamRequest(query="fox"), metadata=scoped)]
    check(streamed == [r.uko_uri for r in found.results], "SearchStream streams the same results")

    near = vector.SimilaritySearch(vector_pb2.SimilaritySearchRequest(embedding=[0.9, 0.1, 0, 0], top_k=5), metadata=scoped)
    check([r.path for r in near.results][:1] == ["guide/fox.md"] and all(r.resource_id == docs.id for r in near.results), "vector search ranks by cosine inside the scope")
    check(all(0 <= r.score <= 1 for r in near.results), "vector scores are in [0, 1], negatives never returned")
    streamed = [m.result.path for m in vector.SimilaritySearchStream(vector_pb2.SimilaritySearchStreamRequest(embedding=[0.9, 0.1, 0, 0], top_k=5), metadata=scoped)]
    check(streamed == [r.path for r in near.results], "SimilaritySearchStream streams the same results")

    hybrid = rag.HybridSearch(rag_pb2.HybridSearchRequest(query="fox", embedding=[1, 0, 0, 0], top_k=5), metadata=scoped)
    check(hybrid.results and hybrid.results[0].path == "guide/fox.md" and all(r.resource_id == docs.id for r in hybrid.results), "hybrid search fuses text and vector inside the scope")
    uri = found.results[0].uko_uri.split("#")[0]
    fetched = rag.FetchContent(rag_pb2.FetchContentRequest(uko_uris=[uri, prefix + "nope.md"]), metadata=scoped)
    check([i.path for i in fetched.items] == ["guide/fox.md"] and list(fetched.missing) == [prefix + "nope.md"], "FetchContent returns items and missing")
    err = fails(rag.FetchContent, rag_pb2.FetchContentRequest(uko_uris=[uri, f"uko://{secret.id}/secret.md"]), scoped)
    check(err.code() == grpc.StatusCode.PERMISSION_DENIED and list(scope_violation(err).resource_ids) == [secret.id], "fetching another tenant's URI is refused and named")

    expect_invalid(rag.FetchContent, rag_pb2.FetchContentRequest(uko_uris=["not a uri"]), scoped, "uko_uris")
    expect_invalid(text.Search, text_pb2.SearchRequest(query=""), scoped, "query")
    expect_invalid(text.Search, text_pb2.SearchRequest(query="fox", max_results=0), scoped, "max_results")
    expect_invalid(text.Search, text_pb2.SearchRequest(query="fox", max_results=1_000_000), scoped, "max_results")
    expect_invalid(vector.SimilaritySearch, vector_pb2.SimilaritySearchRequest(embedding=[]), scoped, "embedding")
    expect_invalid(vector.SimilaritySearch, vector_pb2.SimilaritySearchRequest(embedding=[1, 0]), scoped, "embedding")
    expect_invalid(vector.SimilaritySearch, vector_pb2.SimilaritySearchRequest(embedding=[1, 0, 0, 0], top_k=-1), scoped, "top_k")
    expect_invalid(rag.HybridSearch, rag_pb2.HybridSearchRequest(query="fox", rrf_k=0), scoped, "rrf_k")
    err = fails(text.Search, text_pb2.SearchRequest(query="fox"), writer)
    check(err.code() == grpc.StatusCode.FAILED_PRECONDITION, "a search without acms-scope is FAILED_PRECONDITION")


def main():
    address = sys.argv[1]
    keys = {name: os.environ[f"ACMS_KEY_{name.upper()}"] for name in ("admin", "writer", "reader", "other")}
    check(GEN not in os.path.abspath(google.protobuf.__file__), "the generated google/rpc stubs do not shadow google.protobuf")

    with grpc.insecure_channel(address) as channel:
        index_and_search(channel, keys)
        reg = registry_pb2_grpc.RegistryServiceStub(channel)
        scopes = scope_pb2_grpc.ScopeServiceStub(channel)
        admin, writer = md(keys["admin"]), md(keys["writer"])

        # Two tenants: local/py (a, and b below a) and other/py (c).
        reg.CreateProject(registry_pb2.CreateProjectRequest(name="local/py"), metadata=admin)
        reg.CreateProject(registry_pb2.CreateProjectRequest(name="other/py"), metadata=admin)
        a = reg.RegisterResource(registry_pb2.RegisterResourceRequest(project="local/py", alias="a", kind="repo"), metadata=admin).resource
        b = reg.RegisterResource(
            registry_pb2.RegisterResourceRequest(project="local/py", alias="b", kind="docs", parent_ids=[a.id], metadata={"lang": "en"}),
            metadata=admin,
        ).resource
        c = reg.RegisterResource(registry_pb2.RegisterResourceRequest(project="other/py", alias="c", kind="repo"), metadata=admin).resource
        check(len(a.id) == 26 and b.parent_ids == [a.id] and dict(b.metadata) == {"lang": "en"}, "RegisterResource assigns ULIDs and keeps parents and metadata")
        check(reg.ResolveAlias(registry_pb2.ResolveAliasRequest(project="local/py", alias_or_id="b"), metadata=writer).resource_id == b.id, "ResolveAlias")
        listed = [p.name for p in reg.ListProjects(registry_pb2.ListProjectsRequest(), metadata=writer).projects]
        check("local/py" in listed and "other/py" not in listed, "ListProjects shows only the key's projects")

        # Resolve, narrow, validate.
        scope = scopes.ResolveScope(scope_pb2.ResolveScopeRequest(projects=["local/py"]), metadata=writer).scope
        check(sorted(scope.resource_ids) == sorted([a.id, b.id]) and scope.temporal_scope == "current", "ResolveScope collects the project's resources")
        only_b = scopes.ResolveScope(scope_pb2.ResolveScopeRequest(projects=["local/py"], include_resources=["local/py:b"]), metadata=writer).scope
        check(list(only_b.resource_ids) == [b.id], "include_resources keeps only the named resource")
        denied = scopes.ResolveScope(scope_pb2.ResolveScopeRequest(projects=["local/py"], exclude_resources=["a"]), metadata=writer).scope
        check(list(denied.resource_ids) == [], "exclude_resources drops a resource with its descendants")
        child = scopes.NarrowScope(scope_pb2.NarrowScopeRequest(deny_resource_ids=[b.id], exclude_paths=["**/*.tmp"]), metadata=md(keys["writer"], scope.scope_id)).scope
        check(list(child.resource_ids) == [a.id] and child.parent_scope_id == scope.scope_id, "NarrowScope denies b and names its parent")
        check(scopes.GetScope(scope_pb2.GetScopeRequest(scope_id=child.scope_id), metadata=writer).scope.exclude_paths == ["**/*.tmp"], "GetScope returns the stored child")
        scopes.ValidateResourceScope(scope_pb2.ValidateResourceScopeRequest(requested_resource_ids=[a.id, b.id]), metadata=md(keys["writer"], scope.scope_id))
        scopes.ValidateProjectScope(scope_pb2.ValidateProjectScopeRequest(requested_projects=["local/py"]), metadata=md(keys["writer"], scope.scope_id))
        check(True, "ValidateResourceScope and ValidateProjectScope accept what is in scope")

        # Refusals carry a ScopeViolation naming every offender.
        ghost = "01" + "J" * 24
        err = fails(scopes.ValidateResourceScope, scope_pb2.ValidateResourceScopeRequest(requested_resource_ids=[c.id, a.id, ghost, b.id]), md(keys["writer"], child.scope_id))
        v = scope_violation(err)
        check(err.code() == grpc.StatusCode.PERMISSION_DENIED and v is not None, "out-of-scope ids are PERMISSION_DENIED with a ScopeViolation")
        check(list(v.resource_ids) == [c.id, ghost, b.id], f"the ScopeViolation names every out-of-scope id ({list(v.resource_ids)})")
        check(list(v.scope_project_names) == ["local/py"], "the ScopeViolation names the scope's projects")
        err = fails(scopes.ValidateProjectScope, scope_pb2.ValidateProjectScopeRequest(requested_projects=["other/py", "local/py", "local/zz"]), md(keys["writer"], scope.scope_id))
        check(list(scope_violation(err).project_names) == ["other/py", "local/zz"], "project offenders are named")
        err = fails(scopes.NarrowScope, scope_pb2.NarrowScopeRequest(projects=["other/py"]), md(keys["writer"], scope.scope_id))
        check(err.code() == grpc.StatusCode.PERMISSION_DENIED, "NarrowScope cannot widen to another project")
        err = fails(reg.RegisterResource, registry_pb2.RegisterResourceRequest(project="local/py", alias="z", kind="repo", parent_ids=[c.id]), writer)
        check(err.code() == grpc.StatusCode.PERMISSION_DENIED and list(scope_violation(err).resource_ids) == [c.id], "another tenant's resource as a parent is refused and named")

        # Bad input of every kind: the right code and the field named.
        bad = [
            (reg.CreateProject, registry_pb2.CreateProjectRequest(name="Bad Name"), admin, "name"),
            (reg.CreateProject, registry_pb2.CreateProjectRequest(name=""), admin, "name"),
            (reg.ResolveAlias, registry_pb2.ResolveAliasRequest(project="local/py", alias_or_id=""), writer, "alias_or_id"),
            (reg.ListResources, registry_pb2.ListResourcesRequest(project="nope"), writer, "project"),
            (scopes.ResolveScope, scope_pb2.ResolveScopeRequest(), writer, "projects"),
            (scopes.ResolveScope, scope_pb2.ResolveScopeRequest(projects=["local/py"], include_paths=["/etc/*"]), writer, "include_paths"),
            (scopes.ResolveScope, scope_pb2.ResolveScopeRequest(projects=["local/py"], exclude_paths=["a/../b"]), writer, "exclude_paths"),
            (scopes.ResolveScope, scope_pb2.ResolveScopeRequest(projects=["local/py"], temporal_scope="someday"), writer, "temporal_scope"),
            (scopes.ResolveScope, scope_pb2.ResolveScopeRequest(projects=["local/py"], include_resources=["typo"]), writer, "include_resources"),
            (scopes.GetScope, scope_pb2.GetScopeRequest(scope_id=""), writer, "scope_id"),
            (scopes.NarrowScope, scope_pb2.NarrowScopeRequest(deny_resource_ids=["x"]), md(keys["writer"], scope.scope_id), "deny_resource_ids"),
            (scopes.ValidateResourceScope, scope_pb2.ValidateResourceScopeRequest(requested_resource_ids=["x"]), md(keys["writer"], scope.scope_id), "requested_resource_ids"),
        ]
        for call, request, metadata, field in bad:
            expect_invalid(call, request, metadata, field)

        codes = [
            (reg.ListProjects, registry_pb2.ListProjectsRequest(), [], grpc.StatusCode.UNAUTHENTICATED, "no key"),
            (reg.ListProjects, registry_pb2.ListProjectsRequest(), md("acms_wrong"), grpc.StatusCode.UNAUTHENTICATED, "unknown key"),
            (reg.CreateProject, registry_pb2.CreateProjectRequest(name="local/ro"), md(keys["reader"]), grpc.StatusCode.PERMISSION_DENIED, "read-only key writing"),
            (scopes.ValidateResourceScope, scope_pb2.ValidateResourceScopeRequest(), writer, grpc.StatusCode.FAILED_PRECONDITION, "no acms-scope header"),
            (scopes.ValidateResourceScope, scope_pb2.ValidateResourceScopeRequest(), md(keys["other"], scope.scope_id), grpc.StatusCode.NOT_FOUND, "another principal's scope"),
            (scopes.GetScope, scope_pb2.GetScopeRequest(scope_id=ghost), writer, grpc.StatusCode.NOT_FOUND, "unknown scope"),
            (reg.ResolveAlias, registry_pb2.ResolveAliasRequest(project="local/py", alias_or_id="zz"), writer, grpc.StatusCode.NOT_FOUND, "unknown alias"),
            (reg.CreateProject, registry_pb2.CreateProjectRequest(name="local/py"), admin, grpc.StatusCode.ALREADY_EXISTS, "duplicate project"),
        ]
        for call, request, metadata, code, what in codes:
            err = fails(call, request, metadata)
            check(err.code() == code, f"{what} is {code.name} (got {err.code().name})")

        # The server still serves, health included (a generic call with raw bytes: no stubs needed).
        check_health = channel.unary_unary("/grpc.health.v1.Health/Check", request_serializer=None, response_deserializer=None)
        check(check_health(b"", timeout=10) == b"\x08\x01", "health is SERVING after all of it")
        check(len(reg.ListResources(registry_pb2.ListResourcesRequest(project="local/py"), metadata=writer).resources) == 2, "the server keeps serving")

    print(f"ok {CHECKS} checks", flush=True)


if __name__ == "__main__":
    main()
