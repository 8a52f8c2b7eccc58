import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { isCi, type EngineUnavailable } from "../conformance-suite.js";

/**
 * The real model of the embedding tests and benches: all-MiniLM-L6-v2 as ONNX, prepared (fetched once, then
 * cached) by scripts/embedding-model.sh, and an OpenAI-compatible server of the same model
 * (serve_embeddings.py in a venv of requirements.txt, made by venv.sh). Nothing here is a stand-in: when the
 * model cannot be prepared, the suites that need it say so as an unavailable engine (a failure under CI).
 */

/** The checkout: the nearest directory up from the working directory that holds scripts/embedding-model.sh (jest and tsx alike). */
const ROOT = (() => {
  for (let dir = resolve(process.cwd()); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "scripts", "embedding-model.sh"))) return dir;
    if (dirname(dir) === dir) throw new Error("cannot find scripts/embedding-model.sh above the working directory");
  }
})();
const HERE = join(ROOT, "test", "support", "embeddings");

let prepared: { modelDir: string } | { unavailable: EngineUnavailable } | undefined;

/** The model directory (prepared on first use), or why it cannot be had here. */
export function embeddingModel(): { modelDir: string } | { unavailable: EngineUnavailable } {
  prepared ??= (() => {
    try {
      const modelDir = execFileSync("bash", [join(ROOT, "scripts", "embedding-model.sh")], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 600_000,
      }).trim();
      return { modelDir };
    } catch (err) {
      const e = err as { stderr?: string; message?: string };
      return {
        unavailable: {
          engine: "all-MiniLM-L6-v2 (ONNX)",
          reason: `scripts/embedding-model.sh failed: ${(e.stderr || e.message || "").slice(0, 400)}`,
        },
      };
    }
  })();
  return prepared;
}

/** The model directory; throws when it cannot be prepared (for tests outside a conformance suite). */
export function requireEmbeddingModelDir(): string {
  const m = embeddingModel();
  if ("unavailable" in m) throw new Error(`the embedding model is unavailable: ${m.unavailable.reason}`);
  return m.modelDir;
}

let venv: { python: string } | { unavailable: EngineUnavailable } | undefined;

/** The Python of the embeddings server's venv (made on first use), or why it cannot be had here. */
export function embeddingsServerPython(): { python: string } | { unavailable: EngineUnavailable } {
  venv ??= (() => {
    try {
      return { python: embeddingsPython() };
    } catch (err) {
      const e = err as { stderr?: string; message?: string };
      return {
        unavailable: { engine: "the embeddings server's venv", reason: `venv.sh failed: ${(e.stderr || e.message || "").slice(0, 400)}` },
      };
    }
  })();
  return venv;
}

/**
 * Declares a test file's tests that need the model (and, with `http`, its HTTP server's venv): `body` gets the
 * model directory. When they cannot be had, that is loud, never a quiet pass: under CI one failing test names
 * what is missing; elsewhere (a newcomer's `npm test` without Maven or Python) a warning and one skipped test
 * with the reason, as an unavailable engine is in the conformance suites.
 */
export function withEmbeddingModel(opts: { http?: boolean }, body: (modelDir: string) => void): void {
  const m = embeddingModel();
  const missing = "unavailable" in m ? m.unavailable : undefined;
  const py = !missing && opts.http ? embeddingsServerPython() : undefined;
  const why = missing ?? (py && "unavailable" in py ? py.unavailable : undefined);
  if (!why) {
    body((m as { modelDir: string }).modelDir);
    return;
  }
  if (isCi()) {
    it(`has ${why.engine}`, () => {
      throw new Error(`${why.engine} is unavailable: ${why.reason}`);
    });
    return;
  }
  process.stderr.write(`warning: ${why.engine} is unavailable, so these tests are skipped: ${why.reason}\n`);
  it.skip(`[skipped: ${why.engine} unavailable: ${why.reason.slice(0, 120)}]`, () => undefined);
}

/** A running OpenAI-compatible embeddings server. */
export interface EmbeddingsServer {
  /** The API base to give ACMS_EMBEDDINGS_URL (requests go to `{url}/embeddings`). */
  url: string;
  port: number;
  child: ChildProcess;
  close(): Promise<void>;
}

/** The Python of the server's venv (made on first use by venv.sh). */
export function embeddingsPython(): string {
  const venv = execFileSync("bash", [join(HERE, "venv.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 600_000,
  }).trim();
  return join(venv, "bin", "python");
}

/** Starts serve_embeddings.py over `modelDir` on a free loopback port (or `port`); `apiKey` makes it demand that key. */
export async function startEmbeddingsServer(modelDir: string, opts: { apiKey?: string; port?: number } = {}): Promise<EmbeddingsServer> {
  const args = [join(HERE, "serve_embeddings.py"), modelDir, "--port", String(opts.port ?? 0)];
  if (opts.apiKey) args.push("--api-key", opts.apiKey);
  const child = spawn(embeddingsPython(), args, { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`serve_embeddings.py exited (${code}): ${err.slice(-800)}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    child,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
