// Builds the package twice from the same sources, each build with its declarations: dist/esm (ES modules,
// for `import`) and dist/cjs (CommonJS, for `require()`: Node before 20.19 cannot require an ES module, and
// node10 tooling reads `main`, `types` and `typesVersions` only). package.json's exports map picks one per
// condition. dist/cjs/package.json marks that tree CommonJS for Node and for TypeScript's node16 resolution.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
// The repository's TypeScript: the package is built from a checkout (see the README).
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const run = (...args) => execFileSync(process.execPath, [tsc, "-p", "tsconfig.json", ...args], { cwd: packageDir, stdio: "inherit" });

rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
run("--outDir", "dist/esm");
run("--outDir", "dist/cjs", "--module", "commonjs", "--moduleResolution", "node10");
writeFileSync(new URL("../dist/cjs/package.json", import.meta.url), '{ "type": "commonjs" }\n');
