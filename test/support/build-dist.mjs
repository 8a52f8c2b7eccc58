/**
 * Jest's global set-up: tests that run `bin/acms.js` as a child process run the compiled CLI, so dist/ is
 * rebuilt first when a source changed (a stat walk when it is up to date). A fresh clone's `npm test` needs
 * no manual build, and a child process never runs code older than the sources under test.
 */
import { buildIfStale } from "../../scripts/build.mjs";

export default async function buildDist() {
  await buildIfStale();
}
