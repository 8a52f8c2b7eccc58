/**
 * Ingest benchmark: `acms ingest` throughput through the real server against a baseline measured in the
 * same run, the local walk-read-hash of the same folder (what no ingest can avoid), plus the effect of
 * batching (one document per stream message) and the cost of a re-run where every file is unchanged.
 * BENCH_SCALE grows the folder (default 3,000 markdown files of about 2 KB; `small` is 300).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAcmsClient } from "../src/client/create-acms-client.js";
import { ingestDirectory, type IngestOptions } from "../src/cli/ingest-directory.js";
import type { IngestProgress } from "../src/cli/ingest-progress.js";
import { contentHash } from "../src/cli/ingest-state.js";
import { decodeText, walkFiles } from "../src/cli/walk-files.js";
import { loadConfig } from "../src/server/composition/config.js";
import { createBackends } from "../src/server/composition/composition-root.js";
import { generateKey, hashKey, KeyRing } from "../src/application/access/key-ring.js";
import { startServer } from "../src/server/composition/server.js";

const silent: IngestProgress = { start: () => undefined, update: () => undefined, note: () => undefined, stop: () => undefined };
const WORDS = "alpha beta gamma delta scope tier chunk token index search vector graph river cloud stone forest".split(" ");

function makeFolder(dir: string, n: number): void {
  for (let i = 0; i < n; i++) {
    const sub = join(dir, `d${i % 40}`);
    mkdirSync(sub, { recursive: true });
    let text = `# File ${i}\n\n`;
    for (let p = 0; p < 6; p++) {
      const words: string[] = [];
      for (let w = 0; w < 50; w++) words.push(WORDS[(i * 7 + p * 13 + w * w) % WORDS.length]);
      text += `${words.join(" ")}.\n\n`;
    }
    writeFileSync(join(sub, `f${i}.md`), text);
  }
}

/** Runs the ingest benchmark and prints its figures. */
export async function run(): Promise<void> {
  const raw = process.env.BENCH_SCALE ?? "1";
  const scale = raw === "small" ? 0.1 : Number(raw) || 1;
  const n = Math.max(200, Math.round(3000 * scale));
  const work = mkdtempSync(join(tmpdir(), "acms-ingest-bench-"));
  const folder = join(work, "docs");
  makeFolder(folder, n);

  const key = generateKey();
  const config = loadConfig({ ACMS_HOST: "127.0.0.1", ACMS_PORT: "0", ACMS_DATA_DIR: join(work, "data") });
  const server = await startServer({
    config,
    keys: new KeyRing([{ name: "bench", key_sha256: hashKey(key), projects: ["bench/*"], write: true }]),
    backends: await createBackends(config),
  });
  const client = createAcmsClient({ baseUrl: server.url, apiKey: key });
  try {
    const baseStart = performance.now();
    const walk = await walkFiles(folder, { include: [], exclude: [], maxFileBytes: 1 << 20 });
    for (const f of walk.files) {
      const bytes = readFileSync(f.absolutePath);
      contentHash(bytes);
      decodeText(bytes);
    }
    const baseline = (performance.now() - baseStart) / 1000;

    const opts = (alias: string, extra: Partial<IngestOptions> = {}): IngestOptions => ({
      dir: folder,
      project: "bench/ingest",
      alias,
      kind: "docs",
      include: [],
      exclude: [],
      maxFileBytes: 1 << 20,
      prune: false,
      force: false,
      url: server.url,
      statePath: (id) => join(work, `state-${id}.json`),
      ...extra,
    });
    const fresh = await ingestDirectory(client, opts("batched"), silent);
    const again = await ingestDirectory(client, opts("batched"), silent);
    const single = await ingestDirectory(client, opts("single", { batchDocs: 1, batchesPerStream: 128 }), silent);

    const rate = (files: number, secs: number) => `${(files / secs).toFixed(0)} files/s`;
    process.stdout.write(
      `local walk + read + hash of ${n} files (baseline): ${baseline.toFixed(2)} s, ${rate(n, baseline)}\n` +
        `ingest, default batches (32 docs/message, 4 messages/stream): ${fresh.seconds.toFixed(2)} s, ${rate(fresh.filesSent, fresh.seconds)}, ` +
        `${fresh.chunksIndexed} chunks; ${(fresh.seconds / baseline).toFixed(1)}x the baseline\n` +
        `ingest, one document per message: ${single.seconds.toFixed(2)} s, ${rate(single.filesSent, single.seconds)}; ` +
        `${(single.seconds / fresh.seconds).toFixed(2)}x the batched run\n` +
        `re-run with every file unchanged: ${again.seconds.toFixed(2)} s (${again.filesUnchanged} skipped); ` +
        `${(again.seconds / baseline).toFixed(2)}x the baseline, ${(again.seconds / fresh.seconds).toFixed(3)}x the first run\n`,
    );
  } finally {
    client.close();
    await server.close(2000);
    rmSync(work, { recursive: true, force: true });
  }
}
