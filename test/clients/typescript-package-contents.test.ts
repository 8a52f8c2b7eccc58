import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { CLIENT_DIR, installClientPackage, ROOT, type InstalledClient } from "./typescript-package/install-client-package.js";

// The TypeScript client package itself, with no server: the tarball's contents, its two builds, its declarations
// under each module resolution, and the README's snippets. Its calls to a server, from Node and from Chromium,
// are typescript-package.test.ts (run in the embedded and duckdb projects); these depend on no engine, so they run once.

const exec = promisify(execFile);
/** Files of a user's project that depends on @acms/client (outside the repository's typecheck: they import the installed package). */
const FIXTURES = join(__dirname, "typescript-package/user-project");
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
const ENTRY = "clients/typescript/src/index";

let pkg: InstalledClient;

beforeAll(async () => {
  pkg = await installClientPackage();
}, 180_000);
afterAll(() => {
  if (pkg) rmSync(pkg.workDir, { recursive: true, force: true });
});

/** Runs tsc in the user's project; resolves with its output and exit status (tsc exits non-zero on type errors). */
async function tsc(args: string[]): Promise<{ code: number; stdout: string }> {
  return exec(process.execPath, [TSC, ...args], { cwd: pkg.appDir, maxBuffer: 16 << 20 }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
  );
}

