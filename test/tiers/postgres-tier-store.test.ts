import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPostgresPool } from "../../src/adapters/postgres/postgres-pool.js";
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

describe("PostgresTierStore: every tier in the database, shared by the servers on it", () => {
  const files = (store: TierStore) => readdirSync(opened.get(store)!.dir);

  test("warm and cold content live in the table (cold compressed), nothing under the data directory", async () => {
    const s = await create();
    const long = "the cold words ".repeat(200);
    await s.save(record("a", "cold", long));
    await s.save(record("b", "warm"));
    expect(files(s)).toEqual([]);
    const { rows } = await opened
      .get(s)!
      .db.pool.query<{ id: string; tier: string; content: string | null; cold: number | null }>(
        "SELECT id, tier, content, octet_length(cold_content) AS cold FROM tier_fragments ORDER BY id",
      );
    expect(rows.map((r) => [r.id, r.tier, r.content])).toEqual([
      ["a", "cold", null],
      ["b", "warm", "content of b"],
    ]);
    expect(rows[0].cold).toBeGreaterThan(0);
    expect(rows[0].cold!).toBeLessThan(long.length / 4);
    expect(rows[1].cold).toBeNull();
    expect((await s.readContents(OWNER, ["a"])).get("a")).toBe(long);
    await s.save(record("a", "hot", "hot again"));
    expect((await opened.get(s)!.db.pool.query("SELECT cold_content FROM tier_fragments WHERE id = 'a'")).rows).toEqual([
      { cold_content: null },
    ]);
  });

  test("a fragment moved to cold through one server is read through another with its own data directory, after the first is gone", async () => {
    const a = await create();
    const { db } = opened.get(a)!;
    const otherPool = openPostgresPool(db.url);
    const otherDir = mkdtempSync(join(tmpdir(), "acms-pg-tier-b-"));
    try {
      await a.save(record("shared", "warm", "first warm"));
      await a.save(record("shared", "cold", "then cold, through server a"));
      await a.close();
      rmSync(opened.get(a)!.dir, { recursive: true, force: true });
      const b = new PostgresTierStore(otherPool, join(otherDir, "cold"));
      expect((await b.load()).map((f) => [f.id, f.tier])).toEqual([["shared", "cold"]]);
      expect((await b.readContents(OWNER, ["shared"])).get("shared")).toBe("then cold, through server a");
      await b.close();
    } finally {
      await otherPool.end();
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  test("a cold file an earlier version wrote is moved into its row at load; a row whose file another server holds is kept for it", async () => {
    const s = await create();
    const { db, dir } = opened.get(s)!;
    // What an earlier version left: two cold rows pointing at files, one of them in this data directory.
    for (const id of ["mine", "theirs"]) {
      const f = record(id, "cold");
      await db.pool.query(
        `INSERT INTO tier_fragments (owner, id, tier, project_name, resource_id, metadata, cold_file, summary, token_count, created_at, updated_at, last_accessed_at, access_seq)
         VALUES ($1, $2, 'cold', $3, '', '{}', $4, 's', 1, 1, 1, 1, $5)`,
        [OWNER, id, f.projectName, `0123456789abcdef0123456789abcde${id === "mine" ? "0" : "1"}-1.json`, f.accessSeq],
      );
    }
    mkdirSync(join(dir, "cold"), { recursive: true });
    writeFileSync(
      join(dir, "cold", "0123456789abcdef0123456789abcde0-1.json"),
      JSON.stringify({ owner: OWNER, id: "mine", content: "from an old file" }),
    );
    const r = await reopen(s);
    expect((await r.load()).map((f) => [f.id, f.tier])).toEqual([
      ["mine", "cold"],
      ["theirs", "cold"],
    ]);
    expect(readdirSync(join(dir, "cold"))).toEqual([]);
    expect(await r.readContents(OWNER, ["mine", "theirs"])).toEqual(new Map([["mine", "from an old file"]]));
    const { rows } = await db.pool.query<{ id: string; cold_file: string | null; moved: boolean }>(
      "SELECT id, cold_file, cold_content IS NOT NULL AS moved FROM tier_fragments ORDER BY id",
    );
    expect(rows).toEqual([
      { id: "mine", cold_file: null, moved: true },
      { id: "theirs", cold_file: "0123456789abcdef0123456789abcde1-1.json", moved: false },
    ]);
  });
});
