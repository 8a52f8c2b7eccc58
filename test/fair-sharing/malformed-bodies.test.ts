/**
 * Malformed request bodies (bad protobuf, invalid UTF-8) are INVALID_ARGUMENT in every protocol, unary and
 * streaming; a client that cancels an upload is a cancel, never an internal error logged with a stack.
 */
import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import * as grpc from "@grpc/grpc-js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { CONTRACT_ENV, seedWorld, type ContractWorld } from "../contract/contract-fixture.js";
import { doc } from "../index/index-fixture.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

let t: TestServer;
let w: ContractWorld;
const internalErrors: unknown[] = [];

beforeAll(async () => {
  t = await startTestServer({ env: CONTRACT_ENV, onInternalError: (err) => internalErrors.push(err) });
  w = await seedWorld(t);
});

afterAll(async () => {
  await t?.close(true);
});

/** Field 1 (a string) announced 5 bytes long with 1 present: the message ends early. */
const TRUNCATED = Buffer.from([0x0a, 0x05, 0x61]);
/** Field 1 (a string) holding bytes that are not UTF-8. */
const NOT_UTF8 = Buffer.from([0x0a, 0x02, 0xff, 0xfe]);
/** A wire type that does not exist (7). */
const BAD_WIRE_TYPE = Buffer.from([0x0f, 0x01]);

const envelope = (msg: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, 0, msg.length]), msg]);

interface RawAnswer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders;
  body: Buffer;
}

function rawCall(path: string, headers: Record<string, string>, body: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(t.server.url);
    session.on("error", reject);
    const req = session.request({ ":method": "POST", ":path": path, ...headers });
    const chunks: Buffer[] = [];
    let status = 0;
    let head: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    req.on("response", (h) => {
      head = h;
      status = Number(h[":status"]);
    });
    req.on("trailers", (h) => {
      trailers = h;
    });
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      session.close();
      resolve({ status, headers: head, trailers, body: Buffer.concat(chunks) });
    });
    req.on("error", reject);
    req.end(body);
  });
}

const SEARCH = `/${TextBackendService.typeName}/Search`;
const UPSERT = `/${IndexService.typeName}/UpsertDocuments`;
const auth = () => ({ authorization: `Bearer ${t.keys.writer}`, "acms-scope": w.apiScope });

