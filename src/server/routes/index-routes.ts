import type { ConnectRouter } from "@connectrpc/connect";
import { IndexService, type UpsertDocumentsRequest } from "../../../gen/acms/v1/index_pb.js";
import { InvalidArgumentError } from "../../domain/errors.js";
import type { UpsertOutcome } from "../../ports/document-store.js";
import { principalOf } from "../handler-context.js";
import { toRdfTriples } from "../triple-input.js";
import type { Indexer } from "../../application/indexer.js";
import type { RouteDeps } from "../server-deps.js";

/** One stream message; a rejection says which message (1-based) it was, the fields stay as named. */
async function upsertMessage(indexer: Indexer, msg: UpsertDocumentsRequest, n: number): Promise<UpsertOutcome> {
  try {
    return await indexer.upsert(msg);
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err;
    throw new InvalidArgumentError(err.violations.map((v) => ({ field: v.field, description: `${v.description} (stream message ${n})` })));
  }
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
        let documentsUpserted = 0;
        let chunksIndexed = 0;
        let vectorsIndexed = 0;
        let messagesReceived = 0;
        let indexGeneration = await deps.services.indexGeneration();
        for await (const msg of requests) {
          ctx.signal.throwIfAborted();
          messagesReceived += 1;
          const outcome = await upsertMessage(indexer, msg, messagesReceived);
          documentsUpserted += outcome.documentsUpserted;
          chunksIndexed += outcome.chunksIndexed;
          vectorsIndexed += outcome.vectorsIndexed;
          indexGeneration = outcome.generation;
        }
        return { documentsUpserted, chunksIndexed, vectorsIndexed, messagesReceived, indexGeneration };
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
        const outcome = await indexer.rebuild(principalOf(ctx), req.resourceIds, req.fullRebuild);
        return {
          indexGeneration: outcome.generation,
          resourcesRebuilt: outcome.resourcesRebuilt,
          documentsReindexed: outcome.documentsReindexed,
        };
      },
    });
  };
}