test("the tarball holds both builds with their declarations and the licence, and installs nothing of the server", () => {
  for (const build of ["esm", "cjs"]) {
    expect(pkg.packedFiles).toContain(`dist/${build}/${ENTRY}.js`);
    expect(pkg.packedFiles).toContain(`dist/${build}/${ENTRY}.d.ts`);
    expect(pkg.packedFiles).toContain(`dist/${build}/clients/typescript/src/web.d.ts`);
    expect(pkg.packedFiles).toContain(`dist/${build}/gen/acms/v1/scope_pb.js`);
    expect(pkg.packedFiles).toContain(`dist/${build}/gen/acms/v1/scope_pb.d.ts`);
  }
  expect(pkg.packedFiles).toContain("dist/cjs/package.json");
  expect(pkg.packedFiles).toContain("LICENSE");
  expect(pkg.packedFiles.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
  const installedDir = join(pkg.appDir, "node_modules/@acms/client");
  expect(readFileSync(join(installedDir, "LICENSE"), "utf8")).toBe(readFileSync(join(ROOT, "LICENSE"), "utf8"));
  expect(readFileSync(join(CLIENT_DIR, "LICENSE"), "utf8")).toBe(readFileSync(join(ROOT, "LICENSE"), "utf8"));
  const manifest = JSON.parse(readFileSync(join(installedDir, "package.json"), "utf8")) as { license: string };
  expect(manifest.license).toBe("Apache-2.0");
  expect((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { license: string }).license).toBe("Apache-2.0");
  expect(readFileSync(join(installedDir, "dist/esm", `${ENTRY}.js`), "utf8")).toMatch(/^export \{/m);
  expect(readFileSync(join(installedDir, "dist/cjs", `${ENTRY}.js`), "utf8")).toContain("exports.createAcmsClient");
  expect(Object.keys(pkg.dependencies).sort()).toEqual([
    "@bufbuild/protobuf",
    "@connectrpc/connect",
    "@connectrpc/connect-node",
    "@connectrpc/connect-web",
  ]);
  const installed = readdirSync(join(pkg.appDir, "node_modules"), { withFileTypes: true })
    .filter((d) => !d.name.startsWith("."))
    .flatMap((d) =>
      d.name.startsWith("@") ? readdirSync(join(pkg.appDir, "node_modules", d.name)).map((n) => `${d.name}/${n}`) : [d.name],
    )
    .sort();
  expect(installed).toEqual([
    "@acms/client",
    "@bufbuild/protobuf",
    "@connectrpc/connect",
    "@connectrpc/connect-node",
    "@connectrpc/connect-web",
  ]);
});

// "--no-experimental-require-module" is Node before 20.19, which cannot require() an ES module; the other is this Node's default.
test.each([
  ["as Node before 20.19 does", ["--no-experimental-require-module"], "ERR_REQUIRE_ESM"],
  ["with this Node's defaults", [], "required"],
])("require() loads the CommonJS build of every entry point, %s", async (_how, flags, requireEsm) => {
  for (const f of ["load-package.cjs", "esm-probe.js"]) copyFileSync(join(FIXTURES, f), join(pkg.appDir, f));
  const { stdout } = await exec(process.execPath, [...flags, "load-package.cjs"], { cwd: pkg.appDir });
  const out = JSON.parse(stdout);
  expect(out).toEqual({
    requireEsm,
    resolved: [`dist/cjs/${ENTRY}.js`, "dist/cjs/clients/typescript/src/web.js", "dist/cjs/gen/acms/v1/errors_pb.js"].map((f) =>
      join(pkg.appDir, "node_modules/@acms/client", f),
    ),
    createAcmsClient: "function",
    createAcmsWebClient: "function",
    url: "http://127.0.0.1:6000",
    typeName: "acms.v1.ScopeViolation",
    violation: null,
    closed: true,
  });
});

test("import loads the ES build", async () => {
  const script =
    'import { acmsUrlFromEnv } from "@acms/client"; import { createAcmsWebClient } from "@acms/client/web"; console.log(JSON.stringify([import.meta.resolve("@acms/client"), acmsUrlFromEnv({ ACMS_HOST: "::" }), typeof createAcmsWebClient]));';
  const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", script], { cwd: pkg.appDir });
  expect(JSON.parse(stdout)).toEqual([
    `file://${join(pkg.appDir, "node_modules/@acms/client/dist/esm", ENTRY)}.js`,
    "http://[::1]:50051",
    "function",
  ]);
});

/** A tsc error line: `file(line,col): error TSnnnn: message`. */
const ERROR = /^(\S+)\(\d+,\d+\): error (TS\d+: .*)$/;

/**
 * The moduleResolution settings a user's tsconfig may have, with the module kind each goes with, and which of
 * the package's two declaration trees each must pick. A CommonJS file under node16 (consumer.cts) takes the
 * `require` condition and so the CommonJS declarations; node10 ignores the exports map and reads `types` and
 * `typesVersions`, which name the CommonJS declarations (node10 projects emit CommonJS).
 */
const RESOLUTIONS = [
  { moduleResolution: "Node16", module: "Node16", files: ["consumer.ts", "consumer.cts"], builds: ["esm", "cjs"] },
  { moduleResolution: "Bundler", module: "ESNext", files: ["consumer.ts"], builds: ["esm"] },
  { moduleResolution: "Node10", module: "CommonJS", files: ["consumer.ts"], builds: ["cjs"] },
];

// One tsc run per resolution (each over a minute on a loaded 2-core machine): the user's code must check
// cleanly, and the misuse must fail with exactly its two errors, which proves the declarations are consulted.
test.each(RESOLUTIONS)(
  "under moduleResolution $moduleResolution the declarations type-check a user's code and reject a misuse",
  async ({ moduleResolution, module, files, builds }) => {
    for (const f of [...files, "consumer-mistake.ts"]) copyFileSync(join(FIXTURES, f), join(pkg.appDir, f));
    const config = `tsconfig.${moduleResolution}.json`;
    const compilerOptions = { module, moduleResolution, target: "ES2022", strict: true, noEmit: true, types: [] };
    writeFileSync(join(pkg.appDir, config), JSON.stringify({ compilerOptions, files: [...files, "consumer-mistake.ts"] }));
    const { code, stdout } = await tsc(["-p", config, "--listFiles"]);
    const errors = stdout.split("\n").flatMap((line) => {
      const m = ERROR.exec(line);
      return m ? [`${m[1]}: ${m[2]}`] : [];
    });
    expect(code).not.toBe(0);
    expect(errors).toEqual([
      expect.stringMatching(/^consumer-mistake\.ts: TS2551: Property 'resolveScopes' does not exist/),
      expect.stringMatching(/^consumer-mistake\.ts: TS2322: Type 'number' is not assignable to type 'string'/),
    ]);
    const listed = stdout.split("\n").map((l) => l.trim());
    for (const build of ["esm", "cjs"]) {
      const declarations = join(pkg.appDir, "node_modules/@acms/client/dist", build, `${ENTRY}.d.ts`);
      expect({ build, used: listed.includes(declarations) }).toEqual({ build, used: builds.includes(build) });
    }
  },
  300_000,
);

/** The ```ts blocks of the package's README, in order. */
function readmeSnippets(): string[] {
  const readme = readFileSync(join(CLIENT_DIR, "README.md"), "utf8");
  return [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

test("the README's TypeScript snippets and the package's examples compile with tsc --strict against the installed package", async () => {
  const snippets = readmeSnippets();
  expect(snippets.length).toBeGreaterThanOrEqual(4);
  const files = snippets.map((code, i) => {
    writeFileSync(join(pkg.appDir, `readme-${i + 1}.ts`), code);
    return `readme-${i + 1}.ts`;
  });
  mkdirSync(join(pkg.appDir, "examples"));
  for (const f of readdirSync(join(CLIENT_DIR, "examples")).filter((n) => n.endsWith(".ts"))) {
    copyFileSync(join(CLIENT_DIR, "examples", f), join(pkg.appDir, "examples", f));
    files.push(`examples/${f}`);
  }
  // A Node user's project has @types/node (the snippets read process.env); the repository's stands in for it.
  const compilerOptions = {
    module: "NodeNext",
    moduleResolution: "NodeNext",
    target: "ES2022",
    noEmit: true,
    types: ["node"],
    typeRoots: [join(ROOT, "node_modules/@types")],
  };
  writeFileSync(join(pkg.appDir, "tsconfig.readme.json"), JSON.stringify({ compilerOptions, files }));
  const { code, stdout } = await tsc(["-p", "tsconfig.readme.json", "--strict"]);
  expect(stdout).toBe("");
  expect(code).toBe(0);
}, 300_000);
