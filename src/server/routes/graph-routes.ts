import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  GraphBackendService,
  type Row,
  type SparqlQueryStreamResponseSchema,
  type Triple,
} from "../../../gen/acms/v1/graph_pb.js";
import { UnimplementedError } from "../../domain/errors.js";
import { guardResults } from "../../domain/leak-guard.js";
import { resolveDepth } from "../../domain/request-limits.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { GraphBackend, GraphQueryOptions, GraphQueryResult, GraphTriplesResult } from "../../ports/graph-backend.js";
import { principalKey } from "../access/context-keys.js";
import { viewOf } from "../access/handler-context.js";
import { setStreamAnswerHeaders } from "./stream-answer-headers.js";
import { toWireRow, toWireTriple } from "./rdf-output.js";
import type { RouteDeps } from "../composition/server-deps.js";

/** Traverse's depth when the request has none. */
export const DEFAULT_TRAVERSE_DEPTH = 2;

type StreamPiece = MessageInitShape<typeof SparqlQueryStreamResponseSchema>;

function elapsedMs(started: number): string {
  return (performance.now() - started).toFixed(1);
}

/** The GraphResult fields of one SPARQL answer. */
interface ResultFields {
  triples?: Triple[];
  variables?: string[];
  rows?: Row[];
  boolean?: boolean;
  metadata: Record<string, string>;
}

function resultFields(r: GraphQueryResult): ResultFields {
  switch (r.form) {
    case "SELECT":
      return { variables: r.variables, rows: r.rows.map(toWireRow), metadata: { result_count: String(r.rows.length) } };
    case "ASK":
      return { boolean: r.boolean, metadata: {} };
    default:
      return { triples: r.triples.map(toWireTriple), metadata: { result_count: String(r.triples.length) } };
  }
}

/** The pieces of a streamed answer: the variables first then one row each, one triple each, or the boolean. */
function* streamPieces(r: GraphQueryResult): Generator<StreamPiece> {
  switch (r.form) {
    case "SELECT":
      yield { item: { case: "variables", value: { names: r.variables } } };
      for (const row of r.rows) yield { item: { case: "row", value: toWireRow(row) } };
      return;
    case "ASK":
      yield { item: { case: "boolean", value: r.boolean } };
      return;
    default:
      for (const t of r.triples) yield { item: { case: "triple", value: toWireTriple(t) } };
  }
}

/**
 * GraphBackendService: scoped SPARQL, GetTriples and Traverse on the configured graph backend
 * (UNIMPLEMENTED when none is). The access interceptor has resolved the `acms-scope` header into the
 * call's view; the backend reads only the view's named graphs, and GetTriples/Traverse results pass the
 * leak guard on the way out. Every query is bounded by `config.sparqlTimeoutMs` and stops when the call is
 * cancelled. `index_generation` is the document store's, which PutTriples bumps too, read before the
 * query runs. The scope's path filters do not apply: triples belong to a resource, not to a document path.
 */
export function graphRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  const backend = (): GraphBackend => {
    const graph = deps.backends.graph;
    if (!graph) throw new UnimplementedError("no graph backend is configured on this server");
    return graph;
  };
  const options = (ctx: HandlerContext): GraphQueryOptions => ({
    timeoutMs: deps.config.sparqlTimeoutMs,
    signal: ctx.signal,
    tenant: ctx.values.get(principalKey)?.name,
  });
  const guarded = (view: ScopedBackendView, r: GraphTriplesResult) => guardResults(view, r.triples, "graph backend").map(toWireTriple);

  return (router) => {
    router.service(GraphBackendService, {
      async sparqlQuery(req, ctx) {
        const graph = backend();
        const view = viewOf(ctx);
        const indexGeneration = await deps.services.indexGeneration();
        const started = performance.now();
        const r = await graph.query(view, req.query, options(ctx));
        const fields = resultFields(r);
        return {
          ...fields,
          metadata: { ...fields.metadata, query_form: r.form, elapsed_ms: elapsedMs(started) },
          scopeId: view.scopeId,
          exhaustive: r.exhaustive,
          indexGeneration,
        };
      },
      async *sparqlQueryStream(req, ctx): AsyncGenerator<StreamPiece> {
        const graph = backend();
        const view = viewOf(ctx);
        const indexGeneration = await deps.services.indexGeneration();
        const r = await graph.query(view, req.query, options(ctx));
        setStreamAnswerHeaders(ctx.responseHeader, view.scopeId, r.exhaustive, indexGeneration);
        for (const piece of streamPieces(r)) {
          ctx.signal.throwIfAborted();
          yield piece;
        }
      },
      async getTriples(req, ctx) {
        const graph = backend();
        const view = viewOf(ctx);
        const indexGeneration = await deps.services.indexGeneration();
        const started = performance.now();
        const r = await graph.getTriples(view, req.subject, options(ctx));
        const triples = guarded(view, r);
        return {
          triples,
          metadata: { elapsed_ms: elapsedMs(started), result_count: String(triples.length) },
          scopeId: view.scopeId,
          exhaustive: r.exhaustive,
          indexGeneration,
        };
      },
      async traverse(req, ctx) {
        const graph = backend();
        const view = viewOf(ctx);
        const depth = resolveDepth("depth", req.depth, DEFAULT_TRAVERSE_DEPTH);
        const indexGeneration = await deps.services.indexGeneration();
        const started = performance.now();
        const r = await graph.traverse(view, req.start, depth, options(ctx));
        const triples = guarded(view, r);
        return {
          triples,
          metadata: { elapsed_ms: elapsedMs(started), result_count: String(triples.length), depth: String(depth) },
          scopeId: view.scopeId,
          exhaustive: r.exhaustive,
          indexGeneration,
        };
      },
    });
  };
}