/** The status and message of a gRPC-Web answer: its trailers are the last envelope of the body. */
function grpcWebTrailers(body: Buffer): Record<string, string> {
  let at = 0;
  const out: Record<string, string> = {};
  while (at + 5 <= body.length) {
    const flags = body[at];
    const len = body.readUInt32BE(at + 1);
    const payload = body.subarray(at + 5, at + 5 + len);
    if (flags & 0x80) {
      for (const line of payload.toString("utf8").split("\r\n")) {
        const i = line.indexOf(":");
        if (i > 0) out[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
    }
    at += 5 + len;
  }
  return out;
}

describe.each([
  ["truncated", TRUNCATED],
  ["not UTF-8", NOT_UTF8],
  ["bad wire type", BAD_WIRE_TYPE],
])("a %s protobuf body", (_name, bad) => {
  it("is INVALID_ARGUMENT over Connect (unary)", async () => {
    const r = await rawCall(SEARCH, { "content-type": "application/proto", ...auth() }, bad);
    expect(r.status).toBe(400);
    const json = JSON.parse(r.body.toString("utf8")) as { code: string; message: string };
    expect(json.code).toBe("invalid_argument");
    expect(json.message).toMatch(/acms\.v1\.SearchRequest/);
  });

  it("is INVALID_ARGUMENT over gRPC, unary and client stream", async () => {
    for (const path of [SEARCH, UPSERT]) {
      const r = await rawCall(path, { "content-type": "application/grpc", te: "trailers", ...auth() }, envelope(bad));
      const status = r.trailers["grpc-status"] ?? r.headers["grpc-status"];
      expect([path, status]).toEqual([path, "3"]);
    }
  });

  it("is INVALID_ARGUMENT over gRPC-Web, unary and client stream", async () => {
    for (const path of [SEARCH, UPSERT]) {
      const r = await rawCall(path, { "content-type": "application/grpc-web+proto", ...auth() }, envelope(bad));
      const status = grpcWebTrailers(r.body)["grpc-status"] ?? r.headers["grpc-status"];
      expect([path, status]).toEqual([path, "3"]);
    }
  });

  it("is INVALID_ARGUMENT for a grpc-js client", async () => {
    const client = new grpc.Client(`127.0.0.1:${t.server.port}`, grpc.credentials.createInsecure());
    const md = new grpc.Metadata();
    md.set("authorization", `Bearer ${t.keys.writer}`);
    md.set("acms-scope", w.apiScope);
    try {
      const code = await new Promise<grpc.status>((resolve) => {
        client.makeUnaryRequest(
          SEARCH,
          (b: Buffer) => b,
          (b: Buffer) => b,
          bad,
          md,
          (err) => resolve(err ? err.code : grpc.status.OK),
        );
      });
      expect(code).toBe(grpc.status.INVALID_ARGUMENT);
    } finally {
      client.close();
    }
  });
});

it("a Connect JSON body that is not UTF-8 is INVALID_ARGUMENT", async () => {
  const body = Buffer.concat([Buffer.from('{"query":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
  const r = await rawCall(SEARCH, { "content-type": "application/json", ...auth() }, body);
  expect(r.status).toBe(400);
  expect((JSON.parse(r.body.toString("utf8")) as { code: string }).code).toBe("invalid_argument");
});

it("a client cancelling its uploads is a cancel: nothing is logged as an internal error", async () => {
  const consoleErrors = jest.spyOn(console, "error").mockImplementation(() => undefined);
  try {
    for (const protocol of ["grpc", "connect"] as const) {
      const index = t.client(IndexService, "writer", undefined, protocol);
      for (let i = 0; i < 10; i++) {
        const ac = new AbortController();
        async function* slow() {
          yield { resourceId: w.guide, documents: [doc(`cancel/${protocol}-${i}.md`, "cancelled upload")] };
          ac.abort();
          await new Promise((r) => setTimeout(r, 20));
          yield { resourceId: w.guide, documents: [doc(`cancel/${protocol}-${i}-b.md`, "cancelled upload")] };
        }
        await expect(index.upsertDocuments(slow(), { signal: ac.signal })).rejects.toBeDefined();
      }
    }
    // Let the server notice every reset stream.
    await new Promise((r) => setTimeout(r, 300));
    expect(internalErrors).toEqual([]);
    expect(consoleErrors).not.toHaveBeenCalled();
  } finally {
    consoleErrors.mockRestore();
  }
});

describe("a compressed body that does not decompress (truncated gzip, or bytes that are not gzip at all)", () => {
  // A valid SearchRequest { query: "zebra" }, gzipped, then cut short: zlib says "unexpected end of file".
  const valid = Buffer.from([0x0a, 0x05, ...Buffer.from("zebra")]);
  const gz = gzipSync(valid);
  const cases: Array<[string, Buffer]> = [
    ["truncated gzip", gz.subarray(0, gz.length - 6)],
    ["not gzip", Buffer.from([1, 2, 3, 4])],
  ];

  it.each(cases)(
    "%s is INVALID_ARGUMENT over Connect (unary and stream), gRPC and gRPC-Web (unary and client stream)",
    async (_name, bad) => {
      const unary = await rawCall(SEARCH, { "content-type": "application/proto", "content-encoding": "gzip", ...auth() }, bad);
      expect([unary.status, (JSON.parse(unary.body.toString("utf8")) as { code: string }).code]).toEqual([400, "invalid_argument"]);
      const streamed = await rawCall(
        UPSERT,
        { "content-type": "application/connect+proto", "connect-content-encoding": "gzip", ...auth() },
        compressedEnvelope(bad),
      );
      expect(streamed.body.toString("utf8")).toMatch(/"code":"invalid_argument"/);
      for (const path of [SEARCH, UPSERT]) {
        const g = await rawCall(
          path,
          { "content-type": "application/grpc", te: "trailers", "grpc-encoding": "gzip", ...auth() },
          compressedEnvelope(bad),
        );
        expect([path, "grpc", g.trailers["grpc-status"] ?? g.headers["grpc-status"]]).toEqual([path, "grpc", "3"]);
        const web = await rawCall(
          path,
          { "content-type": "application/grpc-web+proto", "grpc-encoding": "gzip", ...auth() },
          compressedEnvelope(bad),
        );
        expect([path, "grpc-web", grpcWebTrailers(web.body)["grpc-status"] ?? web.headers["grpc-status"]]).toEqual([path, "grpc-web", "3"]);
      }
      // The same message, whole, is answered.
      const ok = await rawCall(SEARCH, { "content-type": "application/proto", "content-encoding": "gzip", ...auth() }, gz);
      expect(ok.status).toBe(200);
      expect(internalErrors).toEqual([]);
    },
  );
});

/** An envelope with the compressed flag set. */
function compressedEnvelope(msg: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head[0] = 1;
  head.writeUInt32BE(msg.length, 1);
  return Buffer.concat([head, msg]);
}
