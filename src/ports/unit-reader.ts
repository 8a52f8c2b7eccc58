import type { TemporalScope } from "../domain/scope.js";

/** A document (`chunkIndex` undefined) or one chunk of it, addressed as a UKO URI addresses it. */
export interface UnitAddress {
  resourceId: string;
  path: string;
  chunkIndex?: number;
}

/** Which stored versions a read may see: the scope's temporal setting at `now`. */
export interface UnitVisibility {
  temporal: TemporalScope;
  /** ms since epoch. */
  now: number;
  /** The `recent` window, ms. */
  recentWindowMs: number;
}

/** One unit's content at the version a read sees. */
export interface UnitRecord extends UnitAddress {
  /** The whole document's content, or the chunk's text. */
  content: string;
  /** The document's metadata. */
  metadata: Record<string, string>;
  /** When the version read was superseded (ms since epoch); null when it is the live one. */
  supersededAt: number | null;
}

/** One retained chunk version with its text, as a keyword index is built from it. */
export interface ChunkText {
  chunkKey: number;
  resourceId: string;
  path: string;
  chunkIndex: number;
  text: string;
  supersededAt: number | null;
}

/** Every retained chunk version, read in one consistent snapshot, and the generation it is of. */
export interface ChunkSnapshot {
  generation: bigint;
  chunks: ChunkText[];
}

/**
 * Reads stored documents and chunks by address (FetchContent, graph evidence) and snapshots the chunk
 * texts (the in-memory BM25 fallback). A companion of the DocumentStore port, over the same storage,
 * kept apart so the two can evolve independently; an implementation never answers a unit from a
 * version the visibility does not allow.
 *
 * Asynchronous, so a networked engine can implement it. Each method reads one committed state of the
 * document store (one read transaction or snapshot): all answers of one `readUnits` call, and every
 * chunk of a snapshot, see a concurrent write entirely or not at all, and a snapshot's `generation` is
 * the generation of exactly the state it holds.
 */
export interface UnitReader {
  /**
   * One answer per address, in the order given (undefined where no visible version holds the unit).
   * A document answers at its newest visible version (the live one when there is one); a chunk at the
   * newest visible version of its document that has that chunk.
   */
  readUnits(addresses: readonly UnitAddress[], visibility: UnitVisibility): Promise<Array<UnitRecord | undefined>>;
  /** Every retained chunk version with its text, and the generation the snapshot is of. */
  snapshotChunks(): Promise<ChunkSnapshot>;
}

/**
 * What one committed write changed in the chunk texts, in commit order: how a store without a native
 * keyword index keeps an in-memory one current without rebuilding it per generation.
 */
export interface ChunkTextChanges {
  /** The generation of the commit. */
  generation: bigint;
  /** New chunk versions; a key already indexed is replaced (re-indexing). */
  added: ChunkText[];
  /** Chunk versions superseded at `at`. */
  superseded: number[];
  /** Chunk versions dropped by retention. */
  removed: number[];
  at: number;
  /** A full re-index of this resource: its rows are dropped before `added` is applied (stray ones included). */
  clearResource?: string;
}
