"""A thin typed wrapper over the generated gRPC stubs: one channel, the key and scope headers on every call,
keyword arguments for the request fields, and errors raised as :mod:`acms_client.errors` exceptions."""

from typing import Any, Callable, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, TypeVar

import grpc

from .gen.acms.v1 import (
    graph_pb2,
    graph_pb2_grpc,
    index_pb2,
    index_pb2_grpc,
    rag_pb2,
    rag_pb2_grpc,
    registry_pb2,
    registry_pb2_grpc,
    scope_pb2,
    scope_pb2_grpc,
    text_pb2,
    text_pb2_grpc,
    tiers_pb2,
    tiers_pb2_grpc,
    vector_pb2,
    vector_pb2_grpc,
)
from .errors import translate_error

_Response = TypeVar("_Response")

_TIERS = {"hot": tiers_pb2.TIER_HOT, "warm": tiers_pb2.TIER_WARM, "cold": tiers_pb2.TIER_COLD}
_ROLES = {
    "strategist": tiers_pb2.ROLE_STRATEGIST,
    "executor": tiers_pb2.ROLE_EXECUTOR,
    "reviewer": tiers_pb2.ROLE_REVIEWER,
}
_SOURCES = {"text": rag_pb2.SOURCE_TEXT, "vector": rag_pb2.SOURCE_VECTOR, "graph": rag_pb2.SOURCE_GRAPH}


def _target(url: str) -> Tuple[str, bool]:
    """``http://host:port`` (or a bare ``host:port``) as a grpcio target, and whether it needs TLS."""
    if url.startswith("https://"):
        return url[len("https://") :].rstrip("/"), True
    if url.startswith("http://"):
        return url[len("http://") :].rstrip("/"), False
    return url, False


