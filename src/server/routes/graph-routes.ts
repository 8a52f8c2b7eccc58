import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { GraphBackendService, type Row, type SparqlQueryStreamResponseSchema, type Triple } from "../../../gen/acms/v1/graph_pb.js";
import type { GraphCallOptions } from "../../application/graph/graph-queries.js";
import type { GraphQueryResult } from "../../ports/graph-backend.js";
import { principalKey } from "../access/context-keys.js";
import { viewOf } from "../access/handler-context.js";
import { setStreamAnswerHeaders } from "./stream-answer-headers.js";
import { toWireRow, toWireTriple } from "./rdf-output.js";
import type { RouteDeps } from "../composition/server-deps.js";

type StreamPiece = MessageInitShape<typeof SparqlQueryStreamResponseSchema>;

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
 * GraphBackendService on the graph use cases (application/graph): scoped SPARQL, GetTriples and Traverse. The
 * access interceptor has resolved the `acms-scope` header into the call's view; every query is bounded by
 * `config.sparqlTimeoutMs` and stops when the call is cancelled.
 */
export function graphRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  const graph = deps.services.graph;
  const options = (ctx: HandlerContext): GraphCallOptions => ({ signal: ctx.signal, tenant: ctx.values.get(principalKey)?.name });

  return (router) => {
    router.service(GraphBackendService, {
      async sparqlQuery(req, ctx) {
        const view = viewOf(ctx);
        const { result: r, indexGeneration, elapsedMs } = await graph.query(view, req.query, options(ctx));
        const fields = resultFields(r);
        return {
          ...fields,
          metadata: { ...fields.metadata, query_form: r.form, elapsed_ms: elapsedMs.toFixed(1) },
          scopeId: view.scopeId,
          exhaustive: r.exhaustive,
          indexGeneration,
        };
      },
      async *sparqlQueryStream(req, ctx): AsyncGenerator<StreamPiece> {
        const view = viewOf(ctx);
        const { result: r, indexGeneration } = await graph.query(view, req.query, options(ctx));
        setStreamAnswerHeaders(ctx.responseHeader, view.scopeId, r.exhaustive, indexGeneration);
        for (const piece of streamPieces(r)) {
          ctx.signal.throwIfAborted();
          yield piece;
        }
      },
      async getTriples(req, ctx) {
        const view = viewOf(ctx);
        const r = await graph.getTriples(view, req.subject, options(ctx));
        const triples = r.triples.map(toWireTriple);
        return {
          triples,
          metadata: { elapsed_ms: r.elapsedMs.toFixed(1), result_count: String(triples.length) },
          scopeId: view.scopeId,
          exhaustive: r.exhaustive,
          indexGeneration: r.indexGeneration,
        };
      },
      async traverse(req, ctx) {
        const view = viewOf(ctx);
        const r = await graph.traverse(view, req.start, req.depth, options(ctx));
        const triples = r.triples.map(toWireTriple);
        return {
          triples,
          metadata: { elapsed_ms: r.elapsedMs.toFixed(1), result_count: String(triples.length), depth: String(r.depth) },
          scopeId: view.scopeId,
          exhaustive: r.exhaustive,
          indexGeneration: r.indexGeneration,
        };
      },
    });
  };
}
