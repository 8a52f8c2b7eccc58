import http2 from "node:http2";
import { gzipSync, gunzipSync } from "node:zlib";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { SearchRequestSchema, SearchResponseSchema, TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { fastPathCalls } from "../../src/server/transport/grpc/grpc-stream-handler.js";
import { seededSearchServer } from "./interop-fixture.js";

// Connect unary calls in protobuf take the server's fast path (src/server/transport/grpc/grpc-stream-handler.ts);
// the same request with a gzip-compressed body is left to connect-node's handler. Each case sends both and
// expects the same answer: status, content type, the message or the error's JSON (code, message, details).

interface RawAnswer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
}

const SEARCH = `/${TextBackendService.typeName}/Search`;

function rawCall(url: string, path: string, headers: http2.OutgoingHttpHeaders, body: Buffer | Buffer[]): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", reject);
    const req = session.request({ ":method": "POST", ":path": path, "content-type": "application/proto", ...headers });
    let got: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on("response", (h) => (got = h));
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      session.close();
      const raw = Buffer.concat(chunks);
      resolve({ status: Number(got[":status"]), headers: got, body: got["content-encoding"] === "gzip" ? gunzipSync(raw) : raw });
    });
    req.on("error", reject);
    for (const chunk of Array.isArray(body) ? body : [body]) req.write(chunk);
    req.end();
  });
}

/** The call through the fast path and through connect-node's handler (the body gzip-compressed), each checked to take its path. */
async function both(url: string, headers: http2.OutgoingHttpHeaders, body: Buffer, path = SEARCH): Promise<[RawAnswer, RawAnswer]> {
  const before = fastPathCalls.connect;
  const fast = await rawCall(url, path, headers, body);
  expect(fastPathCalls.connect).toBe(before + 1);
  const handler = await rawCall(url, path, { ...headers, "content-encoding": "gzip" }, gzipSync(body));
  expect(fastPathCalls.connect).toBe(before + 1);
  return [fast, handler];
}

/** What a caller reads of an answer: status, content type, `trailer-` headers, and the error's JSON or the message's size. */
function seen(a: RawAnswer): unknown {
  const trailers = Object.fromEntries(Object.entries(a.headers).filter(([k]) => k.startsWith("trailer-")));
  const type = String(a.headers["content-type"]);
  const body = type === "application/json" ? JSON.parse(a.body.toString("utf8")) : { bytes: a.body.length };
  return { status: a.status, type, trailers, body };
}

describe("Connect fast path", () => {
  const server = seededSearchServer();
  const auth = server.auth;
  const search = (query: string) => Buffer.from(toBinary(SearchRequestSchema, create(SearchRequestSchema, { query, maxResults: 5 })));

  it("answers a Connect call as connect-node's handler does: 200, application/proto, the message and its length", async () => {
    const [fast, handler] = await both(server.t.server.url, auth(), search("parser"));
    expect(seen(fast)).toEqual(seen(handler));
    expect(fast.status).toBe(200);
    expect(fast.headers["content-type"]).toBe("application/proto");
    expect(Number(fast.headers["content-length"])).toBe(fast.body.length);
    const answer = fromBinary(SearchResponseSchema, fast.body);
    expect(answer.scopeId).toBe(server.seeded.scopeId);
    expect(answer.results.map((r) => r.path)).toEqual(["src/parser.ts"]);
    expect(answer).toEqual(fromBinary(SearchResponseSchema, handler.body));
  });

  it("an empty body is the empty message, as in connect-node's handler", async () => {
    const [fast, handler] = await both(server.t.server.url, auth(), Buffer.alloc(0));
    expect(seen(fast)).toEqual(seen(handler));
    expect(JSON.parse(fast.body.toString())).toMatchObject({ code: "invalid_argument" });
  });

  it("refusals are the error's JSON with its HTTP status and details: no key, no scope, a field, a scope violation", async () => {
    const cases: Array<[http2.OutgoingHttpHeaders, Buffer, string]> = [
      [{}, search("parser"), "unauthenticated"],
      [{ authorization: `Bearer ${server.t.keys.writer}` }, search("parser"), "failed_precondition"],
      [auth(), search(""), "invalid_argument"],
      [{ authorization: `Bearer ${server.t.keys.writer}`, "acms-scope": "01ARZ3NDEKTSV4RRFFQ69G5FAV" }, search("parser"), "not_found"],
    ];
    for (const [headers, body, code] of cases) {
      const [fast, handler] = await both(server.t.server.url, headers, body);
      expect(seen(fast)).toEqual(seen(handler));
      expect(JSON.parse(fast.body.toString())).toMatchObject({ code });
    }
    // A field's violation travels as a BadRequest detail.
    const [bad] = await both(server.t.server.url, auth(), search(""));
    expect(JSON.parse(bad.body.toString()).details).toEqual([expect.objectContaining({ type: "google.rpc.BadRequest" })]);
  });

  it("an undecodable body is INVALID_ARGUMENT naming the message type, as the handler's path answers it", async () => {
    const [fast, handler] = await both(server.t.server.url, auth(), Buffer.from([0xff, 0xff, 0xff]));
    expect(seen(fast)).toEqual(seen(handler));
    expect(fast.status).toBe(400);
    expect(JSON.parse(fast.body.toString()).message).toMatch(/^the request body is not a valid acms\.v1\.SearchRequest message/);
  });

  it("a malformed connect-timeout-ms is INVALID_ARGUMENT, a valid one is honoured", async () => {
    const [fast, handler] = await both(server.t.server.url, { ...auth(), "connect-timeout-ms": "soon" }, search("parser"));
    expect(seen(fast)).toEqual(seen(handler));
    expect(fast.status).toBe(400);
    const [ok] = await both(server.t.server.url, { ...auth(), "connect-timeout-ms": "30000" }, search("parser"));
    expect(ok.status).toBe(200);
  });

  it("refuses a body over the message limit from its content-length, and one whose bytes pass it", async () => {
    const before = fastPathCalls.connect;
    const big = await rawCall(server.t.server.url, SEARCH, { ...auth(), "content-length": String(70_000) }, Buffer.alloc(70_000, 1));
    expect(big.status).toBe(429);
    expect(JSON.parse(big.body.toString())).toMatchObject({ code: "resource_exhausted" });
    // No content-length: the bytes themselves pass the limit.
    const streamed = await rawCall(server.t.server.url, SEARCH, auth(), [Buffer.alloc(40_000, 1), Buffer.alloc(40_000, 1)]);
    expect(streamed.status).toBe(429);
    expect(JSON.parse(streamed.body.toString())).toMatchObject({ code: "resource_exhausted" });
    expect(fastPathCalls.connect).toBe(before + 2);
  });

  it("leaves JSON and server streams to connect-node's handler", async () => {
    const before = fastPathCalls.connect;
    const json = await rawCall(
      server.t.server.url,
      SEARCH,
      { ...auth(), "content-type": "application/json" },
      Buffer.from('{"query":"parser"}'),
    );
    expect(json.status).toBe(200);
    expect(JSON.parse(json.body.toString()).scopeId).toBe(server.seeded.scopeId);
    // A server-streaming method is not a Connect unary call: application/proto there is unsupported, as before.
    const stream = await rawCall(server.t.server.url, `/${TextBackendService.typeName}/SearchStream`, auth(), search("parser"));
    expect(stream.status).toBe(415);
    expect(fastPathCalls.connect).toBe(before);
  });
});
