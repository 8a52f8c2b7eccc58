import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { ContextTierService, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import {
  ServerReflection,
  ServerReflectionRequestSchema,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { generateKey, hashKey } from "../../src/application/access/key-ring.js";
import { startTestServer } from "../support/test-server.js";
import { GrpcJsGenericClient as Client, grpcFailure } from "./grpc-js-generic-client.js";

const ROOT = join(__dirname, "..", "..");

/** A reflection stream held open by the client: the cheapest in-flight call that lasts as long as we like. */
function openReflection(address: string, key: string) {
  const client = new Client(address);
  const stream = client.bidiStream(ServerReflection.method.serverReflectionInfo, Client.metadata(key));
  const answers: ServerReflectionResponse[] = [];
  let waiter: (() => void) | undefined;
  stream.on("data", (r: ServerReflectionResponse) => {
    answers.push(r);
    waiter?.();
  });
  const ended = new Promise<void>((resolve, reject) => {
    stream.on("end", resolve);
    stream.on("error", reject);
  });
  return {
    answers,
    ended,
    /** Sends one request and waits for its answer. */
    async ask(req: ServerReflectionRequest): Promise<ServerReflectionResponse> {
      const n = answers.length;
      const answered = new Promise<void>((resolve) => (waiter = resolve));
      stream.write(req);
      await Promise.race([
        answered,
        ended.then(() => {
          throw new Error("the stream ended before answering");
        }),
      ]);
      return answers[n];
    },
    finish(): Promise<void> {
      stream.end();
      return ended.finally(() => client.close());
    },
  };
}

const listServices = create(ServerReflectionRequestSchema, { messageRequest: { case: "listServices", value: "" } });

describe("graceful shutdown", () => {
  it("lets an in-flight call finish while new calls are refused", async () => {
    const t = await startTestServer();
    const address = `127.0.0.1:${t.server.port}`;
    try {
      const inFlight = openReflection(address, t.keys.admin);
      expect((await inFlight.ask(listServices)).messageResponse.case).toBe("listServicesResponse");

      let closed = false;
      const closing = t.server.close(60_000).then(() => (closed = true));

      // New connections are refused.
      const late = new Client(address);
      const refused = await grpcFailure(late.unary(Health.method.check, {}));
      late.close();
      expect(refused.code).toBe(grpc.status.UNAVAILABLE);

      // The in-flight stream still gets answers, then completes normally.
      const answer = await inFlight.ask(
        create(ServerReflectionRequestSchema, { messageRequest: { case: "fileContainingSymbol", value: "acms.v1.ScopeService" } }),
      );
      expect(answer.messageResponse.case).toBe("fileDescriptorResponse");
      expect(closed).toBe(false);
      await inFlight.finish();
      // Closed because the call finished: the 60 s grace period is far beyond the test's time limit.
      await closing;
    } finally {
      rmSync(t.dataDir, { recursive: true, force: true });
    }
  });

  it("closes with an idle HTTP/1.1 keep-alive connection open, and answers nothing after", async () => {
    const t = await startTestServer();
    try {
      const res = await fetch(`${t.server.url}/grpc.health.v1.Health/Check`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(await res.json()).toEqual({ status: "SERVING" });
      // How soon (against a close with no idle connection) is a figure of bench/robustness-bench.ts.
      await t.server.close(60_000);
      const late = await fetch(`${t.server.url}/grpc.health.v1.Health/Check`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      }).then(
        (r) => `answered ${r.status}`,
        (e: Error) => e.message,
      );
      expect(late).toBe("fetch failed");
    } finally {
      rmSync(t.dataDir, { recursive: true, force: true });
    }
  });
});

/** Runs `acms serve` as a real process through bin/acms.js. */
function spawnServe(
  env: Record<string, string>,
  args: string[] = [],
): { child: ChildProcess; stdout: () => string; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [join(ROOT, "bin", "acms.js"), "serve", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

async function waitFor(what: string, read: () => string, pattern: RegExp, exit: Promise<unknown>, ms = 30_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms;
  let exited = false;
  void exit.then(() => (exited = true));
  for (;;) {
    const m = pattern.exec(read());
    if (m) return m;
    if (exited || Date.now() > deadline) throw new Error(`${what}: no ${pattern} in output:\n${read()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("acms serve as a process", () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "acms-serve-"));
  });
  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("on SIGTERM: refuses new calls, finishes the in-flight one and exits 0", async () => {
    const key = generateKey();
    const keys = JSON.stringify([{ name: "ops", key_sha256: hashKey(key), projects: ["*/*"], write: true }]);
    const p = spawnServe({ ACMS_KEYS: keys, ACMS_DATA_DIR: dataDir }, ["--port", "0"]);
    try {
      const [, port] = await waitFor("start", p.stdout, /listening on http:\/\/127\.0\.0\.1:(\d+)/, p.exit);
      expect(p.stdout()).not.toContain("one-time admin key");
      const address = `127.0.0.1:${port}`;
      const api = new Client(address);
      await api.unary(RegistryService.method.createProject, { name: "local/proc" }, Client.metadata(key));
      api.close();

      const inFlight = openReflection(address, key);
      await inFlight.ask(listServices);
      p.child.kill("SIGTERM");
      await waitFor("drain", p.stdout, /SIGTERM received/, p.exit);

      const late = new Client(address);
      expect((await grpcFailure(late.unary(Health.method.check, {}))).code).toBe(grpc.status.UNAVAILABLE);
      late.close();

      expect((await inFlight.ask(listServices)).messageResponse.case).toBe("listServicesResponse");
      await inFlight.finish();
      expect(await p.exit).toBe(0);
      expect(p.stdout()).toContain("acms: stopped");
      expect(p.stderr()).toBe("");
    } finally {
      p.child.kill("SIGKILL");
    }
  });

  it("kill -9 while tenants store fragments: every acknowledged fragment is there after a restart", async () => {
    const key = generateKey();
    const keys = JSON.stringify([{ name: "ops", key_sha256: hashKey(key), projects: ["*/*"], write: true }]);
    // A small warm budget, so stores also demote into cold (a file, then its row; the old copy unlinked after the sync).
    const env = {
      ACMS_KEYS: keys,
      ACMS_DATA_DIR: dataDir,
      ACMS_CONTEXT_MAX_DECISIONS_WARM: "10",
      ACMS_CONTEXT_MAX_DECISIONS_COLD: "100000",
    };
    const first = spawnServe(env, ["--port", "0"]);
    const acknowledged = new Map<string, string>();
    let scopeId = "";
    try {
      const [, port] = await waitFor("start", first.stdout, /listening on http:\/\/127\.0\.0\.1:(\d+)/, first.exit);
      const api = new Client(`127.0.0.1:${port}`);
      await api.unary(RegistryService.method.createProject, { name: "local/crash" }, Client.metadata(key));
      scopeId = (await api.unary(ScopeService.method.resolveScope, { projects: ["local/crash"] }, Client.metadata(key))).scope!.scopeId;
      const md = Client.metadata(key, scopeId);
      const tiers = [Tier.HOT, Tier.WARM, Tier.COLD];
      let killed = false;
      const writer = async (w: number) => {
        for (let n = 0; !killed; n++) {
          const id = `w${w}-${n}`;
          const content = `note ${n} of writer ${w}`;
          try {
            await api.unary(
              ContextTierService.method.storeFragment,
              { fragment: { fragmentId: id, content, projectName: "local/crash", tier: tiers[n % 3] } },
              md,
            );
            acknowledged.set(id, content);
          } catch {
            return;
          }
        }
      };
      const writers = Array.from({ length: 8 }, (_, w) => writer(w));
      while (acknowledged.size < 200) await new Promise((r) => setTimeout(r, 10));
      first.child.kill("SIGKILL");
      killed = true;
      await first.exit;
      await Promise.all(writers);
      api.close();
    } finally {
      first.child.kill("SIGKILL");
    }
    const second = spawnServe(env, ["--port", "0"]);
    try {
      const [, port] = await waitFor("restart", second.stdout, /listening on http:\/\/127\.0\.0\.1:(\d+)/, second.exit);
      const api = new Client(`127.0.0.1:${port}`);
      const lost: string[] = [];
      for (const [id, content] of acknowledged) {
        const got = await api
          .unary(ContextTierService.method.getFragment, { fragmentId: id }, Client.metadata(key, scopeId))
          .catch(() => undefined);
        if (got?.fragment?.content !== content) lost.push(id);
      }
      api.close();
      expect(acknowledged.size).toBeGreaterThanOrEqual(200);
      expect(lost).toEqual([]);
    } finally {
      second.child.kill("SIGKILL");
    }
  });

  it("on SIGINT (Ctrl-C) a newcomer's server stops the same way, exit 0", async () => {
    const p = spawnServe({ ACMS_DATA_DIR: dataDir }, ["--port", "0"]);
    try {
      await waitFor("start", p.stdout, /listening on http:\/\/127\.0\.0\.1:\d+/, p.exit);
      expect(p.stdout()).toMatch(/one-time admin key/);
      p.child.kill("SIGINT");
      expect(await p.exit).toBe(0);
      expect(p.stdout()).toMatch(/SIGINT received[\s\S]*acms: stopped/);
    } finally {
      p.child.kill("SIGKILL");
    }
  });

  it("with no keys and a non-loopback host: one clear line and exit 1", async () => {
    const p = spawnServe({ ACMS_DATA_DIR: dataDir }, ["--host", "0.0.0.0", "--port", "0"]);
    expect(await p.exit).toBe(1);
    expect(p.stderr().trim().split("\n")).toEqual([expect.stringMatching(/^acms: .*refusing to listen on 0\.0\.0\.0 without API keys/)]);
    expect(p.stdout()).toBe("");
  });

  it("reports a bad setting in one line, never a stack trace", async () => {
    const p = spawnServe({ ACMS_DATA_DIR: dataDir, ACMS_KEYS_FILE: join(dataDir, "missing.json") }, ["--port", "0"]);
    expect(await p.exit).toBe(1);
    const lines = p.stderr().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^acms: .*cannot read keys file/);
    expect(p.stderr()).not.toMatch(/\n\s+at /);
  });
});
