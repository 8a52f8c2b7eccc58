import Database from "better-sqlite3";

/**
 * SQLite FTS5 itself, as the oracle the TypeScript tokenizer, stemmer and BM25 are checked against:
 * the terms an FTS5 table declared `tokenize='porter unicode61'` (or plain unicode61) stores for a text.
 */
export class Fts5Oracle {
  private readonly db = new Database(":memory:");
  constructor() {
    this.db.exec(`
      CREATE VIRTUAL TABLE porter_t USING fts5(x, tokenize='porter unicode61');
      CREATE VIRTUAL TABLE porter_v USING fts5vocab(porter_t, 'instance');
      CREATE VIRTUAL TABLE plain_t USING fts5(x, tokenize='unicode61');
      CREATE VIRTUAL TABLE plain_v USING fts5vocab(plain_t, 'instance');
    `);
  }

  /** The terms FTS5 stores for `text`, in order. */
  terms(text: string, stemmed: boolean): string[] {
    const t = stemmed ? "porter" : "plain";
    this.db.exec(`DELETE FROM ${t}_t`);
    this.db.prepare(`INSERT INTO ${t}_t(rowid, x) VALUES (1, ?)`).run(text);
    const rows = this.db.prepare(`SELECT term FROM ${t}_v ORDER BY offset`).all() as Array<{ term: string }>;
    return rows.map((r) => r.term);
  }

  close(): void {
    this.db.close();
  }
}
