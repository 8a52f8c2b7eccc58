"""The asyncio client: one coroutine (or async iterator) per RPC of every ACMS service, over one ``grpc.aio``
channel. The source of the blocking client too: generate.sh writes client.py from this file (unasync)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Self, TypeVar, Unpack

import grpc

from ._aio import Channel, RequestStream, UnaryStreamMultiCallable, UnaryUnaryMultiCallable, open_channel, request_iterator
from .call_options import CallOptions, call_metadata
from .connection import url_from_env
from .enums import Role, Source, Tier, role_value, source_value, tier_value
from .errors import error_from_rpc
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

_Req = TypeVar("_Req")
_Resp = TypeVar("_Resp")


class AsyncAcmsClient:
    """Asyncio access to every ACMS RPC over one ``grpc.aio`` channel.

    Each method is its RPC's name in snake_case, takes the request fields as arguments and returns the
    generated response message (a coroutine; a server stream is an async iterator of its response messages).
    Every call sends the client's ``api_key`` as ``authorization: Bearer`` and its ``scope_id``, when set, as
    ``acms-scope``; any call may override them, and set a deadline or more metadata, with the keywords of
    :class:`CallOptions`. A refused call raises :class:`AcmsError` or one of its subclasses. Create it inside a
    running event loop::

        async with AsyncAcmsClient("http://127.0.0.1:50051", api_key) as acms:
            scope = (await acms.resolve_scope(["local/acms"])).scope
            async for message in acms.search_stream("quickstart", scope_id=scope.scope_id):
                print(message.result.uko_uri)
    """

    def __init__(
        self,
        url: str,
        api_key: str,
        *,
        scope_id: str | None = None,
        timeout: float | None = None,
        channel: Channel | None = None,
    ) -> None:
        """``url`` is ``http://host:port`` (or ``https://``); ``timeout`` the default deadline of each call in
        seconds (none by default). With ``channel`` (a ``grpc.aio`` channel) the client uses it and leaves it open
        on :meth:`close`."""
        self.url = url
        self.api_key = api_key
        self.scope_id = scope_id
        self.timeout = timeout
        self._owns_channel = channel is None
        self._channel = open_channel(url) if channel is None else channel
        self._registry = registry_pb2_grpc.RegistryServiceStub(self._channel)
        self._index = index_pb2_grpc.IndexServiceStub(self._channel)
        self._scope = scope_pb2_grpc.ScopeServiceStub(self._channel)
        self._text = text_pb2_grpc.TextBackendServiceStub(self._channel)
        self._vector = vector_pb2_grpc.VectorBackendServiceStub(self._channel)
        self._graph = graph_pb2_grpc.GraphBackendServiceStub(self._channel)
        self._rag = rag_pb2_grpc.RagServiceStub(self._channel)
        self._tiers = tiers_pb2_grpc.ContextTierServiceStub(self._channel)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, timeout: float | None = None) -> Self:
        """A client configured as the ``acms`` CLI is: ``ACMS_URL`` (else ``ACMS_HOST``/``ACMS_PORT``),
        ``ACMS_API_KEY`` (required) and ``ACMS_SCOPE`` (optional)."""
        env = os.environ if env is None else env
        key = env.get("ACMS_API_KEY", "")
        if not key:
            raise ValueError("set ACMS_API_KEY (the key `acms serve` printed, or one from `acms keys create`)")
        return cls(url_from_env(env), key, scope_id=env.get("ACMS_SCOPE") or None, timeout=timeout)

    def with_scope(self, scope_id: str | None) -> AsyncAcmsClient:
        """A client on the same channel whose calls send ``scope_id`` (closing it leaves the channel open)."""
        return AsyncAcmsClient(self.url, self.api_key, scope_id=scope_id, timeout=self.timeout, channel=self._channel)

    async def close(self) -> None:
        """Closes the channel, if this client opened it."""
        if self._owns_channel:
            await self._channel.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _unary(self, method: UnaryUnaryMultiCallable[_Req, _Resp], request: _Req, options: CallOptions) -> _Resp:
        try:
            return await method(request, timeout=options.get("timeout", self.timeout), metadata=call_metadata(self.api_key, self.scope_id, options))
        except grpc.RpcError as err:
            raise error_from_rpc(err) from None

    async def _server_stream(
        self, method: UnaryStreamMultiCallable[_Req, _Resp], request: _Req, options: CallOptions
    ) -> AsyncIterator[_Resp]:
        call = method(request, timeout=options.get("timeout", self.timeout), metadata=call_metadata(self.api_key, self.scope_id, options))
        try:
            async for message in call:
                yield message
        except grpc.RpcError as err:
            raise error_from_rpc(err) from None
        finally:
            # A caller that stops iterating early ends the stream on the server too.
            call.cancel()

    # -- RegistryService ----------------------------------------------------------------------------------

    async def create_project(self, name: str, **options: Unpack[CallOptions]) -> registry_pb2.CreateProjectResponse:
        """Creates the project ``namespace/name`` (the key needs write access to it)."""
        return await self._unary(self._registry.CreateProject, registry_pb2.CreateProjectRequest(name=name), options)

    async def list_projects(
        self, *, page_size: int | None = None, page_token: str = "", **options: Unpack[CallOptions]
    ) -> registry_pb2.ListProjectsResponse:
        """One page of the projects the key may see (``next_page_token`` is empty on the last page)."""
        request = registry_pb2.ListProjectsRequest(page_size=page_size, page_token=page_token)
        return await self._unary(self._registry.ListProjects, request, options)

    async def register_resource(
        self,
        project: str,
        alias: str,
        kind: str,
        *,
        parent_ids: Sequence[str] = (),
        metadata: Mapping[str, str] | None = None,
        id: str = "",
        **options: Unpack[CallOptions],
    ) -> registry_pb2.RegisterResourceResponse:
        """Registers a resource of ``kind`` (repo, docs, dataset...) owned by ``project`` under ``alias``; the server
        assigns its ULID unless ``id``."""
        request = registry_pb2.RegisterResourceRequest(project=project, alias=alias, kind=kind, parent_ids=parent_ids, metadata=metadata, id=id)
        return await self._unary(self._registry.RegisterResource, request, options)

    async def link_resource(self, project: str, resource_id: str, alias: str, **options: Unpack[CallOptions]) -> registry_pb2.LinkResourceResponse:
        """Links an existing resource into ``project`` under ``alias``."""
        request = registry_pb2.LinkResourceRequest(project=project, resource_id=resource_id, alias=alias)
        return await self._unary(self._registry.LinkResource, request, options)

    async def list_resources(
        self, project: str, *, page_size: int | None = None, page_token: str = "", **options: Unpack[CallOptions]
    ) -> registry_pb2.ListResourcesResponse:
        """One page of the resources linked into ``project``, with their alias there."""
        request = registry_pb2.ListResourcesRequest(project=project, page_size=page_size, page_token=page_token)
        return await self._unary(self._registry.ListResources, request, options)

    async def resolve_alias(self, project: str, alias_or_id: str, **options: Unpack[CallOptions]) -> registry_pb2.ResolveAliasResponse:
        """The resource id behind an alias or id in ``project`` (``NOT_FOUND`` when neither)."""
        request = registry_pb2.ResolveAliasRequest(project=project, alias_or_id=alias_or_id)
        return await self._unary(self._registry.ResolveAlias, request, options)

    async def validate_aliases(self, project: str, **options: Unpack[CallOptions]) -> registry_pb2.ValidateAliasesResponse:
        """The alias problems of ``project`` (duplicates), one message each; empty when clean."""
        return await self._unary(self._registry.ValidateAliases, registry_pb2.ValidateAliasesRequest(project=project), options)

    async def unlink_resource(self, project: str, resource_id: str, **options: Unpack[CallOptions]) -> registry_pb2.UnlinkResourceResponse:
        """Removes ``resource_id``'s link from ``project`` (not its owner: delete the resource instead)."""
        request = registry_pb2.UnlinkResourceRequest(project=project, resource_id=resource_id)
        return await self._unary(self._registry.UnlinkResource, request, options)

    async def delete_resource(self, resource_id: str, **options: Unpack[CallOptions]) -> registry_pb2.DeleteResourceResponse:
        """Erases ``resource_id`` everywhere it lives; the ``report`` counts what went."""
        return await self._unary(self._registry.DeleteResource, registry_pb2.DeleteResourceRequest(resource_id=resource_id), options)

    async def delete_project(self, name: str, *, cascade: bool = False, **options: Unpack[CallOptions]) -> registry_pb2.DeleteProjectResponse:
        """Deletes project ``name`` (``cascade`` erases the resources it owns; without it, refused while it owns any)."""
        return await self._unary(self._registry.DeleteProject, registry_pb2.DeleteProjectRequest(name=name, cascade=cascade), options)

    # -- IndexService -------------------------------------------------------------------------------------

    async def upsert_documents(
        self, messages: RequestStream[index_pb2.UpsertDocumentsRequest], **options: Unpack[CallOptions]
    ) -> index_pb2.UpsertDocumentsResponse:
        """Sends ``messages`` (an iterable or an async iterable) over the client stream (see
        :func:`document_batches`) and returns the counts."""
        metadata = call_metadata(self.api_key, self.scope_id, options)
        requests = request_iterator(messages)
        try:
            return await self._index.UpsertDocuments(requests, timeout=options.get("timeout", self.timeout), metadata=metadata)
        except grpc.RpcError as err:
            raise error_from_rpc(err) from None

    async def delete_documents(self, resource_id: str, paths: Sequence[str], **options: Unpack[CallOptions]) -> index_pb2.DeleteDocumentsResponse:
        """Deletes documents of ``resource_id`` by path; ``count`` says how many existed."""
        request = index_pb2.DeleteDocumentsRequest(resource_id=resource_id, paths=paths)
        return await self._unary(self._index.DeleteDocuments, request, options)

    async def put_triples(
        self, resource_id: str, triples: Iterable[graph_pb2.Triple], *, replace: bool = False, **options: Unpack[CallOptions]
    ) -> index_pb2.PutTriplesResponse:
        """Adds triples to the resource's named graph (``replace``: instead of what it holds)."""
        request = index_pb2.PutTriplesRequest(resource_id=resource_id, triples=triples, replace=replace)
        return await self._unary(self._index.PutTriples, request, options)

    async def rebuild(
        self, resource_ids: Sequence[str] = (), *, full_rebuild: bool = False, **options: Unpack[CallOptions]
    ) -> index_pb2.RebuildResponse:
        """Re-indexes the resources (upsert only, unless ``full_rebuild``)."""
        request = index_pb2.RebuildRequest(resource_ids=resource_ids, full_rebuild=full_rebuild)
        return await self._unary(self._index.Rebuild, request, options)

    # -- ScopeService -------------------------------------------------------------------------------------

    async def resolve_scope(
        self,
        projects: Sequence[str],
        *,
        include_resources: Sequence[str] = (),
        exclude_resources: Sequence[str] = (),
        include_paths: Sequence[str] = (),
        exclude_paths: Sequence[str] = (),
        temporal_scope: str = "",
        expand_descendants: bool | None = None,
        **options: Unpack[CallOptions],
    ) -> scope_pb2.ResolveScopeResponse:
        """Resolves and stores an immutable scope; later calls name its ``scope.scope_id``."""
        request = scope_pb2.ResolveScopeRequest(
            projects=projects,
            include_resources=include_resources,
            exclude_resources=exclude_resources,
            include_paths=include_paths,
            exclude_paths=exclude_paths,
            temporal_scope=temporal_scope,
            expand_descendants=expand_descendants,
        )
        return await self._unary(self._scope.ResolveScope, request, options)

    async def get_scope(self, scope_id: str, /, **options: Unpack[CallOptions]) -> scope_pb2.GetScopeResponse:
        """A stored scope this key resolved or narrowed."""
        return await self._unary(self._scope.GetScope, scope_pb2.GetScopeRequest(scope_id=scope_id), options)

    async def narrow_scope(
        self,
        *,
        deny_resource_ids: Sequence[str] = (),
        projects: Sequence[str] = (),
        exclude_paths: Sequence[str] = (),
        **options: Unpack[CallOptions],
    ) -> scope_pb2.NarrowScopeResponse:
        """A child of the call's scope that can only be narrower."""
        request = scope_pb2.NarrowScopeRequest(deny_resource_ids=deny_resource_ids, projects=projects, exclude_paths=exclude_paths)
        return await self._unary(self._scope.NarrowScope, request, options)

    async def validate_project_scope(self, requested_projects: Sequence[str], **options: Unpack[CallOptions]) -> scope_pb2.ValidateProjectScopeResponse:
        """Raises :class:`ScopeViolationError` unless every project is in the call's scope."""
        request = scope_pb2.ValidateProjectScopeRequest(requested_projects=requested_projects)
        return await self._unary(self._scope.ValidateProjectScope, request, options)

    async def validate_resource_scope(
        self, requested_resource_ids: Sequence[str], **options: Unpack[CallOptions]
    ) -> scope_pb2.ValidateResourceScopeResponse:
        """Raises :class:`ScopeViolationError` unless every resource is in the call's effective scope."""
        request = scope_pb2.ValidateResourceScopeRequest(requested_resource_ids=requested_resource_ids)
        return await self._unary(self._scope.ValidateResourceScope, request, options)

    async def list_scopes(
        self, *, page_size: int | None = None, page_token: str = "", **options: Unpack[CallOptions]
    ) -> scope_pb2.ListScopesResponse:
        """One page of the scopes this key resolved or narrowed, newest first."""
        return await self._unary(self._scope.ListScopes, scope_pb2.ListScopesRequest(page_size=page_size, page_token=page_token), options)

    # -- TextBackendService -------------------------------------------------------------------------------

    async def search(
        self, query: str, *, max_results: int | None = None, group_by_document: bool = False, **options: Unpack[CallOptions]
    ) -> text_pb2.SearchResponse:
        """Full-text (BM25) search in the call's scope, best first; ``group_by_document``: one result per document."""
        request = text_pb2.SearchRequest(query=query, max_results=max_results, group_by_document=group_by_document)
        return await self._unary(self._text.Search, request, options)

    def search_stream(
        self, query: str, *, max_results: int | None = None, group_by_document: bool = False, **options: Unpack[CallOptions]
    ) -> AsyncIterator[text_pb2.SearchStreamResponse]:
        """As :meth:`search`, one result per message in rank order."""
        request = text_pb2.SearchStreamRequest(query=query, max_results=max_results, group_by_document=group_by_document)
        return self._server_stream(self._text.SearchStream, request, options)

    # -- VectorBackendService -----------------------------------------------------------------------------

    async def similarity_search(
        self, embedding: Sequence[float], *, top_k: int | None = None, min_score: float | None = None, **options: Unpack[CallOptions]
    ) -> vector_pb2.SimilaritySearchResponse:
        """The chunks nearest to ``embedding`` by cosine similarity, in the call's scope."""
        request = vector_pb2.SimilaritySearchRequest(embedding=embedding, top_k=top_k, min_score=min_score)
        return await self._unary(self._vector.SimilaritySearch, request, options)

    def similarity_search_stream(
        self, embedding: Sequence[float], *, top_k: int | None = None, min_score: float | None = None, **options: Unpack[CallOptions]
    ) -> AsyncIterator[vector_pb2.SimilaritySearchStreamResponse]:
        """As :meth:`similarity_search`, one result per message."""
        request = vector_pb2.SimilaritySearchStreamRequest(embedding=embedding, top_k=top_k, min_score=min_score)
        return self._server_stream(self._vector.SimilaritySearchStream, request, options)

    # -- GraphBackendService ------------------------------------------------------------------------------

    async def sparql_query(self, query: str, **options: Unpack[CallOptions]) -> graph_pb2.SparqlQueryResponse:
        """A SPARQL read query (SELECT, ASK, CONSTRUCT, DESCRIBE) over the scope's named graphs."""
        return await self._unary(self._graph.SparqlQuery, graph_pb2.SparqlQueryRequest(query=query), options)

    def sparql_query_stream(self, query: str, **options: Unpack[CallOptions]) -> AsyncIterator[graph_pb2.SparqlQueryStreamResponse]:
        """As :meth:`sparql_query`, streamed: the variables, then one row (or triple) per message."""
        return self._server_stream(self._graph.SparqlQueryStream, graph_pb2.SparqlQueryStreamRequest(query=query), options)

    async def get_triples(self, subject: str, **options: Unpack[CallOptions]) -> graph_pb2.GetTriplesResponse:
        """Every in-scope triple whose subject is the IRI ``subject``."""
        return await self._unary(self._graph.GetTriples, graph_pb2.GetTriplesRequest(subject=subject), options)

    async def traverse(self, start: str, *, depth: int | None = None, **options: Unpack[CallOptions]) -> graph_pb2.TraverseResponse:
        """Every in-scope triple within ``depth`` hops (default 2) of the IRI ``start``."""
        return await self._unary(self._graph.Traverse, graph_pb2.TraverseRequest(start=start, depth=depth), options)

    # -- RagService ---------------------------------------------------------------------------------------

    async def hybrid_search(
        self,
        query: str,
        *,
        embedding: Sequence[float] = (),
        top_k: int | None = None,
        min_score: float | None = None,
        rrf_k: int | None = None,
        sources: Sequence[Source] = (),
        weights: Mapping[Source, float] | None = None,
        **options: Unpack[CallOptions],
    ) -> rag_pb2.HybridSearchResponse:
        """Text, vector and graph results fused by reciprocal rank; ``sources`` limits them (empty: all that
        apply), ``weights`` weighs each source's ranks."""
        request = rag_pb2.HybridSearchRequest(
            query=query,
            embedding=embedding,
            top_k=top_k,
            min_score=min_score,
            rrf_k=rrf_k,
            sources=[source_value(s) for s in sources],
            weights=[rag_pb2.SourceWeight(source=source_value(s), weight=w) for s, w in (weights or {}).items()],
        )
        return await self._unary(self._rag.HybridSearch, request, options)

    def hybrid_search_stream(
        self,
        query: str,
        *,
        embedding: Sequence[float] = (),
        top_k: int | None = None,
        min_score: float | None = None,
        rrf_k: int | None = None,
        sources: Sequence[Source] = (),
        weights: Mapping[Source, float] | None = None,
        **options: Unpack[CallOptions],
    ) -> AsyncIterator[rag_pb2.HybridSearchStreamResponse]:
        """As :meth:`hybrid_search`, the fused results streamed in order."""
        request = rag_pb2.HybridSearchStreamRequest(
            query=query,
            embedding=embedding,
            top_k=top_k,
            min_score=min_score,
            rrf_k=rrf_k,
            sources=[source_value(s) for s in sources],
            weights=[rag_pb2.SourceWeight(source=source_value(s), weight=w) for s, w in (weights or {}).items()],
        )
        return self._server_stream(self._rag.HybridSearchStream, request, options)

    async def fetch_content(self, uko_uris: Sequence[str], **options: Unpack[CallOptions]) -> rag_pb2.FetchContentResponse:
        """The documents or chunks at ``uko_uris``, in exactly the order asked; ``missing`` lists the absent."""
        return await self._unary(self._rag.FetchContent, rag_pb2.FetchContentRequest(uko_uris=uko_uris), options)

    # -- ContextTierService -------------------------------------------------------------------------------

    async def store_fragment(
        self,
        content: str,
        *,
        project_name: str,
        tier: Tier = "hot",
        fragment_id: str = "",
        resource_id: str = "",
        metadata: Mapping[str, str] | None = None,
        **options: Unpack[CallOptions],
    ) -> tiers_pb2.StoreFragmentResponse:
        """Stores a fragment of agent context in ``tier``; the answer lists any fragments it displaced."""
        fragment = tiers_pb2.Fragment(
            fragment_id=fragment_id,
            content=content,
            tier=tier_value(tier),
            resource_id=resource_id,
            project_name=project_name,
            metadata=metadata,
        )
        return await self._unary(self._tiers.StoreFragment, tiers_pb2.StoreFragmentRequest(fragment=fragment), options)

    async def get_fragment(self, fragment_id: str, **options: Unpack[CallOptions]) -> tiers_pb2.GetFragmentResponse:
        """A fragment by id (a hit or a miss in the metrics)."""
        return await self._unary(self._tiers.GetFragment, tiers_pb2.GetFragmentRequest(fragment_id=fragment_id), options)

    async def promote_fragment(self, fragment_id: str, **options: Unpack[CallOptions]) -> tiers_pb2.PromoteFragmentResponse:
        """Moves a fragment one tier up (cold to warm to hot)."""
        return await self._unary(self._tiers.PromoteFragment, tiers_pb2.PromoteFragmentRequest(fragment_id=fragment_id), options)

    async def demote_fragment(self, fragment_id: str, **options: Unpack[CallOptions]) -> tiers_pb2.DemoteFragmentResponse:
        """Moves a fragment one tier down (hot to warm to cold; summarised on the way)."""
        return await self._unary(self._tiers.DemoteFragment, tiers_pb2.DemoteFragmentRequest(fragment_id=fragment_id), options)

    async def evict_lru(self, tier: Tier, count: int, **options: Unpack[CallOptions]) -> tiers_pb2.EvictLruResponse:
        """Evicts the ``count`` least recently used fragments of ``tier``."""
        return await self._unary(self._tiers.EvictLru, tiers_pb2.EvictLruRequest(tier=tier_value(tier), count=count), options)

    async def get_for_actor(
        self, role: Role, *, project_names: Sequence[str] = (), include_full_content: bool = False, **options: Unpack[CallOptions]
    ) -> tiers_pb2.GetForActorResponse:
        """The fragments ``role`` sees (strategist: hot+warm+cold, executor: hot+warm, reviewer: hot); no
        ``project_names`` means every project of the scope."""
        request = tiers_pb2.GetForActorRequest(role=role_value(role), project_names=project_names, include_full_content=include_full_content)
        return await self._unary(self._tiers.GetForActor, request, options)

    async def get_metrics(self, **options: Unpack[CallOptions]) -> tiers_pb2.GetMetricsResponse:
        """Hits, misses, population and movements per tier, as the call's scope sees them."""
        return await self._unary(self._tiers.GetMetrics, tiers_pb2.GetMetricsRequest(), options)

    async def delete_fragment(self, fragment_id: str, **options: Unpack[CallOptions]) -> tiers_pb2.DeleteFragmentResponse:
        """Removes a fragment from whatever tier holds it; ``deleted`` says whether it existed."""
        return await self._unary(self._tiers.DeleteFragment, tiers_pb2.DeleteFragmentRequest(fragment_id=fragment_id), options)
