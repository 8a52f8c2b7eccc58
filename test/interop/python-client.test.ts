import { execFile, spawnSync } from "node:child_process";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** Debian's interpreter: the one python3-grpcio and python3-protobuf install into. */
const PYTHON = "/usr/bin/python3";
const SCRIPT = join(__dirname, "python", "interop_client.py");

function pythonHasGrpc(): boolean {
  const r = spawnSync(PYTHON, ["-c", "import grpc, google.protobuf"], { stdio: "ignore" });
  return r.status === 0;
}

const available = pythonHasGrpc();
// In CI (.ci/run installs the packages) a missing grpcio is a failure, never a skip.
const runOrSkip = available || process.env.CI ? it : it.skip;
const title =
  available || process.env.CI
    ? "a Python grpcio client registers, scopes, indexes, searches, is refused with decodable details and gets the right codes"
    : `python grpcio interop SKIPPED: ${PYTHON} cannot import grpc (apt-get install python3-grpcio python3-protobuf)`;

describe("Python grpcio client", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ env: { ACMS_EMBEDDING_DIM: "4" } });
  });
  afterAll(async () => {
    await t.close(true);
  });

  runOrSkip(title, async () => {
    const env = {
      ...process.env,
      ACMS_KEY_ADMIN: t.keys.admin,
      ACMS_KEY_WRITER: t.keys.writer,
      ACMS_KEY_READER: t.keys.reader,
      ACMS_KEY_OTHER: t.keys.other,
      PYTHONDONTWRITEBYTECODE: "1",
    };
    // Asynchronous on purpose: the server answering the script runs in this process.
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(PYTHON, [SCRIPT, `127.0.0.1:${t.server.port}`], { env, timeout: 60_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
    if (result.code !== 0) throw new Error(`python client failed (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
    const summary = /ok (\d+) checks/.exec(result.stdout);
    expect(summary).not.toBeNull();
    expect(Number(summary![1])).toBeGreaterThanOrEqual(55);
    expect(result.stdout).not.toMatch(/^FAIL:/m);
  });
});
