import { SpanKind, SpanStatusCode, type Span } from "@opentelemetry/api";
import type { Backends } from "../composition/backends.js";
import type { Tracing } from "./tracing.js";

/** The ports of a Backends bundle that engine calls go through (what the application services receive). */
const PORTS = ["registry", "scopes", "tiers", "documents", "text", "vector", "graph", "units"] as const;

function isPromise(v: unknown): v is PromiseLike<unknown> {
  return v !== null && typeof v === "object" && typeof (v as { then?: unknown }).then === "function";
}

function isAsyncIterable(v: unknown): v is AsyncIterable<unknown> {
  return v !== null && typeof v === "object" && typeof (v as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function";
}

function fail(span: Span): void {
  // The error's class only: an engine's message may quote a query or a value.
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

function done(span: Span, result: unknown): void {
  if (Array.isArray(result)) span.setAttribute("acms.result.count", result.length);
  else if (result instanceof Map) span.setAttribute("acms.result.count", result.size);
  span.end();
}

/** Ends `span` when the iteration ends, counting the items. */
async function* counted(span: Span, items: AsyncIterable<unknown>): AsyncIterable<unknown> {
  let n = 0;
  let ok = false;
  try {
    for await (const item of items) {
      n++;
      yield item;
    }
    ok = true;
  } catch (err) {
    span.setAttribute("error.type", err instanceof Error ? err.name : "error");
    throw err;
  } finally {
    span.setAttribute("acms.result.count", n);
    if (ok) span.end();
    else fail(span);
  }
}

/**
 * `port` with each method call traced as an INTERNAL span under the active call's span, named
 * `<port>.<method>` (e.g. `text.search`), with the adapter's class (`acms.adapter`, e.g. `SqliteTextBackend`)
 * and the number of items it answered (`acms.result.count`, for lists, maps and streams). Arguments and results
 * are never recorded. Outside a call (background loads, the indexer's start-up) nothing is traced. Methods
 * run on the adapter itself (`this` is the adapter, not the proxy), so private state works as before.
 */
function tracedPort<T extends object>(tracing: Tracing, portName: string, port: T): T {
  const adapter = port.constructor?.name ?? "Object";
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(port, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== "function" || typeof prop !== "string" || prop === "constructor") return value;
      let fn = wrapped.get(prop);
      if (fn === undefined) {
        const method = value as (...args: unknown[]) => unknown;
        const name = `${portName}.${prop}`;
        fn = function (this: unknown, ...args: unknown[]): unknown {
          const parent = tracing.current();
          if (parent === undefined) return method.apply(target, args);
          const { span, context } = tracing.startSpan(name, SpanKind.INTERNAL, { "acms.port": portName, "acms.adapter": adapter }, parent);
          let result: unknown;
          try {
            result = tracing.run(context, () => method.apply(target, args));
          } catch (err) {
            fail(span);
            throw err;
          }
          if (isPromise(result)) {
            return Promise.resolve(result).then(
              (v) => {
                done(span, v);
                return v;
              },
              (err: unknown) => {
                fail(span);
                throw err;
              },
            );
          }
          if (isAsyncIterable(result)) return counted(span, result);
          done(span, result);
          return result;
        };
        wrapped.set(prop, fn);
      }
      return fn;
    },
  });
}

/**
 * `backends` with every port the application services call wrapped by `tracedPort`: the one place engine
 * calls are traced, chosen in the composition root, so no adapter knows about tracing. The readiness
 * promises, `startLoads` and `close` are the originals.
 */
export function traceBackends(backends: Backends, tracing: Tracing): Backends {
  const out: Backends = { ...backends };
  for (const name of PORTS) {
    const port = backends[name];
    if (port !== undefined) (out as unknown as Record<string, unknown>)[name] = tracedPort(tracing, name, port);
  }
  return out;
}
