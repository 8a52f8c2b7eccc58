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
