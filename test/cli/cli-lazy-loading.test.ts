import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createAcmsClient } from "../../src/client/create-acms-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const exec = promisify(execFile);
const ROOT = join(__dirname, "..", "..");
const RECORDER = join(ROOT, "test", "fixtures", "record-imports.mjs");

/**
 * What a subcommand other than `serve` must never load: the server (the `serve` chunk of the bundle, see
 * scripts/build.mjs) and the engines it imports from node_modules (SQLite, usearch, Oxigraph). One exception:
 * `acms triples put` loads Oxigraph's package for its RDF parser when it runs (never for --help).
 */
const SERVER_SIDE = [/\/dist\/chunks\/serve-[^/]*\.js$/, /\/node_modules\/(better-sqlite3|usearch|oxigraph)\//];
/** The chunk of a lazily loaded module, e.g. `search-actions` → dist/chunks/search-actions-<hash>.js. */
const chunk = (name: string) => new RegExp(`/dist/chunks/${name}-[A-Z0-9]+\\.js$`);

let t: TestServer;
let work: string;

beforeAll(async () => {
  t = await startTestServer();
  work = mkdtempSync(join(tmpdir(), "acms-cli-lazy-"));
});
afterAll(async () => {
  await t.close(true);
  rmSync(work, { recursive: true, force: true });
});

/** Runs the compiled CLI (`bin/acms.js`) as a child process and answers its output and every module it resolved. */
async function runRecorded(name: string, args: string[], env: Record<string, string> = {}): Promise<{ stdout: string; loaded: string[] }> {
  const file = join(work, `${name}.imports`);
  const { stdout } = await exec(process.execPath, ["--import", RECORDER, join(ROOT, "bin", "acms.js"), ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: work, RECORD_IMPORTS_FILE: file, ...env },
  });
  return { stdout, loaded: readFileSync(file, "utf8").trim().split("\n") };
}

function serverSide(loaded: string[]): string[] {
  return loaded.filter((url) => SERVER_SIDE.some((p) => p.test(url)));
}

describe("the CLI loads only what a subcommand needs", () => {
  test("acms --help loads the command definitions only: no client, no server, no engine", async () => {
    const { stdout, loaded } = await runRecorded("help", ["--help"]);
    expect(stdout).toMatch(/Usage: acms/);
    expect(stdout).toMatch(/serve/);
    expect(loaded.some((url) => url.endsWith("/dist/main.js"))).toBe(true);
    expect(serverSide(loaded)).toEqual([]);
    expect(loaded.filter((url) => /-actions?-|create-acms-client-|cli-error-/.test(url))).toEqual([]);
  });

  test("the operator commands' --help loads their definitions only: no action module, no client, no Oxigraph", async () => {
    for (const args of [
      ["projects", "list"],
      ["resources", "list"],
      ["triples", "put"],
      ["rebuild"],
      ["tiers", "evict"],
      ["scopes", "list"],
      ["unlink"],
      ["tiers", "delete"],
    ]) {
      const { stdout, loaded } = await runRecorded(`help-${args.join("-")}`, [...args, "--help"]);
      expect(stdout).toMatch(new RegExp(`Usage: acms ${args.join(" ")}`));
      expect(serverSide(loaded)).toEqual([]);
      expect(loaded.filter((url) => /-actions?-|create-acms-client-|cli-error-/.test(url))).toEqual([]);
    }
  });

  test("acms --version prints the package version", async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    const { stdout } = await runRecorded("version", ["--version"]);
    expect(stdout.trim()).toBe(pkg.version);
  });

  test("acms search text against a running server loads the lean client and its own module, never the full client, Connect's transports or the server", async () => {
    const admin = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer });
    let scopeId: string;
    try {
      await admin.registry.createProject({ name: "local/lazy" });
      const { resource } = await admin.registry.registerResource({ project: "local/lazy", alias: "docs", kind: "docs" });
      await admin.index.upsertDocuments(
        (async function* () {
          yield { resourceId: resource!.id, documents: [{ path: "a.md", content: "the quokka lives on Rottnest island" }] };
        })(),
      );
      scopeId = (await admin.scope.resolveScope({ projects: ["local/lazy"] })).scope!.scopeId;
    } finally {
      admin.close();
    }
    const { stdout, loaded } = await runRecorded("search", ["search", "text", "quokka"], {
      ACMS_URL: t.server.url,
      ACMS_API_KEY: t.keys.writer,
      ACMS_SCOPE: scopeId,
    });
    expect(stdout).toMatch(/^1\s+\S+\s+uko:\/\/\S+\/a\.md#0/m);
    expect(loaded.some((url) => chunk("search-text-action").test(url))).toBe(true);
    expect(loaded.some((url) => chunk("unary-caller").test(url))).toBe(true);
    expect(loaded.filter((url) => chunk("create-acms-client").test(url))).toEqual([]);
    expect(loaded.filter((url) => /-actions?-/.test(url) && !chunk("search-text-action").test(url))).toEqual([]);
    expect(serverSide(loaded)).toEqual([]);
    expect(loaded.filter((url) => /^node:(http2|zlib)$/.test(url))).toEqual([]);
  }, 60_000);

  test("acms serve is the one subcommand that loads the server (the recorder sees it when it happens)", async () => {
    // A bad setting stops serve right after its modules are loaded, before anything listens.
    const file = join(work, "serve.imports");
    const failed = await exec(process.execPath, ["--import", RECORDER, join(ROOT, "bin", "acms.js"), "serve", "--port", "not-a-port"], {
      env: { PATH: process.env.PATH ?? "", HOME: work, RECORD_IMPORTS_FILE: file, ACMS_DATA_DIR: join(work, "data") },
    }).then(
      () => undefined,
      (err: { code: number }) => err,
    );
    expect(failed?.code).toBe(1);
    const loaded = readFileSync(file, "utf8").trim().split("\n");
    expect(loaded.some((url) => chunk("serve").test(url))).toBe(true);
    expect(loaded.some((url) => /\/node_modules\/better-sqlite3\//.test(url))).toBe(true);
  }, 60_000);
});
