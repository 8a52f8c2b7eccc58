import type { WriteInSeries } from "../../ports/document-store.js";

/** One message's place in an upload: when it may be written, and its place in the store's series. */
export interface UploadTurn {
  /** Resolves once every earlier message of the upload is queued in the store in order, or has settled. */
  readonly turn: Promise<void>;
  readonly series: WriteInSeries;
  /** The message settled: written (`true`) or failed (`false`: no later message may be written). */
  done(ok: boolean): void;
}

/**
 * The order of one UpsertDocuments stream's messages when several are under way at once: each is checked,
 * chunked and embedded as soon as it arrives, then written only in its turn (after the message before it is
 * queued in the store, or has settled), and not at all once a message before it has failed. So the messages
 * before a failed one stay written, as they would one by one, and none after it is, while a stream's small
 * messages can still commit in one transaction (UpsertHooks.series).
 */
export class UploadOrder {
  private firstFailed = Infinity;
  private count = 0;
  private tail: Promise<void> = Promise.resolve();

  /** The next message's turn. */
  next(): UploadTurn {
    const index = this.count++;
    const turn = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    const failed = (): void => {
      this.firstFailed = Math.min(this.firstFailed, index);
    };
    const order = this;
    const series: WriteInSeries = {
      get failedBefore() {
        return order.firstFailed < index;
      },
      fail: failed,
      queued: release,
    };
    return {
      turn,
      series,
      done(ok) {
        if (!ok) failed();
        release();
      },
    };
  }
}
