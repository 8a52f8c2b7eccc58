import type { RegistryStore } from "../../ports/registry-store.js";
import type { ScopeStore } from "../../ports/scope-store.js";
import type { TierService } from "../../application/tiers/tier-service.js";
import type { DocumentStore } from "../../ports/document-store.js";
import type { TextBackend } from "../../ports/text-backend.js";
import type { VectorBackend } from "../../ports/vector-backend.js";
import type { GraphBackend } from "../../ports/graph-backend.js";
import type { UnitReader } from "../../ports/unit-reader.js";
import type { FairEmbedder } from "../../application/shared/fair-embedder.js";
import type { TextChunker } from "../../ports/text-chunker.js";

/**
 * The adapters one server runs on, picked by the composition root (`createBackends`). Tests swap any
 * member for another implementation of the same port before the services are built over them
 * (`createServices`). The tier service is the one service held here: it loads its store's fragments
 * once at start, asynchronously, so it is opened with the adapters rather than built per router.
 */
export interface Backends {
  registry: RegistryStore;
  scopes: ScopeStore;
  /** The context tiers (hot, warm, cold) over their store. */
  tiers: TierService;
  /** Documents, versions and chunks: the source every index is rebuilt from. */
  documents: DocumentStore;
  /** Keyword search. */
  text: TextBackend;
  /**
   * Resolves once the keyword index is built: on DuckDB the in-memory index fills from the file in the
   * background (health says NOT_SERVING for keyword search meanwhile; a search that comes anyway waits).
   * Absent: ready at once.
   */
  textReady?: Promise<void>;
  /** Similarity search; absent: VectorBackendService answers UNIMPLEMENTED and uploaded embeddings stay in the document store only. */
  vector?: VectorBackend;
  /**
   * Resolves once the vectors are loaded: the embedded backend fills from the document store in the
   * background (health says NOT_SERVING for vector search meanwhile; a search that comes anyway waits).
   * Absent: ready at once.
   */
  vectorReady?: Promise<void>;
  /** Triples; absent: graph RPCs and PutTriples answer UNIMPLEMENTED. */
  graph?: GraphBackend;
  /**
   * Resolves once the graph answers queries: the embedded store loads into its query workers in the
   * background, so start-up does not wait for the triples (health says NOT_SERVING for the graph meanwhile).
   * Absent: ready at once.
   */
  graphReady?: Promise<void>;
  /** Which graph engine runs, for the start-up log (e.g. "Oxigraph (embedded)"). */
  graphEngine?: string;
  /** Reads documents and chunks by UKO URI (FetchContent, graph evidence); absent: FetchContent answers UNIMPLEMENTED. */
  units?: UnitReader;
  /**
   * Starts the background loads `createBackends({ deferLoads: true })` held back (the server calls it once
   * listening); idempotent. Absent: they started at once.
   */
  startLoads?(): void;
  /**
   * The server's embedder (ACMS_EMBED_MODEL_DIR or ACMS_EMBEDDINGS_URL), shared fairly between tenants:
   * chunks uploaded without a vector are embedded, and searches may send text. Absent: none.
   */
  embedder?: FairEmbedder;
  /** Server-side chunking off the serving thread (the chunking workers); absent: chunked on the serving thread. */
  chunker?: TextChunker;
  /** Resolves once the embedder answers with the deployment's dimension (health says NOT_SERVING for vector search meanwhile). */
  embedderReady?: Promise<void>;
  /** Releases every adapter (flushes and closes databases). */
  close(): Promise<void>;
}
