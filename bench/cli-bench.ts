/**
 * CLI and start-up benchmark: the wall time of the compiled `acms` (bin/acms.js) for `--help` and for a text
 * search against a running server, against a baseline measured in the same run (`node -e 0`, the start-up
 * no Node CLI can avoid), and the time from spawning `acms serve` to health SERVING on an empty data
 * directory, compiled (dist/) against the TypeScript sources through tsx. Every command runs as a child
 * process, as a user runs it; figures are medians of BENCH_CLI_ROUNDS runs (default 7, or 3 when
 * BENCH_SCALE < 1; start-up at most 3).
 */
import { spawn, execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { createAcmsClient } from "../src/client/create-acms-client.js";
import { generateKey, hashKey } from "../src/application/access/key-ring.js";
import { median } from "./bench-timing.js";

const exec = promisify(execFile);
const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");
const BIN = join(ROOT, "bin", "acms.js");
/** The goal for `--help` and a text search (issue 13): under 0.3 s of CLI time on a quiet machine. */
const GOAL_MS = 300;

async function wallMs(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = performance.now();
  await exec(process.execPath, args, { env, cwd: ROOT });
  return performance.now() - t0;
}

async function medianWall(rounds: number, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) times.push(await wallMs(args, env));
  return median(times);
}

async function healthStatus(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(`${url}/grpc.health.v1.Health/Check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    return ((await res.json()) as { status?: string }).status;
  } catch {
    return undefined;
  }
}

/** A server started as a child process, and how long it took from spawn to health SERVING. */
interface Served {
  url: string;
  startupMs: number;
  stop(): Promise<void>;
}

async function serve(args: string[], env: NodeJS.ProcessEnv): Promise<Served> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [...args, "serve", "--port", "0"], { env, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr.on("data", (b: Buffer) => (out += b.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let url: string | undefined;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`acms serve exited: ${out}`);
    url ??= /listening on (http:\/\/\S+)/.exec(out)?.[1];
    if (url && (await healthStatus(url)) === "SERVING") break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const startupMs = performance.now() - t0;
  return {
    url,
    startupMs,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Start-up to SERVING on a fresh empty data directory, median of `rounds`. */
async function startupMs(rounds: number, args: string[], env: NodeJS.ProcessEnv, work: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const dataDir = mkdtempSync(join(work, "startup-"));
    const s = await serve(args, { ...env, ACMS_DATA_DIR: dataDir });
    times.push(s.startupMs);
    await s.stop();
  }
  return median(times);
}

function row(label: string, ms: number, baseline: number, goal?: number): string {
  const verdict = goal === undefined ? "" : ms < goal ? `   goal < ${goal} ms: met` : `   goal < ${goal} ms: NOT met`;
  return `${label.padEnd(44)} ${ms.toFixed(0).padStart(6)} ms  ${(ms / baseline).toFixed(2).padStart(6)}x node -e 0  (+${(ms - baseline).toFixed(0)} ms)${verdict}`;
}

/** Runs the CLI benchmark and prints its figures. */
export async function run(): Promise<void> {
  // A small BENCH_SCALE (CI) takes fewer rounds; the data set here does not scale.
  const small = (Number(process.env.BENCH_SCALE) || 1) < 1;
  const rounds = Number(process.env.BENCH_CLI_ROUNDS) || (small ? 3 : 7);
  const { buildIfStale } = (await import(join(ROOT, "scripts", "build.mjs"))) as { buildIfStale: () => Promise<boolean> };
  await buildIfStale();

  const work = mkdtempSync(join(tmpdir(), "acms-cli-bench-"));
  const key = generateKey();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: work,
    ACMS_KEYS: JSON.stringify([{ name: "bench", key_sha256: hashKey(key), projects: ["bench/*"], write: true }]),
  };
  try {
    const baseline = await medianWall(rounds, ["-e", "0"], env);
    const help = await medianWall(rounds, [BIN, "--help"], env);

    const server = await serve([BIN], { ...env, ACMS_DATA_DIR: join(work, "data") });
    let search: number;
    try {
      const client = createAcmsClient({ baseUrl: server.url, apiKey: key });
      let scopeId: string;
      try {
        await client.registry.createProject({ name: "bench/cli" });
        const { resource } = await client.registry.registerResource({ project: "bench/cli", alias: "docs", kind: "docs" });
        await client.index.upsertDocuments(
          (async function* () {
            const documents = Array.from({ length: 50 }, (_, i) => ({
              path: `d${i}.md`,
              content: `note ${i}: the river stone and the forest cloud, entry ${i}`,
            }));
            yield { resourceId: resource!.id, documents };
          })(),
        );
        scopeId = (await client.scope.resolveScope({ projects: ["bench/cli"] })).scope!.scopeId;
      } finally {
        client.close();
      }
      const searchEnv = { ...env, ACMS_URL: server.url, ACMS_API_KEY: key, ACMS_SCOPE: scopeId };
      search = await medianWall(rounds, [BIN, "search", "text", "river", "stone", "-n", "5"], searchEnv);
    } finally {
      await server.stop();
    }

    const startupRounds = Math.max(1, Math.min(rounds, 3));
    const compiled = await startupMs(startupRounds, [BIN], env, work);
    const tsx = await startupMs(startupRounds, ["--import", "tsx", join(ROOT, "src", "cli", "main.ts")], env, work);

    process.stdout.write(
      `CLI wall time, compiled (bin/acms.js), medians of ${rounds} runs; baseline node -e 0 = ${baseline.toFixed(0)} ms\n`,
    );
    process.stdout.write(`${row("acms --help", help, baseline, GOAL_MS)}\n`);
    process.stdout.write(`${row("acms search text (50 docs, running server)", search, baseline, GOAL_MS)}\n`);
    process.stdout.write(`start-up to SERVING on an empty data dir, medians of ${startupRounds}\n`);
    process.stdout.write(`${row("acms serve, compiled (dist/)", compiled, baseline)}\n`);
    process.stdout.write(`${row("acms serve, tsx (src/)", tsx, baseline)}   compiled/tsx ${(compiled / tsx).toFixed(2)}x\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
