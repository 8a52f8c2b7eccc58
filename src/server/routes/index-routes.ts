import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { IndexService, type UpsertDocumentsResponseSchema } from "../../../gen/acms/v1/index_pb.js";
import { InvalidArgumentError } from "../../domain/errors.js";
import type { UpsertOutcome } from "../../ports/document-store.js";
import { principalOf } from "../access/handler-context.js";
import { toRdfTriples } from "./triple-input.js";
import type { Indexer } from "../../application/indexing/indexer.js";
import type { UpsertMessage } from "../../application/indexing/upsert-validation.js";
import type { RouteDeps } from "../composition/server-deps.js";
import { decodeDocumentSlices } from "./decode-document-slices.js";
import { upsertDocumentsWireMethod } from "./upsert-wire-method.js";
import { UploadOrder, type UploadTurn } from "../../application/indexing/upload-order.js";

/** Messages of one UpsertDocuments stream under way at once, at most (read ahead of the first not yet written). */
export const UPLOAD_READ_AHEAD_MESSAGES = 8;
/** Their encoded bytes at most: a stream of large messages is taken a message at a time, as before. */
export const UPLOAD_READ_AHEAD_BYTES = 1024 * 1024;

/** About the encoded size of a message received decoded (Connect and gRPC-Web with JSON, or the generated type). */
function upsertMessageBytes(msg: UpsertMessage): number {
  let bytes = msg.resourceId.length;
  for (const d of msg.documents) {
    bytes += d.path.length + d.content.length;
    for (const [k, v] of Object.entries(d.metadata)) bytes += k.length + v.length;
    for (const c of d.chunks) bytes += c.text.length + 4 * c.embedding.length;
  }
  return bytes;
}

/** One stream message; a rejection says which message (1-based) it was, the fields stay as named. */
async function upsertMessage(
  indexer: Indexer,
  msg: () => Promise<UpsertMessage> | UpsertMessage,
  n: number,
  ctx: HandlerContext,
  turn: UploadTurn,
): Promise<UpsertOutcome> {
  let decoded: UpsertMessage;
  try {
    decoded = await msg();
  } catch (err) {
    turn.done(false);
    throw err;
  }
  try {
    return await indexer.upsert(decoded, { tenant: principalOf(ctx).name, signal: ctx.signal, deferDurability: true, turn });
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err;
    throw new InvalidArgumentError(err.violations.map((v) => ({ field: v.field, description: `${v.description} (stream message ${n})` })));
  }
}

/**
 * The UpsertDocuments stream: each message commits on its own (see indexRoutes); `decode` turns a
 * received message into the write pipeline's input (at once, or a slice at a time for the wire form) and
 * `bytes` tells its encoded size. The stream's one answer is its acknowledgement, so its messages commit
 * without waiting to be durable and one `syncWrites()` before the answer makes all of them so (one fsync a
 * stream, not one a message). A stream that fails midway syncs too before its error goes out: the messages
 * committed before it stay, as they would have one by one.
 *
 * Small messages are read ahead (up to UPLOAD_READ_AHEAD_MESSAGES and UPLOAD_READ_AHEAD_BYTES under way):
 * each is checked and chunked as it arrives and written in stream order (UploadOrder), so a stream's small
 * messages can commit together (group commit) instead of one commit each. The answer is as if they were
 * taken one by one: the first message that fails, in stream order, is the stream's error; the messages
 * before it stay written, and none after it is (each is refused before it writes).
 */
