import { execFile } from "node:child_process";
import { copyFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { installClientPackage, ROOT, type InstalledClient } from "./typescript-package/install-client-package.js";

// The TypeScript client package itself, with no server: the tarball's contents and its declarations. Its calls
// to a server, from Node and from Chromium, are typescript-package.test.ts (run in the embedded and duckdb projects); these depend
// on no engine, so they run once.

const exec = promisify(execFile);
/** Files of a user's project that depends on @acms/client (outside the repository's typecheck: they import the installed package). */
const FIXTURES = join(__dirname, "typescript-package/user-project");
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");

let pkg: InstalledClient;

beforeAll(async () => {
  pkg = await installClientPackage();
}, 180_000);
afterAll(() => {
  if (pkg) rmSync(pkg.workDir, { recursive: true, force: true });
});

test("the tarball holds compiled ESM and declarations only, and installs nothing of the server", () => {
  expect(pkg.packedFiles).toContain("package.json");
  expect(pkg.packedFiles).toContain("dist/clients/typescript/src/index.js");
  expect(pkg.packedFiles).toContain("dist/clients/typescript/src/web.d.ts");
  expect(pkg.packedFiles).toContain("dist/gen/acms/v1/scope_pb.js");
  expect(pkg.packedFiles).toContain("dist/gen/acms/v1/scope_pb.d.ts");
  expect(pkg.packedFiles.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
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

// Two tsc runs over the installed declarations: over two minutes on a loaded 2-core machine.
test("the declarations type-check a user's code and reject a misuse", async () => {
  for (const f of ["consumer.ts", "consumer-mistake.ts"]) copyFileSync(join(FIXTURES, f), join(pkg.appDir, f));
  const tsconfig = (file: string) =>
    JSON.stringify({
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", strict: true, noEmit: true, types: [] },
      files: [file],
    });
  writeFileSync(join(pkg.appDir, "tsconfig.json"), tsconfig("consumer.ts"));
  writeFileSync(join(pkg.appDir, "tsconfig.mistake.json"), tsconfig("consumer-mistake.ts"));
  await exec(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: pkg.appDir });
  const mistake = await exec(process.execPath, [TSC, "-p", "tsconfig.mistake.json"], { cwd: pkg.appDir }).catch(
    (e: { stdout: string }) => e,
  );
  expect(mistake.stdout).toContain("Property 'resolveScopes' does not exist");
  expect(mistake.stdout).toContain("Type 'number' is not assignable to type 'string'");
}, 300_000);
