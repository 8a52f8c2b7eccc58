import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { TermKind } from "../../gen/acms/v1/graph_pb.js";
import type { TestServer } from "../support/test-server.js";
import { doc, makeResource, makeScope, upsert } from "../index/index-fixture.js";

/** The embedding dimension of the RAG test servers. */
export const DIM = 4;
export const ENV = { ACMS_EMBEDDING_DIM: String(DIM) };

export const RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label";
export const SKOS_PREF = "http://www.w3.org/2004/02/skos/core#prefLabel";
export const EX = "http://example.org/";

const iri = (value: string) => ({ kind: TermKind.IRI, value });
const lit = (value: string) => ({ kind: TermKind.LITERAL, value });

/** The resources and scopes of the RAG corpus. */
export interface RagCorpus {
  docs: string;
  notes: string;
  /** A resource of another tenant (project other/x, principal "other"). */
  foreign: string;
  /** writer's scope over local/rag (docs and notes). */
  scope: string;
  /** writer's scope over local/rag without `secret/**`. */
  noSecrets: string;
  /** other's scope over other/x. */
  otherScope: string;
}

/**
 * A small corpus where keyword, vector and graph evidence agree on `guide/retry.md#0` and disagree
 * elsewhere: two resources of local/rag (writer), one of other/x (other), with embeddings and triples.
 * The docs graph also names a URI of the foreign resource and of an excluded path, which no answer may show.
 */
export async function loadRagCorpus(t: TestServer): Promise<RagCorpus> {
  const docs = await makeResource(t, "writer", "local/rag", "docs");
  const notes = await makeResource(t, "writer", "local/rag", "notes");
  const foreign = await makeResource(t, "other", "other/x", "foreign");
  await upsert(t, "writer", [
    {
      resourceId: docs,
      documents: [
        doc("guide/retry.md", "Retry failed requests with exponential backoff.\nCircuit breakers stop cascading failures.", {
          metadata: { topic: "resilience" },
          chunks: [
            { text: "Retry failed requests with exponential backoff.", embedding: [1, 0, 0, 0] },
            { text: "Circuit breakers stop cascading failures.", embedding: [0, 1, 0, 0] },
          ],
        }),
        doc("guide/cache.md", "Cache invalidation is hard.\nUse a TTL for cache entries.", {
          chunks: [
            { text: "Cache invalidation is hard.", embedding: [0, 0, 1, 0] },
            { text: "Use a TTL for cache entries.", embedding: [0, 0, 0.9, 0.1] },
          ],
        }),
        doc("guide/ops.md", "Operations handbook: on-call rotations and paging.", {
          chunks: [{ text: "Operations handbook: on-call rotations and paging.", embedding: [0, 0.2, 0, 1] }],
        }),
        doc("secret/keys.md", "retry secret api keys backoff", {
          chunks: [{ text: "retry secret api keys backoff", embedding: [1, 0, 0, 0] }],
        }),
      ],
    },
    {
      resourceId: notes,
      documents: [
        doc("notes/backoff.md", "backoff jitter notes for retry storms", {
          chunks: [{ text: "backoff jitter notes for retry storms", embedding: [0.9, 0.1, 0, 0] }],
        }),
      ],
    },
  ]);
  await upsert(t, "other", [
    {
      resourceId: foreign,
      documents: [
        doc("x.md", "retry backoff secrets of another tenant", {
          chunks: [{ text: "retry backoff secrets of another tenant", embedding: [1, 0, 0, 0] }],
        }),
      ],
    },
  ]);
  await t.client(IndexService, "writer").putTriples({
    resourceId: docs,
    triples: [
      { subject: iri(`${EX}Backoff`), predicate: iri(RDFS_LABEL), object: lit("Exponential Backoff") },
      { subject: iri(`${EX}Backoff`), predicate: iri(`${EX}describedBy`), object: iri(`uko://${docs}/guide/retry.md`) },
      { subject: iri(`${EX}Backoff`), predicate: iri(`${EX}relatedTo`), object: iri(`${EX}Operations`) },
      { subject: iri(`${EX}Operations`), predicate: iri(`${EX}describedBy`), object: iri(`uko://${docs}/guide/ops.md`) },
      { subject: iri(`${EX}Backoff`), predicate: iri(`${EX}leaks`), object: iri(`uko://${foreign}/x.md`) },
      { subject: iri(`${EX}Backoff`), predicate: iri(`${EX}hidden`), object: iri(`uko://${docs}/secret/keys.md`) },
      { subject: iri(`${EX}Backoff`), predicate: iri(`${EX}ghost`), object: iri(`uko://${docs}/guide/nowhere.md`) },
      { subject: iri(`uko://${docs}/guide/cache.md#1`), predicate: iri(`${EX}about`), object: iri(`${EX}Cache`) },
      { subject: iri(`${EX}Cache`), predicate: iri(SKOS_PREF), object: lit("Cache") },
    ],
    replace: true,
  });
  await t.client(IndexService, "other").putTriples({
    resourceId: foreign,
    triples: [{ subject: iri(`${EX}Backoff`), predicate: iri(RDFS_LABEL), object: lit("backoff of another tenant") }],
    replace: true,
  });
  const scope = await makeScope(t, "writer", { projects: ["local/rag"] });
  const noSecrets = await makeScope(t, "writer", { projects: ["local/rag"], excludePaths: ["secret/**"] });
  const otherScope = await makeScope(t, "other", { projects: ["other/x"] });
  return { docs, notes, foreign, scope, noSecrets, otherScope };
}
