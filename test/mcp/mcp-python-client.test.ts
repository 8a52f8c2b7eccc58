/**
 * The Python `mcp` SDK's client (pinned in test/mcp/python/requirements.txt, in the cached venv that
 * mcp-venv.sh makes and .ci/run warms) runs test_mcp_client.py against POST /mcp of a live server: the ten
 * tools, search, fetch in order, a UKO resource, remember and recall, and a typed refusal.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { seedMcpFixture, type McpFixture } from "./mcp-fixture.js";

const exec = promisify(execFile);
const HERE = join(__dirname, "python");

let t: TestServer;
let f: McpFixture;
let python: string;

beforeAll(async () => {
  const venv = (await exec("bash", [join(HERE, "mcp-venv.sh")], { maxBuffer: 16 * 1024 * 1024 })).stdout.trim();
  python = join(venv, "bin", "python");
  t = await startTestServer();
  f = await seedMcpFixture(t);
}, 600_000);

afterAll(async () => t?.close(true));

test("the pytest suite of the Python MCP client passes against the live server, nothing skipped", async () => {
  const run = await new Promise<{ code: number; out: string }>((resolve) => {
    execFile(
      python,
      ["-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", join(HERE, "test_mcp_client.py")],
      {
        cwd: HERE,
        env: {
          ...process.env,
          PYTHONDONTWRITEBYTECODE: "1",
          ACMS_MCP_URL: `${t.server.url}/mcp`,
          ACMS_API_KEY: t.keys.writer,
          ACMS_SCOPE: f.scope,
          ACMS_DOCS: f.docs,
          ACMS_CODE: f.code,
          ACMS_SECRET: f.secret,
          ACMS_OTHER_SCOPE: f.otherScope,
        },
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: `${stdout}\n${stderr}` }),
    );
  });
  expect({ code: run.code, out: run.out }).toEqual({ code: 0, out: expect.stringMatching(/\b5 passed\b/) });
  expect(run.out).not.toMatch(/skipped|xfail/);
}, 300_000);
