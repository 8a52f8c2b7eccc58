/**
 * A client stream's time budget follows its progress (ACMS_QUOTA_CALL_MS counts from the last message
 * received): an UpsertDocuments stream that keeps sending runs past the budget and succeeds, one that
 * stalls for the budget is cut with DEADLINE_EXCEEDED, and a unary call still has its plain budget.
 */
import { Code } from "@connectrpc/connect";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { assertCode, CONTRACT_ENV, failure } from "../contract/contract-fixture.js";
import { doc, makeResource } from "../index/index-fixture.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const BUDGET_MS = 1000;
let t: TestServer;
let resource: string;

beforeAll(async () => {
  t = await startTestServer({ env: { ...CONTRACT_ENV, ACMS_QUOTA_CALL_MS: String(BUDGET_MS) } });
  resource = await makeResource(t, "writer", "local/stream", "stream");
});

afterAll(async () => {
  await t?.close(true);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(["grpc", "connect"] as const)("a client stream's time budget (%s)", (protocol) => {
  it("an upload that keeps sending runs past the budget and succeeds", async () => {
    const messages = 30;
    const started = performance.now();
    async function* steady() {
      for (let i = 0; i < messages; i++) {
        if (i > 0) await sleep(BUDGET_MS / 10);
        yield { resourceId: resource, documents: [doc(`steady-${protocol}/${i}.md`, `steady upload ${i}`)] };
      }
    }
    const res = await t.client(IndexService, "writer", undefined, protocol).upsertDocuments(steady());
    // The premise: the stream lasted past the budget (30 messages 100 ms apart), so a wall-clock budget would have cut it.
    expect(performance.now() - started).toBeGreaterThan(BUDGET_MS);
    expect(res.messagesReceived).toBe(messages);
    expect(res.documentsUpserted).toBe(messages);
  });

  it("an upload that stalls for the budget is cut with DEADLINE_EXCEEDED", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    async function* stalls() {
      yield { resourceId: resource, documents: [doc(`stall-${protocol}/0.md`, "the only message before the stall")] };
      await released;
    }
    const err = await failure(t.client(IndexService, "writer", undefined, protocol).upsertDocuments(stalls()));
    release();
    assertCode(err, Code.DeadlineExceeded);
    expect(err.rawMessage).toMatch(/sent nothing for its time budget/);
  });
});

describe("a 100,000-vector upload in one stream", () => {
  const BULK_BUDGET_MS = 3000;
  let bulk: TestServer;
  let target: string;

  beforeAll(async () => {
    bulk = await startTestServer({ env: { ...CONTRACT_ENV, ACMS_QUOTA_CALL_MS: String(BULK_BUDGET_MS) } });
    target = await makeResource(bulk, "writer", "local/bulk", "bulk");
  });

  afterAll(async () => {
    await bulk?.close(true);
  });

  it("succeeds past the per-call budget, every vector indexed (1,000 messages of 100 documents, 4 dimensions)", async () => {
    const perMessage = 100;
    const messages = 1000;
    const started = performance.now();
    async function* upload() {
      for (let m = 0; m < messages; m++) {
        const documents = Array.from({ length: perMessage }, (_, i) => {
          const n = m * perMessage + i;
          return doc(`bulk/${n}.md`, `bulk ${n}`, {
            chunks: [{ text: `bulk ${n}`, embedding: [1 + Math.sin(n), 1 + Math.cos(n), 1 + Math.sin(n * 0.7), 1] }],
          });
        });
        yield { resourceId: target, documents };
      }
    }
    const res = await bulk.client(IndexService, "writer", undefined, "grpc").upsertDocuments(upload());
    // The premise: the upload outlasted the budget a wall clock would have held it to.
    expect(performance.now() - started).toBeGreaterThan(BULK_BUDGET_MS);
    expect({ messages: res.messagesReceived, documents: res.documentsUpserted, vectors: res.vectorsIndexed }).toEqual({
      messages,
      documents: messages * perMessage,
      vectors: messages * perMessage,
    });
  }, 900_000);
});
