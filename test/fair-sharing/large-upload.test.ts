/**
 * Fair sharing, large uploads: one tenant's UpsertDocuments message of 20,000 documents neither holds the
 * serving thread (health answers while it is staged, and while it is published and settled) nor holds
 * another tenant's write until it is done (that write commits while the upload is still staged). Observed through the store's state and the order
 * of events, never through elapsed time.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { createClient } from "@connectrpc/connect";
import { DocumentInputSchema, IndexService } from "../../gen/acms/v1/index_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { decodeDocumentSlices } from "../../src/server/routes/decode-document-slices.js";
import { CONTRACT_ENV, expectBadField, expectCode } from "../contract/contract-fixture.js";
import { doc, makeResource, makeScope } from "../index/index-fixture.js";
import { authInterceptor, startTestServer, type TestServer } from "../support/test-server.js";
import { HEALTH_DEADLINE_MS, healthChecksWhile } from "./health-checks-while.js";

const N = 20_000;
let t: TestServer;
let big: string;
let small: string;

beforeAll(async () => {
  // The uploads here take tens of seconds on a loaded machine: past the default per-call time budget (60 s).
  t = await startTestServer({ env: { ...CONTRACT_ENV, ACMS_QUOTA_CALL_MS: "600000" } });
  big = await makeResource(t, "writer", "local/big", "big");
  small = await makeResource(t, "other", "other/small", "small");
});

afterAll(async () => {
  await t?.close(true);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function* oneMessage<T>(m: T): AsyncIterable<T> {
  yield m;
}

it("health and another tenant's small write are answered while a 20,000-document message is still staged", async () => {
  const db = new Database(join(t.dataDir, "acms.db"), { readonly: true, fileMustExist: true });
  try {
    const stagedRows = () => (db.prepare("SELECT count(*) AS n FROM documents WHERE staged IS NOT NULL").get() as { n: number }).n;
    // Every tenth document brings an embedding (distinct ones): the vectors are added while the message is staged.
    const documents = Array.from({ length: N }, (_, i) =>
      doc(
        `bulk/${i}.md`,
        `bulk document ${i}`,
        i % 10 === 0
          ? { chunks: [{ text: `bulk ${i}`, embedding: [1 + Math.sin(i), 1 + Math.cos(i * 0.7), 1 + Math.sin(i * 1.3), 1] }] }
          : {},
      ),
    );
    let bigSettled = false;
    const upload = t
      .client(IndexService, "writer", undefined, "grpc")
      .upsertDocuments(oneMessage({ resourceId: big, documents }))
      .finally(() => {
        bigSettled = true;
      });
    upload.catch(() => undefined);
    // The upload is under way once its first staging slice has committed.
    while (stagedRows() === 0 && !bigSettled) await sleep(5);
    expect(bigSettled).toBe(false);
    const health = await t.client(Health, undefined, undefined, "grpc").check({ service: "" }, { timeoutMs: HEALTH_DEADLINE_MS });
    const write = await t
      .client(IndexService, "other", undefined, "grpc")
      .upsertDocuments(oneMessage({ resourceId: small, documents: [doc("note.md", "a small note from another tenant")] }));
    // Both answered while the large message is still staged: neither waited for it.
    expect(stagedRows()).toBeGreaterThan(0);
    expect(bigSettled).toBe(false);
    expect(health.status).toBe(ServingStatus.SERVING);
    expect(write.documentsUpserted).toBe(1);
    const outcome = await upload;
    expect(outcome.documentsUpserted).toBe(N);
    expect(outcome.vectorsIndexed).toBe(N / 10);
    // The small write committed first: generations follow commit order.
    expect(outcome.indexGeneration).toBeGreaterThan(write.indexGeneration);
    expect(stagedRows()).toBe(0);
    const scope = await makeScope(t, "other", { projects: ["other/small"] });
    const found = await t.client(TextBackendService, "other", scope).search({ query: "small note" });
    expect(found.results.map((r) => r.path)).toEqual(["note.md"]);
  } finally {
    db.close();
  }
}, 300_000);

it("health and other tenants' searches are answered while a message replacing 20,000 documents, with 2,500 vectors, is published", async () => {
  // Runs after the test above: `big` holds its 20,000 documents, which this message replaces (the publish
  // supersedes every one of them); every eighth new version brings a vector, so the store passes the size at
  // which it builds its HNSW graph (4,096) during the upload.
  const db = new Database(join(t.dataDir, "acms.db"), { readonly: true, fileMustExist: true });
  const health = t.client(Health, undefined, undefined, "grpc");
  try {
    const count = (sql: string) => (db.prepare(`SELECT count(*) AS n FROM ${sql}`).get() as { n: number }).n;
    expect(count(`documents WHERE resource_id = '${big}' AND superseded_at IS NULL`)).toBe(N);
    await t.client(IndexService, "other").upsertDocuments(
      oneMessage({
        resourceId: small,
        documents: [doc("pin.md", "pinned vector", { chunks: [{ text: "pinned vector", embedding: [0, 0, 1, 0] }] })],
      }),
    );
    const scope = await makeScope(t, "other", { projects: ["other/small"] });
    const documents = Array.from({ length: N }, (_, i) =>
      doc(`bulk/${i}.md`, `rev${i}x`, {
        chunks: [
          {
            text: `rev${i}x`,
            ...(i % 8 === 0 ? { embedding: [1 + Math.sin(i), 1 + Math.cos(i * 0.7), 1 + Math.sin(i * 1.3), 0.5 + (i % 7) / 7] } : {}),
          },
        ],
      }),
    );
    let settled = false;
    const upload = t
      .client(IndexService, "writer", undefined, "grpc")
      .upsertDocuments(oneMessage({ resourceId: big, documents }))
      .finally(() => {
        settled = true;
      });
    upload.catch(() => undefined);
    const checks = healthChecksWhile(health, upload);
    // Published (its stage committed) and not yet settled, nor answered: the other tenant calls now.
    while (count("published_stages") === 0 && !settled) await sleep(5);
    if (settled) expect(await upload.then(() => "answered", String)).toBe("still being settled");
    expect(settled).toBe(false);
    const [answer, text, vector] = await Promise.all([
      health.check({ service: "" }, { timeoutMs: HEALTH_DEADLINE_MS }),
      t.client(TextBackendService, "other", scope).search({ query: "small note" }),
      t.client(VectorBackendService, "other", scope).similaritySearch({ embedding: [0, 0, 1, 0], topK: 1 }),
    ]);
    // All three answered while the large message was still being settled.
    expect(settled).toBe(false);
    expect(answer.status).toBe(ServingStatus.SERVING);
    expect(text.results.map((r) => r.path)).toEqual(["note.md"]);
    expect(vector.results.map((r) => r.path)).toEqual(["pin.md"]);
    expect(vector.results[0].score).toBeCloseTo(1, 5);
    const outcome = await upload;
    expect(new Set(await checks)).toEqual(new Set([ServingStatus.SERVING]));
    expect([outcome.documentsUpserted, outcome.vectorsIndexed]).toEqual([N, N / 8]);
    expect([count("published_stages"), count("documents WHERE staged IS NOT NULL OR superseded_by IS NOT NULL")]).toEqual([0, 0]);
    expect(count(`documents WHERE resource_id = '${big}' AND superseded_at IS NOT NULL`)).toBe(N);
    // The writer sees the new versions only.
    const bigScope = await makeScope(t, "writer", { projects: ["local/big"] });
    const found = await t.client(TextBackendService, "writer", bigScope).search({ query: "rev7x" });
    expect(found.results.map((r) => [r.path, r.content])).toEqual([["bulk/7.md", "rev7x"]]);
    const old = await t.client(TextBackendService, "writer", bigScope).search({ query: "bulk document 7" });
    expect(old.results.filter((r) => r.path === "bulk/7.md")).toEqual([]);
  } finally {
    db.close();
  }
}, 300_000);

it("decodes a message's documents over several event-loop turns", async () => {
  const encoded = Array.from({ length: 4096 }, (_, i) =>
    toBinary(DocumentInputSchema, create(DocumentInputSchema, { path: `d/${i}.md`, content: `doc ${i}` })),
  );
  let turns = 0;
  let done = false;
  const ticking = (async () => {
    while (!done) {
      await new Promise((r) => setImmediate(r));
      turns += 1;
    }
  })();
  const decoded = await decodeDocumentSlices(encoded);
  done = true;
  await ticking;
  expect(decoded.map((d) => d.path)).toEqual(encoded.map((_, i) => `d/${i}.md`));
  // 1,024 documents a slice at most: other work ran between the four slices.
  expect(turns).toBeGreaterThanOrEqual(3);
});

it("a document entry that does not decode is INVALID_ARGUMENT naming it, and nothing of the message is written", async () => {
  // Field 2 (documents) holding a DocumentInput whose path (field 1) is not UTF-8.
  const bad = Buffer.from([0x0a, 0x02, 0xff, 0xfe]);
  const good = toBinary(DocumentInputSchema, create(DocumentInputSchema, { path: "fine.md", content: "fine" }));
  const { decodeError } = await decodeDocumentSlices([good, bad]).then(
    () => ({ decodeError: undefined }),
    (err: unknown) => ({ decodeError: err as { violations: Array<{ field: string }> } }),
  );
  expect(decodeError?.violations.map((v) => v.field)).toEqual(["documents[1]"]);
  // Over the wire: a raw gRPC body with one valid and one malformed document.
  const header = (field: number, len: number) => Buffer.from([(field << 3) | 2, len]);
  const resourceId = Buffer.from(small);
  const body = Buffer.concat([
    header(1, resourceId.length),
    resourceId,
    header(2, good.length),
    Buffer.from(good),
    header(2, bad.length),
    bad,
  ]);
  const raw = await rawGrpcUpsert(body);
  expect(raw.status).toBe(String(Code.InvalidArgument));
  expect(decodeURIComponent(raw.message)).toMatch(/documents\[1\]/);
});

it("Connect JSON uploads keep working on the generated type's route", async () => {
  const sessionManager = new Http2SessionManager(t.server.url);
  try {
    const json = createClient(
      IndexService,
      createConnectTransport({
        baseUrl: t.server.url,
        httpVersion: "2",
        sessionManager,
        useBinaryFormat: false,
        interceptors: [authInterceptor(t.keys.other)],
      }),
    );
    const out = await json.upsertDocuments(oneMessage({ resourceId: small, documents: [doc("json.md", "sent as JSON")] }));
    expect(out.documentsUpserted).toBe(1);
    await expectBadField(json.upsertDocuments(oneMessage({ resourceId: small, documents: [doc("", "no path")] })), "documents[0].path");
    // The wire route refuses a resource outside the key's projects exactly as the generated route does.
    await expectCode(
      t.client(IndexService, "other").upsertDocuments(oneMessage({ resourceId: big, documents: [doc("x.md", "x")] })),
      Code.PermissionDenied,
    );
    await expectCode(json.upsertDocuments(oneMessage({ resourceId: big, documents: [doc("x.md", "x")] })), Code.PermissionDenied);
  } finally {
    sessionManager.abort();
  }
});

it("a JSON message past ACMS_MAX_JSON_MESSAGE_BYTES (1 MiB) is RESOURCE_EXHAUSTED before it is decoded; the same in protobuf is taken", async () => {
  // (A client session holds a message it writes whole: Node's default of 10 MB would refuse this one client-side.)
  const sessionManager = new Http2SessionManager(t.server.url, undefined, { maxSessionMemory: 64 });
  try {
    const json = createClient(
      IndexService,
      createConnectTransport({
        baseUrl: t.server.url,
        httpVersion: "2",
        sessionManager,
        useBinaryFormat: false,
        interceptors: [authInterceptor(t.keys.other)],
      }),
    );
    const filler = "lorem ipsum dolor sit amet ".repeat(150);
    const many = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => doc(`${prefix}/${i}.md`, `${prefix} ${i} ${filler}`));
    // 12 MiB of JSON, under the 16 MiB message cap: decoded in one step, it held the serving thread for seconds.
    const huge = json.upsertDocuments(oneMessage({ resourceId: small, documents: many(3000, "huge") }));
    const statuses = await healthChecksWhile(t.client(Health, undefined, undefined, "grpc"), huge);
    const err = await expectCode(huge, Code.ResourceExhausted);
    expect(err.rawMessage).toMatch(/larger than configured readMaxBytes 1048576/);
    expect(new Set(statuses)).toEqual(new Set([ServingStatus.SERVING]));
    // Split into messages of the stream, the same documents go in JSON; a 2.4 MiB message goes in protobuf.
    async function* slices() {
      const docs = many(600, "split");
      for (let i = 0; i < docs.length; i += 150) yield { resourceId: small, documents: docs.slice(i, i + 150) };
    }
    expect((await json.upsertDocuments(slices())).documentsUpserted).toBe(600);
    const binary = await t
      .client(IndexService, "other", undefined, "grpc")
      .upsertDocuments(oneMessage({ resourceId: small, documents: many(600, "proto") }));
    expect(binary.documentsUpserted).toBe(600);
    const scope = await makeScope(t, "other", { projects: ["other/small"] });
    const found = await t.client(TextBackendService, "other", scope).search({ query: "huge" });
    expect(found.results).toEqual([]);
  } finally {
    sessionManager.abort();
  }
}, 300_000);

/** One UpsertDocuments call over raw HTTP/2 with `message` as its only gRPC message: the status and message. */
async function rawGrpcUpsert(message: Buffer): Promise<{ status: string; message: string }> {
  const http2 = await import("node:http2");
  return new Promise((resolve, reject) => {
    const session = http2.connect(t.server.url);
    session.on("error", reject);
    const req = session.request({
      ":method": "POST",
      ":path": `/${IndexService.typeName}/UpsertDocuments`,
      "content-type": "application/grpc",
      te: "trailers",
      authorization: `Bearer ${t.keys.other}`,
    });
    let head: Record<string, unknown> = {};
    req.on("response", (h) => {
      head = h;
    });
    req.on("trailers", (h) => {
      head = { ...head, ...h };
    });
    req.on("data", () => undefined);
    req.on("end", () => {
      session.close();
      resolve({ status: String(head["grpc-status"]), message: String(head["grpc-message"] ?? "") });
    });
    req.on("error", reject);
    const envelope = Buffer.alloc(5);
    envelope.writeUInt32BE(message.length, 1);
    req.end(Buffer.concat([envelope, message]));
  });
}
