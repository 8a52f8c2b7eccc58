import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { startTestServer, type TestServer } from "../support/test-server.js";

const SCRIPT = join(__dirname, "python", "interop_client.py");
/** The python of clients/python's pinned venv (grpcio, protobuf, googleapis-common-protos from PyPI; dev-venv.sh). */
let PYTHON: string;

describe("Python grpcio client", () => {
  let t: TestServer;
  beforeAll(async () => {
    const { stdout } = await promisify(execFile)("bash", [join(__dirname, "..", "..", "clients/python/dev-venv.sh")]);
    PYTHON = join(stdout.trim(), "bin/python");
    t = await startTestServer({ env: { ACMS_EMBEDDING_DIM: "4" } });
  }, 300_000);
  afterAll(async () => {
    await t.close(true);
  });

  it("a Python grpcio client registers, scopes, indexes, searches, is refused with decodable details and gets the right codes", async () => {
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
