#!/usr/bin/env node
// `npx acms …` and `npm start` run the compiled CLI in dist/. In a source checkout (scripts/build.mjs is
// there) dist/ is rebuilt first when a source changed since the last build, so a fresh clone needs no
// manual build and an edit is never run stale; an installed package or the Docker image runs dist/ as is.
import { existsSync } from "node:fs";

const builder = new URL("../scripts/build.mjs", import.meta.url);
if (existsSync(builder)) {
  const { buildIfStale } = await import(builder.href);
  await buildIfStale();
}
await import("../dist/main.js");
