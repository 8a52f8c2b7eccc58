import type { DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { SpanKind, SpanStatusCode, type Attributes, type Context, type Span } from "@opentelemetry/api";
import { requestIdKey, viewKey } from "../access/context-keys.js";
import { withMessage } from "../transport/with-message.js";
import { codeName } from "./code-name.js";
import type { Tracing } from "./tracing.js";

/**
 * The GenAI semantic conventions' memory operations (`gen_ai.operation.name`, OpenTelemetry GenAI memory
 * spans) the RPCs perform; an RPC that is none of them (scopes, health, graph queries, metrics) has none.
 */
export const MEMORY_OPERATIONS: Readonly<Record<string, string>> = {
  "acms.v1.TextBackendService/Search": "search_memory",
  "acms.v1.TextBackendService/SearchStream": "search_memory",
  "acms.v1.VectorBackendService/SimilaritySearch": "search_memory",
  "acms.v1.VectorBackendService/SimilaritySearchStream": "search_memory",
  "acms.v1.RagService/HybridSearch": "search_memory",
  "acms.v1.RagService/HybridSearchStream": "search_memory",
  "acms.v1.ContextTierService/GetForActor": "search_memory",
  "acms.v1.IndexService/UpsertDocuments": "update_memory",
  "acms.v1.IndexService/PutTriples": "update_memory",
  "acms.v1.ContextTierService/StoreFragment": "update_memory",
  "acms.v1.IndexService/DeleteDocuments": "delete_memory",
  "acms.v1.ContextTierService/DeleteFragment": "delete_memory",
  "acms.v1.ContextTierService/EvictLru": "delete_memory",
  "acms.v1.RegistryService/CreateProject": "create_memory_store",
  "acms.v1.RegistryService/RegisterResource": "create_memory_store",
  "acms.v1.RegistryService/DeleteResource": "delete_memory_store",
  "acms.v1.RegistryService/DeleteProject": "delete_memory_store",
};

/** Scope ids and request ids are recorded only when they are plain tokens (never arbitrary bytes from the wire). */
const TOKEN = /^[A-Za-z0-9._:-]{1,128}$/;

function protocolOf(contentType: string | null): "grpc" | "grpc-web" | "connect" {
  if (contentType?.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/** The counts of a response's top-level lists (`acms.response.<field>.count`): sizes only, never a value. */
function countsOf(schema: DescMessage, message: unknown, into: Attributes): void {
  if (message === null || typeof message !== "object") return;
  for (const field of schema.fields) {
    if (field.fieldKind !== "list") continue;
    const value = (message as Record<string, unknown>)[field.localName];
    if (Array.isArray(value)) into[`acms.response.${field.name}.count`] = value.length;
  }
}

function end(span: Span, code: Code | 0, attributes: Attributes): void {
  span.setAttributes(attributes);
  span.setAttribute("rpc.grpc.status_code", code);
  if (code !== 0) {
    // The code's name only: an error's message may quote a name or a query, which a span never carries.
    span.setAttribute("error.type", codeName(code));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** Ends `span` when `messages` ends (its code, or Canceled when the client stopped it), each step run in `context`. */
function traced<T>(tracing: Tracing, messages: AsyncIterable<T>, span: Span, context: Context, after: () => Attributes): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const it = tracing.run(context, () => messages[Symbol.asyncIterator]());
      let sent = 0;
      let finished = false;
      const finish = (code: Code | 0) => {
        if (finished) return;
        finished = true;
        end(span, code, { ...after(), "acms.response.messages": sent });
      };
      return {
        async next() {
          try {
            const r = await tracing.run(context, () => it.next());
            if (r.done) finish(0);
            else sent++;
            return r;
          } catch (err) {
            finish(err instanceof ConnectError ? err.code : Code.Internal);
            throw err;
          }
        },
        async return(value?: unknown) {
          finish(Code.Canceled);
          return (await tracing.run(context, () => it.return?.(value))) ?? { done: true, value: undefined };
        },
      } as AsyncIterator<T>;
    },
  };
}

/**
 * One SERVER span per call, continuing the caller's W3C `traceparent` (gRPC metadata or HTTP header: the
 * interceptor reads the request's headers, which every protocol and both transports fill, and which the MCP
 * front end fills from `_meta.traceparent`), named `<service>/<method>` as the RPC conventions say, with the
 * GenAI memory operation it performs (MEMORY_OPERATIONS). The rest of the call runs with the span active, so
 * the engine calls under it (traceBackends) become its children; a stream's span lasts until its last message.
 * Attributes are ids and counts only: the method, the protocol, the status code, the scope id, the request id,
 * the sizes of the response's lists. Never a query, a content, a key, a name or an error message.
 * Registered outermost, so refusals (authentication, scope, quotas) are traced too.
 */
export function createTracingInterceptor(tracing: Tracing): Interceptor {
  return (next) => async (req) => {
    const path = `${req.service.typeName}/${req.method.name}`;
    const operation = MEMORY_OPERATIONS[path];
    const attributes: Attributes = {
      "rpc.system": "grpc",
      "rpc.service": req.service.typeName,
      "rpc.method": req.method.name,
      "acms.protocol": protocolOf(req.header.get("content-type")),
    };
    if (operation !== undefined) {
      attributes["gen_ai.operation.name"] = operation;
      attributes["gen_ai.provider.name"] = "acms";
    }
    const { span, context } = tracing.startSpan(path, SpanKind.SERVER, attributes, tracing.extract(req.header));
    const after = (): Attributes => {
      const out: Attributes = {};
      const scopeId = req.contextValues.get(viewKey)?.scopeId;
      if (scopeId !== undefined && TOKEN.test(scopeId)) out["acms.scope_id"] = scopeId;
      const requestId = req.contextValues.get(requestIdKey);
      if (requestId !== undefined && TOKEN.test(requestId)) out["acms.request_id"] = requestId;
      return out;
    };
    let res;
    try {
      res = await tracing.run(context, () => next(req));
    } catch (err) {
      end(span, err instanceof ConnectError ? err.code : Code.Internal, after());
      throw err;
    }
    if (res.stream) return withMessage(res, traced(tracing, res.message, span, context, after));
    const out = after();
    countsOf(req.method.output, res.message, out);
    end(span, 0, out);
    return res;
  };
}
