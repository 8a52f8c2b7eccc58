import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import type { CliIo } from "../../src/cli/cli-io.js";
import { runServe, type RunningServe } from "../../src/cli/serve.js";
import { generateKey, hashKey } from "../../src/application/access/key-ring.js";
import { GrpcJsGenericClient as Client, grpcFailure } from "./grpc-js-generic-client.js";

/** A CliIo that captures output, with `env` as the whole environment. */
function captureIo(env: Record<string, string>): CliIo & { out: string; err: string; exitCode?: number } {
  const io = {
    out: "",
    err: "",
    exitCode: undefined as number | undefined,
    env,
    stdout: { write: (s: string) => (io.out += s) },
    stderr: { write: (s: string) => (io.err += s) },
    setExitCode: (c: number) => (io.exitCode = c),
  };
  return io;
}

describe("runServe", () => {
  let dataDir: string;
  let running: RunningServe | undefined;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "acms-run-"));
  });
  afterEach(async () => {
    await running?.stop();
    running = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("serves a newcomer on loopback with a generated admin key printed once", async () => {
    const io = captureIo({ ACMS_DATA_DIR: dataDir });
    running = await runServe({ io, port: "0", handleSignals: false });
    const key = running.generatedKey!;
    expect(key).toMatch(/^acms_[A-Za-z0-9_-]{43}$/);
    expect(running.config.host).toBe("127.0.0.1");
    expect(io.out.split(key).length - 1).toBeGreaterThanOrEqual(1);
    expect(io.out).toContain(`authorization: Bearer ${key}`);
    expect(io.out).toContain(`listening on ${running.server.url}`);

    const c = new Client(`127.0.0.1:${running.server.port}`);
    try {
      // The generated key is an admin: every project, write.
      await c.unary(RegistryService.method.createProject, { name: "anything/at-all" }, Client.metadata(key));
      expect((await c.unary(RegistryService.method.listProjects, {}, Client.metadata(key))).projects.map((p) => p.name)).toEqual([
        "anything/at-all",
      ]);
      expect((await grpcFailure(c.unary(RegistryService.method.listProjects, {}))).code).toBe(grpc.status.UNAUTHENTICATED);
    } finally {
      c.close();
    }
  });

  it("generates a different key on every start (none is stored)", async () => {
    const first = await runServe({ io: captureIo({ ACMS_DATA_DIR: dataDir }), port: "0", handleSignals: false });
    await first.stop();
    running = await runServe({ io: captureIo({ ACMS_DATA_DIR: dataDir }), port: "0", handleSignals: false });
    expect(running.generatedKey).not.toBe(first.generatedKey);
  });

  it("refuses to listen beyond loopback without keys", async () => {
    for (const host of ["0.0.0.0", "::", "192.0.2.1"]) {
      await expect(runServe({ io: captureIo({ ACMS_DATA_DIR: dataDir }), host, port: "0", handleSignals: false })).rejects.toThrow(
        `refusing to listen on ${host} without API keys`,
      );
    }
    // An empty keys list is no keys.
    await expect(
      runServe({ io: captureIo({ ACMS_DATA_DIR: dataDir, ACMS_HOST: "0.0.0.0", ACMS_KEYS: "[]" }), port: "0", handleSignals: false }),
    ).rejects.toThrow(/refusing to listen on 0\.0\.0\.0/);
  });

  it("listens beyond loopback once keys are configured, and only those keys work", async () => {
    const key = generateKey();
    const keysFile = join(dataDir, "keys.json");
    writeFileSync(keysFile, JSON.stringify([{ name: "ci", key_sha256: hashKey(key), projects: ["ci/*"], write: true }]));
    const io = captureIo({ ACMS_DATA_DIR: dataDir });
    running = await runServe({ io, host: "0.0.0.0", port: "0", keysFile, handleSignals: false });
    expect(running.generatedKey).toBeUndefined();
    expect(io.out).not.toContain("one-time admin key");
    const c = new Client(`127.0.0.1:${running.server.port}`);
    try {
      await c.unary(RegistryService.method.createProject, { name: "ci/run" }, Client.metadata(key));
      expect((await grpcFailure(c.unary(RegistryService.method.createProject, { name: "local/x" }, Client.metadata(key)))).code).toBe(
        grpc.status.PERMISSION_DENIED,
      );
      expect((await grpcFailure(c.unary(RegistryService.method.listProjects, {}, Client.metadata(generateKey())))).code).toBe(
        grpc.status.UNAUTHENTICATED,
      );
    } finally {
      c.close();
    }
  });

  it("reads inline keys from ACMS_KEYS", async () => {
    const key = generateKey();
    const env = {
      ACMS_DATA_DIR: dataDir,
      ACMS_KEYS: JSON.stringify([{ name: "ro", key_sha256: hashKey(key), projects: ["local/*"], write: false }]),
    };
    running = await runServe({ io: captureIo(env), port: "0", handleSignals: false });
    const c = new Client(`127.0.0.1:${running.server.port}`);
    try {
      expect((await c.unary(RegistryService.method.listProjects, {}, Client.metadata(key))).projects).toEqual([]);
      expect((await grpcFailure(c.unary(RegistryService.method.createProject, { name: "local/x" }, Client.metadata(key)))).code).toBe(
        grpc.status.PERMISSION_DENIED,
      );
    } finally {
      c.close();
    }
  });

  it("maps flags onto the environment's names and validates both alike", async () => {
    const io = captureIo({ ACMS_DATA_DIR: dataDir, ACMS_PORT: "not-a-port" });
    await expect(runServe({ io, handleSignals: false })).rejects.toThrow(/ACMS_PORT must be an integer/);
    await expect(runServe({ io, port: "70000", handleSignals: false })).rejects.toThrow(/--port \(ACMS_PORT\) must be between/);
    await expect(runServe({ io, port: "0", embeddingDim: "0", handleSignals: false })).rejects.toThrow(/ACMS_EMBEDDING_DIM/);
    running = await runServe({ io, port: "0", embeddingDim: "64", dataDir: join(dataDir, "flag"), handleSignals: false });
    expect(running.config).toMatchObject({ embeddingDim: 64, dataDir: join(dataDir, "flag") });
  });

  it("refuses ambiguous or broken key settings with one line", async () => {
    const keysFile = join(dataDir, "keys.json");
    writeFileSync(keysFile, "[");
    const both = captureIo({ ACMS_DATA_DIR: dataDir, ACMS_KEYS: "[]", ACMS_KEYS_FILE: keysFile });
    await expect(runServe({ io: both, port: "0", handleSignals: false })).rejects.toThrow(/ACMS_KEYS_FILE .* or ACMS_KEYS, not both/);
    await expect(runServe({ io: captureIo({ ACMS_DATA_DIR: dataDir }), keysFile, port: "0", handleSignals: false })).rejects.toThrow(
      /not valid JSON/,
    );
    await expect(runServe({ io: captureIo({ ACMS_DATA_DIR: dataDir, ACMS_KEYS: "{" }), port: "0", handleSignals: false })).rejects.toThrow(
      /ACMS_KEYS is not valid JSON/,
    );
    const badEntry = JSON.stringify([{ name: "x", key_sha256: "plain-text-key", projects: ["*/*"] }]);
    await expect(
      runServe({ io: captureIo({ ACMS_DATA_DIR: dataDir, ACMS_KEYS: badEntry }), port: "0", handleSignals: false }),
    ).rejects.toThrow(/key_sha256/);
  });

  it("names a busy port in one line", async () => {
    running = await runServe({ io: captureIo({ ACMS_DATA_DIR: dataDir }), port: "0", handleSignals: false });
    const port = String(running.server.port);
    await expect(runServe({ io: captureIo({ ACMS_DATA_DIR: join(dataDir, "second") }), port, handleSignals: false })).rejects.toThrow(
      `cannot listen on 127.0.0.1:${port}: the port is already in use`,
    );
  });
});
