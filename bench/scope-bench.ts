/**
 * Scope benchmark: what resolving a scope costs against the unavoidable registry read, and what the
 * per-call scope look-up costs with the view and scope caches against rebuilding them every call (a cached
 * scope's view is answered synchronously, with no await on the store), and the most one scope's globs may
 * hold the serving thread (issue 24, finding 5: 256+256 costly globs held it ~1.6 s).
 * BENCH_SCALE grows the registry (default 5,000 resources in a 4-ary DAG, plus a second project).
 */
import { openSqliteDatabase } from "../src/adapters/kit/sqlite-database.js";
import { SqliteRegistryStore } from "../src/adapters/sqlite/sqlite-registry-store.js";
import { SqliteScopeStore } from "../src/adapters/sqlite/sqlite-scope-store.js";
import type { ResourceScope } from "../src/domain/scope.js";
import { resolveScopeResources } from "../src/domain/scope-resolution.js";
import { createScopedBackendView } from "../src/domain/scoped-backend-view.js";
import { newUlid } from "../src/domain/ulid-id.js";
import { resolveView } from "../src/server/access/access-check.js";
import { ScopeViewCache } from "../src/server/access/scope-view-cache.js";
import { createPrincipal } from "../src/domain/principal.js";
import { scopeGlobViolations, SCOPE_GLOB_BUDGET } from "../src/domain/scope-glob-budget.js";
import { formatMs } from "./bench-timing.js";

async function timeIt(iterations: number, fn: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(iterations, 5); i++) await fn();
  const start = performance.now();
  for (let i = 0; i < iterations; i++) await fn();
  return (performance.now() - start) / iterations;
}

/** Like timeIt for a call answered synchronously when its cache holds the answer (awaited only when it is a promise). */
function timeSync(iterations: number, fn: () => unknown): number {
  for (let i = 0; i < Math.min(iterations, 5); i++) fn();
  const start = performance.now();
  for (let i = 0; i < iterations; i++) {
    if (fn() instanceof Promise) throw new Error("expected a synchronous answer from the cache");
  }
  return (performance.now() - start) / iterations;
}

const fmt = (ms: number) => formatMs(ms, 1);

/** Runs the scope benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const n = Math.max(100, Math.round(5000 * scale));
  const db = openSqliteDatabase(":memory:");
  const registry = new SqliteRegistryStore(db);
  await registry.createProject("bench/big");
  await registry.createProject("bench/side");
  const ids: string[] = [];
  // One transaction for the set-up only (the store's writes are synchronous underneath, so they join it).
  db.exec("BEGIN");
  for (let i = 0; i < n; i++) {
    const parentIds = i === 0 ? [] : [ids[Math.floor((i - 1) / 4)]];
    ids.push((await registry.registerResource({ id: "", project: "bench/big", alias: `r${i}`, kind: "repo", parentIds, metadata: {} })).id);
  }
  for (let i = 0; i < n / 10; i++)
    await registry.registerResource({ id: "", project: "bench/side", alias: `s${i}`, kind: "docs", parentIds: [], metadata: {} });
  db.exec("COMMIT");
  const principal = createPrincipal("bench", ["bench/*"], false);
  const visible = async (id: string) => (await registry.getResource(id))?.links.some((l) => principal.allowsProject(l.project)) ?? false;

  const readLinks = await timeIt(20, () => registry.linksOfProjects(["bench/big", "bench/side"]));
  const resolveAll = await timeIt(20, async () =>
    resolveScopeResources({
      projects: ["bench/big", "bench/side"],
      links: await registry.linksOfProjects(["bench/big", "bench/side"]),
      withDescendants: (x) => registry.withDescendants(x),
      visible,
      includeResources: [],
      excludeResources: ["r1", "bench/side:s3", ids[7]],
      expandDescendants: true,
    }),
  );
  process.stdout.write(
    `resolve a scope over ${n + n / 10} resources with a deny list: ${fmt(resolveAll)} ` +
      `(${(resolveAll / readLinks).toFixed(2)}x the bare registry read of the links, ${fmt(readLinks)})\n`,
  );

  const scopes = new SqliteScopeStore(db);
  const scope: ResourceScope = {
    scopeId: newUlid(),
    owner: "bench",
    resourceIds: [...ids].sort(),
    projectNames: ["bench/big"],
    temporalScope: "current",
    includeResources: [],
    excludeResources: [],
    includePaths: ["src/**", "docs/**/*.md"],
    excludePaths: ["**/*.lock"],
    parentScopeId: "",
    expandDescendants: true,
    deniedResourceIds: [],
    createdAt: new Date(),
  };
  await scopes.save(scope);
  const views = new ScopeViewCache(scopes);
  await resolveView(views, principal, scope.scopeId);
  const rebuild = await timeIt(200, async () => createScopedBackendView((await scopes.get(scope.scopeId))!));
  const cached = timeSync(20000, () => resolveView(views, principal, scope.scopeId));
  process.stdout.write(
    `per-call scope look-up (${n} resources, 3 globs): ${fmt(cached)} with the view cache vs ${fmt(rebuild)} rebuilding the view ` +
      `(${(rebuild / cached).toFixed(0)}x faster)\n`,
  );
  // A one-entry cache read alternately for two scopes misses every time: each read is a SQLite read.
  const tiny = new SqliteScopeStore(db, { cacheSize: 1 });
  const second = { ...scope, scopeId: newUlid() };
  await scopes.save(second);
  let flip = false;
  const cold = await timeIt(200, () => {
    flip = !flip;
    return tiny.get(flip ? scope.scopeId : second.scopeId);
  });
  const warm = await timeIt(20000, () => scopes.get(scope.scopeId));
  process.stdout.write(`scope store read: ${fmt(warm)} cached vs ${fmt(cold)} from SQLite (${(cold / warm).toFixed(0)}x faster)\n`);

  // The worst a scope's globs cost the serving thread: the attack refused, and the largest scope accepted.
  const costly = (tag: string) => Array.from({ length: 256 }, (_, i) => `{-500..499}/${tag}${i}`);
  const refuse = await timeIt(20, () =>
    scopeGlobViolations([
      { field: "include_paths", patterns: costly("i") },
      { field: "exclude_paths", patterns: costly("e") },
    ]),
  );
  const largest = Array.from({ length: 9 }, (_, i) => `{-500..499}/${i}`);
  const validate = await timeIt(20, () => scopeGlobViolations([{ field: "include_paths", patterns: largest }]));
  const build = await timeIt(20, () => createScopedBackendView({ ...scope, includePaths: largest, excludePaths: [] }));
  process.stdout.write(
    `scope globs on the serving thread: 256+256 costly globs refused in ${fmt(refuse)}; the largest accepted ` +
      `(${SCOPE_GLOB_BUDGET.maxStates} states at most) validated in ${fmt(validate)}, its view built in ${fmt(build)}\n`,
  );
  db.close();
}
