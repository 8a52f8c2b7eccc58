import http2 from "node:http2";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { SearchRequestSchema, SearchResponseSchema, TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { GrpcJsGenericClient as Client } from "./grpc-js-generic-client.js";
import { seededSearchServer } from "./interop-fixture.js";

/** One raw HTTP/2 gRPC call: the response headers, trailers and body bytes. */
function rawCall(
  url: string,
  headers: http2.OutgoingHttpHeaders,
  body: Buffer,
  settings?: http2.Settings,
): Promise<{ headers: http2.IncomingHttpHeaders; trailers: http2.IncomingHttpHeaders; body: Buffer; trailersAfterData: boolean }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url, settings ? { settings } : undefined);
    session.on("error", reject);
    const req = session.request({
      ":method": "POST",
      ":path": "/acms.v1.TextBackendService/Search",
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    });
    let got: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    let trailersAfterData = true;
    const chunks: Buffer[] = [];
    req.on("response", (h) => (got = h));
    req.on("trailers", (t) => (trailers = t));
    req.on("data", (c: Buffer) => {
      if (Object.keys(trailers).length > 0) trailersAfterData = false;
      chunks.push(c);
    });
    req.on("end", () => {
      session.close();
      resolve({ headers: got, trailers, body: Buffer.concat(chunks), trailersAfterData });
    });
    req.on("error", reject);
    req.end(body);
  });
}

function envelope(bytes: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(bytes.length, 1);
  return Buffer.concat([head, Buffer.from(bytes)]);
}

describe("gRPC fast path", () => {
  const server = seededSearchServer();
  const auth = server.auth;
  const search = (query: string) => envelope(toBinary(SearchRequestSchema, create(SearchRequestSchema, { query, maxResults: 5 })));

  it("answers a raw gRPC call exactly as Connect does: one message, grpc-status 0 in the trailers", async () => {
    const r = await rawCall(server.t.server.url, auth(), search("parser"));
    expect(r.headers[":status"]).toBe(200);
    expect(r.headers["content-type"]).toBe("application/grpc");
    expect(r.trailers["grpc-status"]).toBe("0");
    expect(r.body[0]).toBe(0);
    expect(r.body.readUInt32BE(1)).toBe(r.body.length - 5);
    const answer = fromBinary(SearchResponseSchema, r.body.subarray(5));
    expect(answer.scopeId).toBe(server.seeded.scopeId);
    expect(answer.results.length).toBeGreaterThan(0);
  });

  it("sends an answer larger than the stream's write buffer whole, through a small flow-control window, then its trailers", async () => {
    // Forty documents of ~1 KB each: the answer (~45 KB) is over the 16 KiB the stream buffers before its
    // writes report backpressure, and the client's 4 KiB window makes the server send it in many rounds.
    const documents = Array.from({ length: 40 }, (_, i) => ({
      path: `big/${i}.md`,
      content: `lexer ${i} ${"tokens flow through the lexer stage ".repeat(28)}`,
    }));
    const c = new Client(`127.0.0.1:${server.t.server.port}`);
    try {
      await c.clientStream(
        IndexService.method.upsertDocuments,
        [{ resourceId: server.seeded.a, documents }],
        Client.metadata(server.t.keys.writer),
      );
    } finally {
      c.close();
    }
    const request = envelope(toBinary(SearchRequestSchema, create(SearchRequestSchema, { query: "lexer", maxResults: 40 })));
    const r = await rawCall(server.t.server.url, auth(), request, { initialWindowSize: 4096 });
    expect(r.trailers["grpc-status"]).toBe("0");
    expect(r.trailersAfterData).toBe(true);
    expect(r.body.length).toBeGreaterThan(32 * 1024);
    expect(r.body.readUInt32BE(1)).toBe(r.body.length - 5);
    const answer = fromBinary(SearchResponseSchema, r.body.subarray(5));
    expect(answer.results.map((x) => x.path).sort()).toEqual(documents.map((d) => d.path).sort());
  });

  it("refuses an envelope larger than the message limit as soon as its header arrives", async () => {
    const r = await rawCall(server.t.server.url, auth(), Buffer.from([0, 0x7f, 0xff, 0xff, 0xff, 1, 2, 3]));
    expect(r.headers["grpc-status"] ?? r.trailers["grpc-status"]).toBe(String(grpc.status.RESOURCE_EXHAUSTED));
  });

  it("answers a truncated envelope, an undecodable message and a compressed flag without encoding as INVALID_ARGUMENT", async () => {
    for (const body of [
      Buffer.from([0, 0, 0, 0, 9, 1]),
      Buffer.from([0, 0, 0, 0, 3, 0xff, 0xff, 0xff]),
      Buffer.concat([Buffer.from([1]), search("x").subarray(1)]),
    ]) {
      const r = await rawCall(server.t.server.url, auth(), body);
      expect(r.headers["grpc-status"] ?? r.trailers["grpc-status"]).toBe(String(grpc.status.INVALID_ARGUMENT));
    }
  });

  it("answers a call without a message, or with two, as UNIMPLEMENTED (as Connect does)", async () => {
    for (const body of [Buffer.alloc(0), Buffer.concat([search("a"), search("b")])]) {
      const r = await rawCall(server.t.server.url, auth(), body);
      expect(r.headers["grpc-status"] ?? r.trailers["grpc-status"]).toBe(String(grpc.status.UNIMPLEMENTED));
    }
  });

  it("runs the access checks: no key is UNAUTHENTICATED, no scope FAILED_PRECONDITION", async () => {
    const none = await rawCall(server.t.server.url, {}, search("parser"));
    expect(none.headers["grpc-status"]).toBe(String(grpc.status.UNAUTHENTICATED));
    const noScope = await rawCall(server.t.server.url, { authorization: `Bearer ${server.t.keys.writer}` }, search("parser"));
    expect(noScope.headers["grpc-status"]).toBe(String(grpc.status.FAILED_PRECONDITION));
  });

  it("answers a malformed grpc-timeout as INVALID_ARGUMENT, and honours a valid one", async () => {
    const bad = await rawCall(server.t.server.url, { ...auth(), "grpc-timeout": "99999999999S" }, search("parser"));
    expect(bad.headers["grpc-status"]).toBe(String(grpc.status.INVALID_ARGUMENT));
    const ok = await rawCall(server.t.server.url, { ...auth(), "grpc-timeout": "30S" }, search("parser"));
    expect(ok.trailers["grpc-status"]).toBe("0");
  });

  it("leaves a gzip-compressed request to Connect, which answers it alike", async () => {
    const c = new grpc.Client(`127.0.0.1:${server.t.server.port}`, grpc.credentials.createInsecure(), {
      "grpc.default_compression_algorithm": grpc.compressionAlgorithms.gzip,
    });
    try {
      const md = Client.metadata(server.t.keys.writer, server.seeded.scopeId);
      const bytes = await new Promise<Buffer>((resolve, reject) =>
        c.makeUnaryRequest(
          `/${TextBackendService.typeName}/Search`,
          (m: Uint8Array) => Buffer.from(m),
          (b: Buffer) => b,
          toBinary(SearchRequestSchema, create(SearchRequestSchema, { query: "parser" })),
          md,
          (err, v) => (err ? reject(err) : resolve(v!)),
        ),
      );
      expect(fromBinary(SearchResponseSchema, bytes).scopeId).toBe(server.seeded.scopeId);
    } finally {
      c.close();
    }
  });
});
