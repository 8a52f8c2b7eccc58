import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { chunkText } from "../../src/domain/chunking.js";
import type { TemporalScope } from "../../src/domain/scope.js";
import type { ScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import { viewOver } from "../support/view-over.js";

/** One document of a test corpus, already chunked. */
export interface CorpusDocument {
  resourceId: string;
  path: string;
  chunks: string[];
  metadata?: Record<string, string>;
}

/**
 * How the text-backend suite writes its corpus: each adapter under test implements it over its own
 * storage (the FTS5 adapter over SqliteDocumentStore, an in-memory BM25 over its own index).
 */
export interface TextCorpusLoader {
  /** Stores a new live version of the document at time `at` (ms), superseding the previous one. */
  upsert(doc: CorpusDocument, at: number): void | Promise<void>;
  /** Deletes (supersedes without successor) the document at time `at`. */
  remove(resourceId: string, path: string, at: number): void | Promise<void>;
  /** The UKO URI and supersession time of a chunk key the backend returned. */
  describe(chunkKey: number): Promise<{ ukoUri: string; supersededAt: number | null } | undefined>;
}

/** A fixture query: its text and, when relevance is clear-cut, the UKO URI that must rank first. */
export interface CorpusQuery {
  query: string;
  expect: string | null;
}

/** The fixed corpus under test/fixtures/corpus: resources by alias, documents, queries. */
export interface FixtureCorpus {
  resources: Record<string, string>;
  documents: CorpusDocument[];
  queries: CorpusQuery[];
}

const CORPUS_DIR = join(__dirname, "..", "fixtures", "corpus");

function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory() ? filesUnder(p) : [p];
    });
}

/**
 * Reads the fixed corpus: `<alias>/<path>.txt` files (the `.txt` keeps the TypeScript compiler off the
 * code samples), chunked with the server's chunker, plus `corpus.json` (alias → resource id, queries).
 */
export function loadFixtureCorpus(): FixtureCorpus {
  const manifest = JSON.parse(readFileSync(join(CORPUS_DIR, "corpus.json"), "utf8")) as {
    resources: Record<string, string>;
    queries: CorpusQuery[];
  };
  const documents: CorpusDocument[] = [];
  for (const [alias, resourceId] of Object.entries(manifest.resources)) {
    const root = join(CORPUS_DIR, alias);
    for (const file of filesUnder(root)) {
      const path = relative(root, file)
        .split("\\")
        .join("/")
        .replace(/\.txt$/, "");
      const content = readFileSync(file, "utf8");
      documents.push({ resourceId, path, chunks: chunkText(content), metadata: { alias, kind: path.split(".").pop() ?? "" } });
    }
  }
  return { resources: manifest.resources, documents, queries: manifest.queries };
}

/** A view over `resourceIds` with optional path filters and temporal setting, as the interceptor would build it. */
export function testView(
  resourceIds: readonly string[],
  opts: { includePaths?: string[]; excludePaths?: string[]; temporal?: TemporalScope; deniedResourceIds?: string[] } = {},
): ScopedBackendView {
  return viewOver(resourceIds, {
    scopeId: "01JSC0PE000000000000000000",
    owner: "test",
    projectNames: ["local/test"],
    temporalScope: opts.temporal ?? "current",
    includePaths: opts.includePaths ?? [],
    excludePaths: opts.excludePaths ?? [],
    deniedResourceIds: opts.deniedResourceIds ?? [],
  });
}
