import type { HnswIndex } from "./hnsw-index.js";

/**
 * Something that carries an HNSW graph over rows it holds (a resource's partition, or the whole store):
 * the graph searches use, one being built in the background, and how the builder reads the rows.
 */
export interface GraphHolder {
  /** The graph searches use, once built. */
  index: HnswIndex | null;
  /** A graph under construction, swapped in when complete; every write goes to it too. */
  building: HnswIndex | null;
  /** Set when the holder is dropped, so a background build stops. */
  detached: boolean;
  /** How many rows are held. */
  readonly size: number;
  /** Every chunk key held (a snapshot). */
  keySnapshot(): number[];
  /** Copies the unit rows of `keys` (those still held) back to back; returns the keys copied. */
  copyRows(keys: readonly number[]): { keys: number[]; vectors: Float32Array };
}
