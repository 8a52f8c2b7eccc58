/**
 * A bounded min-heap keeping the best `k` (score, chunk key) pairs seen: higher score first, ties by the
 * smaller chunk key, so the answer never depends on scan order. The worst kept pair sits at the root, so
 * a candidate is compared once against `floor()` before it costs a push.
 */
export class TopKHeap {
  private readonly scores: Float64Array;
  private readonly keys: Float64Array;
  private readonly rows: Int32Array;
  private size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.scores = new Float64Array(capacity);
    this.keys = new Float64Array(capacity);
    this.rows = new Int32Array(capacity);
  }

  /** The lowest score a candidate needs to be considered: -Infinity until the heap is full. */
  floor(): number {
    return this.size === this.capacity ? this.scores[0] : Number.NEGATIVE_INFINITY;
  }

  /**
   * Offers a candidate; `tag` is an opaque number carried along (e.g. a partition-local row or a
   * partition number). Returns whether it was kept.
   */
  push(score: number, key: number, tag = 0): boolean {
    if (this.size < this.capacity) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!worse(score, key, this.scores[parent], this.keys[parent])) break;
        this.move(parent, i);
        i = parent;
      }
      this.set(i, score, key, tag);
      return true;
    }
    if (!worse(this.scores[0], this.keys[0], score, key)) return false;
    this.siftDown(score, key, tag);
    return true;
  }

  /** The chunk keys kept, in no particular order; the heap is left as it is. */
  keptKeys(): number[] {
    return Array.from(this.keys.subarray(0, this.size));
  }

  /** The kept entries, best first, and empties the heap. */
  drain(): Array<{ score: number; key: number; tag: number }> {
    const out = new Array<{ score: number; key: number; tag: number }>(this.size);
    for (let i = this.size - 1; i >= 0; i--) {
      out[i] = { score: this.scores[0], key: this.keys[0], tag: this.rows[0] };
      const last = this.size - 1;
      this.size = last;
      if (last > 0) this.siftDown(this.scores[last], this.keys[last], this.rows[last]);
    }
    return out;
  }

  private siftDown(score: number, key: number, tag: number): void {
    let i = 0;
    const n = this.size;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && worse(this.scores[r], this.keys[r], this.scores[l], this.keys[l]) ? r : l;
      if (!worse(this.scores[c], this.keys[c], score, key)) break;
      this.move(c, i);
      i = c;
    }
    this.set(i, score, key, tag);
  }

  private move(from: number, to: number): void {
    this.scores[to] = this.scores[from];
    this.keys[to] = this.keys[from];
    this.rows[to] = this.rows[from];
  }

  private set(i: number, score: number, key: number, tag: number): void {
    this.scores[i] = score;
    this.keys[i] = key;
    this.rows[i] = tag;
  }
}

/** Whether (a, ak) ranks below (b, bk): a lower score, or the same score and a larger key. */
function worse(a: number, ak: number, b: number, bk: number): boolean {
  return a < b || (a === b && ak > bk);
}
