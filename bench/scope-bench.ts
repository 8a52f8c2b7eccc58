/**
 * Scope benchmark: what resolving a scope costs against the unavoidable registry read, and what the
 * per-call scope look-up costs with the view and scope caches against rebuilding them every call.
 * BENCH_SCALE grows the registry (default 5,000 resources in a 4-ary DAG, plus a second project).
 */
import { openSqliteDatabase } from "../src/adapters/sqlite/sqlite-database.js";
import { SqliteRegistryStore } from "../src/adapters/sqlite/sqlite-registry-store.js";
import { SqliteScopeStore } from "../src/adapters/sqlite/sqlite-scope-store.js";
import type { ResourceScope } from "../src/domain/scope.js";
import { resolveScopeResources } from "../src/domain/scope-resolution.js";
import { createScopedBackendView } from "../src/domain/scoped-backend-view.js";
import { newUlid } from "../src/domain/ulid-id.js";
import { resolveView } from "../src/server/access-check.js";
import { createPrincipal } from "../src/server/principal.js";
import { formatMs } from "./bench-timing.js";

function timeIt(iterations: number, fn: () => void): number {
  for (let i = 0; i < Math.min(iterations, 5); i++) fn();
  const start = performance.now();
  for (let i = 0; i < iterations; i++) fn();
  return (performance.now() - start) / iterations;
}

const fmt = (ms: number) => formatMs(ms, 1);

/** Runs the scope benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const n = Math.max(100, Math.round(5000 * scale));
  const db = openSqliteDatabase(":memory:");
  const registry = new SqliteRegistryStore(db);
  registry.createProject("bench/big");
  registry.createProject("bench/side");
  const ids: string[] = [];
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const parentIds = i === 0 ? [] : [ids[Math.floor((i - 1) / 4)]];
      ids.push(registry.registerResource({ id: "", project: "bench/big", alias: `r${i}`, kind: "repo", parentIds, metadata: {} }).id);
    }
    for (let i = 0; i < n / 10; i++) registry.registerResource({ id: "", project: "bench/side", alias: `s${i}`, kind: "docs", parentIds: [], metadata: {} });
  })();
  const principal = createPrincipal("bench", ["bench/*"], false);
  const visible = (id: string) => registry.getResource(id)?.links.some((l) => principal.allowsProject(l.project)) ?? false;

  const readLinks = timeIt(20, () => registry.linksOfProjects(["bench/big", "bench/side"]));
  const resolveAll = timeIt(20, () =>
    resolveScopeResources({
      projects: ["bench/big", "bench/side"],
      links: registry.linksOfProjects(["bench/big", "bench/side"]),
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
  scopes.save(scope);
  const rebuild = timeIt(200, () => createScopedBackendView(scopes.get(scope.scopeId)!));
  const cached = timeIt(20000, () => resolveView(scopes, principal, scope.scopeId));
  process.stdout.write(
    `per-call scope look-up (${n} resources, 3 globs): ${fmt(cached)} with the view cache vs ${fmt(rebuild)} rebuilding the view ` +
      `(${(rebuild / cached).toFixed(0)}x faster)\n`,
  );
  // A one-entry cache read alternately for two scopes misses every time: each read is a SQLite read.
  const tiny = new SqliteScopeStore(db, { cacheSize: 1 });
  const second = { ...scope, scopeId: newUlid() };
  scopes.save(second);
  let flip = false;
  const cold = timeIt(200, () => {
    flip = !flip;
    tiny.get(flip ? scope.scopeId : second.scopeId);
  });
  const warm = timeIt(20000, () => scopes.get(scope.scopeId));
  process.stdout.write(`scope store read: ${fmt(warm)} cached vs ${fmt(cold)} from SQLite (${(cold / warm).toFixed(0)}x faster)\n`);
  db.close();
}
