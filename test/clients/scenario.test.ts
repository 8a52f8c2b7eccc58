import { randomBytes } from "node:crypto";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { erasureImplemented, expectedLines, matches, runSdkScenario, SDKS, type Sdk } from "./scenario/run-sdk-scenarios.js";

// clients/scenario/scenario.json, written once, run by the Go, Python and TypeScript SDKs against one live
// server: the same steps, the same expectations, three languages.

let t: TestServer;
let erasure: boolean;

beforeAll(async () => {
  t = await startTestServer({ env: { ACMS_EMBEDDING_DIM: "4" } });
  erasure = await erasureImplemented(t.server.url, t.keys.writer);
}, 600_000);
afterAll(async () => {
  await t?.close(true);
});

test.each<Sdk>(SDKS)(
  "the %s SDK runs the shared scenario: resolve, search each way, stream, fetch in order, be refused, store and recall, delete",
  async (sdk) => {
    const project = `local/scenario-${sdk}-${randomBytes(4).toString("hex")}`;
    const lines = await runSdkScenario(sdk, { url: t.server.url, apiKey: t.keys.writer, project });
    const expected = expectedLines(erasure);
    expect({ sdk, lines, ok: matches(lines, expected) }).toEqual({ sdk, lines, ok: true });
  },
  600_000,
);