class AcmsClient:
    """Typed access to every ACMS service over one gRPC channel.

    ``target`` is ``host:port`` or ``http://host:port``; ``api_key`` is sent as ``authorization: Bearer``;
    ``scope_id`` as ``acms-scope`` (searches, graph, RAG and tiers need one; :meth:`with_scope` makes a
    client for another scope on the same channel)::

        with AcmsClient("127.0.0.1:50051", api_key) as acms:
            scope = acms.resolve_scope(["local/acms"])
            scoped = acms.with_scope(scope.scope_id)
            for r in scoped.hybrid_search("quickstart", top_k=5).results:
                print(r.score, r.uko_uri)
    """

    def __init__(
        self,
        target: str,
        api_key: str,
        scope_id: Optional[str] = None,
        timeout: float = 30.0,
        channel: Optional[grpc.Channel] = None,
    ):
        if channel is None:
            address, tls = _target(target)
            channel = grpc.secure_channel(address, grpc.ssl_channel_credentials()) if tls else grpc.insecure_channel(address)
            self._owns_channel = True
        else:
            self._owns_channel = False
        self._target = target
        self._channel = channel
        self.api_key = api_key
        self.scope_id = scope_id
        self.timeout = timeout
        self._registry = registry_pb2_grpc.RegistryServiceStub(channel)
        self._index = index_pb2_grpc.IndexServiceStub(channel)
        self._scope = scope_pb2_grpc.ScopeServiceStub(channel)
        self._text = text_pb2_grpc.TextBackendServiceStub(channel)
        self._vector = vector_pb2_grpc.VectorBackendServiceStub(channel)
        self._graph = graph_pb2_grpc.GraphBackendServiceStub(channel)
        self._rag = rag_pb2_grpc.RagServiceStub(channel)
        self._tiers = tiers_pb2_grpc.ContextTierServiceStub(channel)

    # -- lifecycle -------------------------------------------------------------------------------------

    def with_scope(self, scope_id: Optional[str]) -> "AcmsClient":
        """A client on the same channel that sends ``scope_id`` (closing it leaves the channel open)."""
        return AcmsClient(self._target, self.api_key, scope_id, self.timeout, channel=self._channel)

    def close(self) -> None:
        """Closes the channel, if this client opened it."""
        if self._owns_channel:
            self._channel.close()

    def __enter__(self) -> "AcmsClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _metadata(self) -> List[Tuple[str, str]]:
        md = [("authorization", f"Bearer {self.api_key}")]
        if self.scope_id:
            md.append(("acms-scope", self.scope_id))
        return md

    def _call(self, method: Callable[..., _Response], request: Any) -> _Response:
        try:
            return method(request, metadata=self._metadata(), timeout=self.timeout)
        except grpc.RpcError as err:
            raise translate_error(err) from None

    def _stream(self, method: Callable[..., Iterable[_Response]], request: Any) -> Iterator[_Response]:
        try:
            yield from method(request, metadata=self._metadata(), timeout=self.timeout)
        except grpc.RpcError as err:
            raise translate_error(err) from None

    # -- registry --------------------------------------------------------------------------------------

    def create_project(self, name: str) -> registry_pb2.Project:
        """Creates a project ``namespace/name`` (the key needs write access to it)."""
        return self._call(self._registry.CreateProject, registry_pb2.CreateProjectRequest(name=name)).project

    def list_projects(self) -> List[registry_pb2.Project]:
        """The projects the key may see."""
        return list(self._call(self._registry.ListProjects, registry_pb2.ListProjectsRequest()).projects)

    def register_resource(
        self,
        project: str,
        alias: str,
        kind: str = "docs",
        parent_ids: Sequence[str] = (),
        metadata: Optional[Mapping[str, str]] = None,
    ) -> registry_pb2.Resource:
        """Registers a resource owned by ``project`` under ``alias``; the server assigns its ULID."""
        req = registry_pb2.RegisterResourceRequest(
            project=project, alias=alias, kind=kind, parent_ids=list(parent_ids), metadata=dict(metadata or {})
        )
        return self._call(self._registry.RegisterResource, req).resource

    def list_resources(self, project: str) -> List[registry_pb2.Resource]:
        """The resources linked into ``project``, with their alias there."""
        return list(self._call(self._registry.ListResources, registry_pb2.ListResourcesRequest(project=project)).resources)

    def resolve_alias(self, project: str, alias_or_id: str) -> str:
        """The resource id behind an alias or id in ``project`` (raises NOT_FOUND otherwise)."""
        req = registry_pb2.ResolveAliasRequest(project=project, alias_or_id=alias_or_id)
        return self._call(self._registry.ResolveAlias, req).resource_id

    # -- index -----------------------------------------------------------------------------------------

    def upsert_documents(
        self, resource_id: str, documents: Iterable[Tuple[str, str]], batch_size: int = 64
    ) -> index_pb2.UpsertDocumentsResponse:
        """Upserts ``(path, content)`` pairs through the client stream, ``batch_size`` per message; the server chunks them."""

        def messages() -> Iterator[index_pb2.UpsertDocumentsRequest]:
            batch: List[index_pb2.DocumentInput] = []
            for path, content in documents:
                batch.append(index_pb2.DocumentInput(path=path, content=content))
                if len(batch) >= batch_size:
                    yield index_pb2.UpsertDocumentsRequest(resource_id=resource_id, documents=batch)
                    batch = []
            if batch:
                yield index_pb2.UpsertDocumentsRequest(resource_id=resource_id, documents=batch)

        try:
            return self._index.UpsertDocuments(messages(), metadata=self._metadata(), timeout=self.timeout)
        except grpc.RpcError as err:
            raise translate_error(err) from None

    def delete_documents(self, resource_id: str, paths: Sequence[str]) -> int:
        """Deletes documents by path; returns how many existed."""
        req = index_pb2.DeleteDocumentsRequest(resource_id=resource_id, paths=list(paths))
        return self._call(self._index.DeleteDocuments, req).count

    # -- scope -----------------------------------------------------------------------------------------

    def resolve_scope(
        self,
        projects: Sequence[str],
        include_resources: Sequence[str] = (),
        exclude_resources: Sequence[str] = (),
        include_paths: Sequence[str] = (),
        exclude_paths: Sequence[str] = (),
        temporal_scope: str = "current",
        expand_descendants: Optional[bool] = None,
    ) -> scope_pb2.ResourceScope:
        """Resolves and stores a scope; pass its ``scope_id`` to :meth:`with_scope`."""
        req = scope_pb2.ResolveScopeRequest(
            projects=list(projects),
            include_resources=list(include_resources),
            exclude_resources=list(exclude_resources),
            include_paths=list(include_paths),
            exclude_paths=list(exclude_paths),
            temporal_scope=temporal_scope,
        )
        if expand_descendants is not None:
            req.expand_descendants = expand_descendants
        return self._call(self._scope.ResolveScope, req).scope

    def get_scope(self, scope_id: str) -> scope_pb2.ResourceScope:
        """A stored scope made with this key."""
        return self._call(self._scope.GetScope, scope_pb2.GetScopeRequest(scope_id=scope_id)).scope

    def narrow_scope(
        self, deny_resource_ids: Sequence[str] = (), projects: Sequence[str] = (), exclude_paths: Sequence[str] = ()
    ) -> scope_pb2.ResourceScope:
        """A child of this client's scope that can only be narrower."""
        req = scope_pb2.NarrowScopeRequest(
            deny_resource_ids=list(deny_resource_ids), projects=list(projects), exclude_paths=list(exclude_paths)
        )
        return self._call(self._scope.NarrowScope, req).scope

    def validate_project_scope(self, projects: Sequence[str]) -> None:
        """Raises :class:`ScopeViolationError` unless every project is in this client's scope."""
        self._call(self._scope.ValidateProjectScope, scope_pb2.ValidateProjectScopeRequest(requested_projects=list(projects)))

    def validate_resource_scope(self, resource_ids: Sequence[str]) -> None:
        """Raises :class:`ScopeViolationError` unless every resource is in this client's effective scope."""
        req = scope_pb2.ValidateResourceScopeRequest(requested_resource_ids=list(resource_ids))
        self._call(self._scope.ValidateResourceScope, req)

    # -- search ----------------------------------------------------------------------------------------

    def text_search(self, query: str, max_results: Optional[int] = None) -> text_pb2.SearchResponse:
        """Full-text search in this client's scope, best first."""
        req = text_pb2.SearchRequest(query=query)
        if max_results is not None:
            req.max_results = max_results
        return self._call(self._text.Search, req)

    def text_search_stream(self, query: str, max_results: Optional[int] = None) -> Iterator[text_pb2.TextResult]:
        """Full-text results as they are ranked."""
        req = text_pb2.SearchStreamRequest(query=query)
        if max_results is not None:
            req.max_results = max_results
        for msg in self._stream(self._text.SearchStream, req):
            yield msg.result

    def similarity_search(
        self, embedding: Sequence[float], top_k: Optional[int] = None, min_score: Optional[float] = None
    ) -> vector_pb2.SimilaritySearchResponse:
        """Nearest chunks by cosine similarity to ``embedding``."""
        req = vector_pb2.SimilaritySearchRequest(embedding=list(embedding))
        if top_k is not None:
            req.top_k = top_k
        if min_score is not None:
            req.min_score = min_score
        return self._call(self._vector.SimilaritySearch, req)

    def sparql_query(self, query: str) -> graph_pb2.SparqlQueryResponse:
        """A SPARQL read query over the scope's named graphs."""
        return self._call(self._graph.SparqlQuery, graph_pb2.SparqlQueryRequest(query=query))

    def traverse(self, start: str, depth: Optional[int] = None) -> graph_pb2.TraverseResponse:
        """Every in-scope triple within ``depth`` hops of ``start``."""
        req = graph_pb2.TraverseRequest(start=start)
        if depth is not None:
            req.depth = depth
        return self._call(self._graph.Traverse, req)

    def hybrid_search(
        self,
        query: str,
        embedding: Sequence[float] = (),
        top_k: Optional[int] = None,
        min_score: Optional[float] = None,
        rrf_k: Optional[int] = None,
        sources: Sequence[str] = (),
    ) -> rag_pb2.HybridSearchResponse:
        """Text, vector and graph results fused by reciprocal rank; ``sources`` from ``text``, ``vector``, ``graph``."""
        unknown = [s for s in sources if s not in _SOURCES]
        if unknown:
            raise ValueError(f"unknown sources {unknown}: use text, vector, graph")
        req = rag_pb2.HybridSearchRequest(query=query, embedding=list(embedding), sources=[_SOURCES[s] for s in sources])
        if top_k is not None:
            req.top_k = top_k
        if min_score is not None:
            req.min_score = min_score
        if rrf_k is not None:
            req.rrf_k = rrf_k
        return self._call(self._rag.HybridSearch, req)

    def fetch_content(self, uko_uris: Sequence[str]) -> rag_pb2.FetchContentResponse:
        """The content of documents or chunks, in exactly the order asked; ``missing`` lists what the scope lacks."""
        return self._call(self._rag.FetchContent, rag_pb2.FetchContentRequest(uko_uris=list(uko_uris)))

    # -- context tiers ---------------------------------------------------------------------------------

    def store_fragment(
        self,
        content: str,
        project_name: str,
        tier: str = "hot",
        fragment_id: str = "",
        resource_id: str = "",
        metadata: Optional[Mapping[str, str]] = None,
    ) -> tiers_pb2.StoreFragmentResponse:
        """Stores a fragment of agent context in ``tier`` (hot, warm or cold)."""
        if tier not in _TIERS:
            raise ValueError(f"unknown tier {tier!r}: use hot, warm or cold")
        fragment = tiers_pb2.Fragment(
            fragment_id=fragment_id,
            content=content,
            tier=_TIERS[tier],
            resource_id=resource_id,
            project_name=project_name,
            metadata=dict(metadata or {}),
        )
        return self._call(self._tiers.StoreFragment, tiers_pb2.StoreFragmentRequest(fragment=fragment))

    def get_fragment(self, fragment_id: str) -> tiers_pb2.Fragment:
        """A fragment by id (counts as a hit or a miss in the metrics)."""
        return self._call(self._tiers.GetFragment, tiers_pb2.GetFragmentRequest(fragment_id=fragment_id)).fragment

    def promote_fragment(self, fragment_id: str) -> tiers_pb2.Fragment:
        """Moves a fragment one tier up (cold to warm to hot)."""
        return self._call(self._tiers.PromoteFragment, tiers_pb2.PromoteFragmentRequest(fragment_id=fragment_id)).fragment

    def demote_fragment(self, fragment_id: str) -> tiers_pb2.Fragment:
        """Moves a fragment one tier down (summarised on the way)."""
        return self._call(self._tiers.DemoteFragment, tiers_pb2.DemoteFragmentRequest(fragment_id=fragment_id)).fragment

    def get_for_actor(self, role: str, project_names: Sequence[str] = ()) -> List[tiers_pb2.Fragment]:
        """The fragments a role sees: strategist hot+warm+cold, executor hot+warm, reviewer hot."""
        if role not in _ROLES:
            raise ValueError(f"unknown role {role!r}: use strategist, executor or reviewer")
        req = tiers_pb2.GetForActorRequest(role=_ROLES[role], project_names=list(project_names))
        return list(self._call(self._tiers.GetForActor, req).fragments)

    def get_metrics(self) -> tiers_pb2.GetMetricsResponse:
        """Hits, misses, population and movements per tier."""
        return self._call(self._tiers.GetMetrics, tiers_pb2.GetMetricsRequest())


def source_name(source: int) -> str:
    """``text``, ``vector``, ``graph`` (or ``unspecified``) for a Source enum value."""
    return {v: k for k, v in _SOURCES.items()}.get(source, "unspecified")


def tier_name(tier: int) -> str:
    """``hot``, ``warm``, ``cold`` (or ``unspecified``) for a Tier enum value."""
    return {v: k for k, v in _TIERS.items()}.get(tier, "unspecified")


__all__ = ["AcmsClient", "source_name", "tier_name"]
