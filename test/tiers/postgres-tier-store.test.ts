import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresTierStore } from "../../src/adapters/postgres/postgres-tier-store.js";
import type { TierStore } from "../../src/ports/tier-store.js";
import { openTestPostgres, type PostgresTestDatabase } from "../support/engines/postgres-harness.js";
import { OWNER, record, runTierStoreSuite } from "./tier-store-suite.js";

const opened = new Map<TierStore, { db: PostgresTestDatabase; dir: string }>();
const dbs: PostgresTestDatabase[] = [];
afterAll(async () => {
  for (const db of dbs) await db.close();
  for (const { dir } of opened.values()) rmSync(dir, { recursive: true, force: true });
});

async function create(): Promise<PostgresTierStore> {
  const db = await openTestPostgres();
  dbs.push(db);
  const dir = mkdtempSync(join(tmpdir(), "acms-pg-tier-"));
  const s = new PostgresTierStore(db.pool, join(dir, "cold"));
  opened.set(s, { db, dir });
  return s;
}

async function reopen(store: TierStore): Promise<PostgresTierStore> {
  const { db, dir } = opened.get(store)!;
  await store.close();
  const s = new PostgresTierStore(db.pool, join(dir, "cold"));
  opened.set(s, { db, dir });
  return s;
}

runTierStoreSuite({ name: "PostgresTierStore", create, reopen });

describe("PostgresTierStore crash safety (the embedded store's move rule)", () => {
  const coldFiles = (store: TierStore) => readdirSync(join(opened.get(store)!.dir, "cold")).sort();

  test("warm content lives in the table, cold content in one file per fragment", async () => {
    const s = await create();
    await s.save(record("a", "cold"));
    await s.save(record("b", "warm"));
    expect(coldFiles(s)).toHaveLength(1);
    const { rows } = await opened.get(s)!.db.pool.query("SELECT id, tier, content FROM tier_fragments ORDER BY id");
    expect(rows).toEqual([
      { id: "a", tier: "cold", content: null },
      { id: "b", tier: "warm", content: "content of b" },
    ]);
    await s.save(record("a", "hot"));
    expect(coldFiles(s)).toEqual([]);
  });

  test("a crash after writing a cold file but before the catalogue commit leaves the fragment where it was", async () => {
    const s = await create();
    await s.save(record("f", "warm", "warm content"));
    const dir = join(opened.get(s)!.dir, "cold");
    writeFileSync(join(dir, "0123456789abcdef0123456789abcdef-99.json"), JSON.stringify({ owner: OWNER, id: "f", content: "warm content" }));
    writeFileSync(join(dir, "0123456789abcdef0123456789abcdef-100.json.a1b2c3.tmp"), "{");
    const r = await reopen(s);
    expect((await r.load()).map((f) => [f.id, f.tier])).toEqual([["f", "warm"]]);
    expect(coldFiles(r)).toEqual([]);
    expect((await r.readContents(OWNER, ["f"])).get("f")).toBe("warm content");
  });

  test("a crash after the catalogue commit of a move out of cold, before the file is unlinked, leaves one copy", async () => {
    const s = await create();
    await s.save(record("f", "cold", "the original"));
    const [file] = coldFiles(s);
    await opened.get(s)!.db.pool.query(`UPDATE tier_fragments SET tier = 'warm', content = 'the original', cold_file = NULL WHERE id = 'f'`);
    const r = await reopen(s);
    expect((await r.load()).map((f) => [f.id, f.tier])).toEqual([["f", "warm"]]);
    expect(coldFiles(r)).not.toContain(file);
    expect((await r.readContents(OWNER, ["f"])).get("f")).toBe("the original");
  });
});