async function upsertStream<M>(
  deps: RouteDeps,
  requests: AsyncIterable<M>,
  ctx: HandlerContext,
  decode: (msg: M) => Promise<UpsertMessage> | UpsertMessage,
  bytes: (msg: M) => number,
): Promise<MessageInitShape<typeof UpsertDocumentsResponseSchema>> {
  let documentsUpserted = 0;
  let chunksIndexed = 0;
  let vectorsIndexed = 0;
  let messagesReceived = 0;
  let indexGeneration = await deps.services.indexGeneration();
  const indexer = deps.services.indexer;
  const order = new UploadOrder();
  const underWay: Array<{ outcome: Promise<UpsertOutcome>; bytes: number }> = [];
  let bytesUnderWay = 0;
  /** Waits for the oldest message under way and counts its outcome (its rejection is the stream's error). */
  const settleOldest = async (): Promise<void> => {
    const oldest = underWay.shift()!;
    bytesUnderWay -= oldest.bytes;
    const outcome = await oldest.outcome;
    documentsUpserted += outcome.documentsUpserted;
    chunksIndexed += outcome.chunksIndexed;
    vectorsIndexed += outcome.vectorsIndexed;
    indexGeneration = outcome.generation;
  };
  const closeUpload = indexer.openUpload();
  try {
    for await (const msg of requests) {
      ctx.signal.throwIfAborted();
      messagesReceived += 1;
      const outcome = upsertMessage(indexer, () => decode(msg), messagesReceived, ctx, order.next());
      // Awaited in stream order below; a rejection seen first here is not unhandled.
      outcome.catch(() => undefined);
      const size = bytes(msg);
      underWay.push({ outcome, bytes: size });
      bytesUnderWay += size;
      while (underWay.length >= UPLOAD_READ_AHEAD_MESSAGES || (underWay.length > 0 && bytesUnderWay >= UPLOAD_READ_AHEAD_BYTES))
        await settleOldest();
    }
    while (underWay.length > 0) await settleOldest();
  } catch (err) {
    // The stream's error is what the caller hears; the messages after it settle first (refused, writing
    // nothing), and a failing sync here is the next call's to report.
    closeUpload();
    await Promise.allSettled(underWay.map((m) => m.outcome));
    await indexer.syncWrites().catch(() => undefined);
    throw err;
  }
  closeUpload();
  await indexer.syncWrites();
  return { documentsUpserted, chunksIndexed, vectorsIndexed, messagesReceived, indexGeneration };
}

/** An UpsertDocuments message as `upsertDocumentsWireMethod` decodes it: the documents still encoded. */
interface WireUpsertMessage {
  resourceId: string;
  documents: Uint8Array[];
}

/**
 * UpsertDocuments for the binary protocols (gRPC, gRPC-Web, Connect with protobuf), registered on its own
 * router (see createNodeHandler's `binaryRoutes`): the message arrives with its documents still encoded
 * and they are decoded a slice at a time, so a large message never holds the serving thread while it is
 * decoded. The same interceptors run (the access check reads `resource_id` of the wire type), and each
 * message is checked and committed exactly as on the generated type's route.
 */
export function indexBinaryRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  return (router) => {
    router.rpc(upsertDocumentsWireMethod, async (requests, ctx) =>
      upsertStream(
        deps,
        requests as AsyncIterable<unknown> as AsyncIterable<WireUpsertMessage>,
        ctx,
        async (msg) => ({
          resourceId: msg.resourceId,
          documents: await decodeDocumentSlices(msg.documents),
        }),
        (msg) => msg.documents.reduce((sum, d) => sum + d.byteLength, 0),
      ),
    );
  };
}

/**
 * IndexService on the write pipeline (Indexer). The access interceptor has already refused read-only
 * keys and checked every `resource_id` (each message of the UpsertDocuments stream as it arrives) against
 * the key's projects. Each UpsertDocuments message commits on its own: a rejected message fails the call
 * and writes nothing of its own, while the messages before it stay committed.
 */
export function indexRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  const indexer = deps.services.indexer;
  return (router) => {
    router.service(IndexService, {
      async upsertDocuments(requests, ctx) {
        return upsertStream(deps, requests, ctx, (msg) => msg, upsertMessageBytes);
      },
      async deleteDocuments(req) {
        const outcome = await indexer.delete(req.resourceId, req.paths);
        return { count: outcome.deleted, indexGeneration: outcome.generation };
      },
      async putTriples(req) {
        const { count, generation } = await indexer.putTriples(req.resourceId, toRdfTriples(req.triples), req.replace);
        return { count, indexGeneration: generation };
      },
      async rebuild(req, ctx) {
        const outcome = await indexer.rebuild(principalOf(ctx), req.resourceIds, req.fullRebuild, ctx.signal);
        return {
          indexGeneration: outcome.generation,
          resourcesRebuilt: outcome.resourcesRebuilt,
          documentsReindexed: outcome.documentsReindexed,
        };
      },
    });
  };
}
