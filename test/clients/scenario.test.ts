import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { createAcmsClient } from "../../src/index.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { expectedLines, matches, runSdkScenario, SDKS, type Sdk } from "./scenario/run-sdk-scenarios.js";

// clients/scenario/scenario.json, written once, run by the Go, Python and TypeScript SDKs against one live
// server: the same steps, the same expectations, three languages.

let t: TestServer;
let erasureImplemented: boolean;

beforeAll(async () => {
  t = await startTestServer({ env: { ACMS_EMBEDDING_DIM: "4" } });
  // Issue 28's DeleteFragment: until it lands, the erasure steps (the scenario's last) answer UNIMPLEMENTED.
  const acms = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer });
  try {
    await acms.registry.createProject({ name: "local/scenario-probe" });
    const { scope } = await acms.scope.resolveScope({ projects: ["local/scenario-probe"] });
    await acms.withScope(scope!.scopeId).tiers.deleteFragment({ fragmentId: "01ARZ3NDEKTSV4RRFFQ69G5FAV" });
    erasureImplemented = true;
  } catch (err) {
    erasureImplemented = !(err instanceof ConnectError && err.code === Code.Unimplemented);
  } finally {
    acms.close();
  }
}, 600_000);
afterAll(async () => {
  await t?.close(true);
});

test.each<Sdk>(SDKS)(
  "the %s SDK runs the shared scenario: resolve, search each way, stream, fetch in order, be refused, store and recall, delete",
  async (sdk) => {
    const project = `local/scenario-${sdk}-${randomBytes(4).toString("hex")}`;
    const lines = await runSdkScenario(sdk, { url: t.server.url, apiKey: t.keys.writer, project });
    const expected = expectedLines(erasureImplemented);
    expect({ sdk, lines, ok: matches(lines, expected) }).toEqual({ sdk, lines, ok: true });
  },
  600_000,
);
