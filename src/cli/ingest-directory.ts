import { readFile } from "node:fs/promises";
import { Code, ConnectError } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { UpsertDocumentsRequestSchema, UpsertDocumentsResponse } from "../../gen/acms/v1/index_pb.js";
import type { AcmsClient } from "../client/create-acms-client.js";
import { findFieldViolations } from "../client/find-scope-violation.js";
import type { Embedder } from "./command-embedder.js";
import { CliUsageError } from "./cli-usage-error.js";
import type { IngestProgress } from "./ingest-progress.js";
import { contentHash, loadIngestState, saveIngestState, type IngestState } from "./ingest-state.js";
import { decodeText, walkFiles, type WalkedFile } from "./walk-files.js";

/** What to ingest where. */
export interface IngestOptions {
  /** The folder to walk. */
  dir: string;
  /** The project `namespace/name`, created when missing. */
  project: string;
  /** The resource's alias in the project, registered when missing. */
  alias: string;
  /** The kind of a newly registered resource. */
  kind: string;
  include: string[];
  exclude: string[];
  maxFileBytes: number;
  /** Delete documents this folder put there before and no longer has. */
  prune: boolean;
  /** Re-send every file, ignoring the state of earlier runs. */
  force: boolean;
  /** The state file; derive it from the URL and resource id when undefined. */
  statePath: (resourceId: string) => string;
  /** The server URL, recorded in the state so a state never applies to another server. */
  url: string;
  /** Documents per stream message (one server transaction). */
  batchDocs?: number;
  /** Content bytes per stream message. */
  batchBytes?: number;
  /** Messages per client stream; the state is saved after each stream the server confirmed. */
  batchesPerStream?: number;
  /** Stops the run gracefully: no file is read after it fires, and the stream in flight is ended and confirmed. */
  signal?: AbortSignal;
  /** Called after each confirmed stream (tests use it to interrupt at a known point). */
  onStreamConfirmed?: (filesConfirmed: number) => void;
  /**
   * Embeds the chunks on the client (`--embed-command`): each document is cut with the server's own chunker
   * and sent with its chunks and their vectors. Without it the server chunks, and embeds the chunks when it has an
   * embedder (ACMS_EMBED_MODEL_DIR or ACMS_EMBEDDINGS_URL); else it stores no vectors.
   */
  embed?: IngestEmbedding;
}

/** Client-side chunking and embedding for an ingest. */
export interface IngestEmbedding {
  embedder: Embedder;
  /** Chunk texts per call of the embedder. */
  batchSize: number;
  /**
   * Recorded with each file's content hash, so a file sent before without these embeddings (or with another
   * command's) counts as changed and is sent again.
   */
  stateTag: string;
}

/** What an ingest did, for the summary line and `--json`. */
export interface IngestSummary {
  project: string;
  alias: string;
  resourceId: string;
  createdProject: boolean;
  createdResource: boolean;
  filesFound: number;
  filesSent: number;
  filesUnchanged: number;
  skippedBinary: number;
  skippedEmpty: number;
  skippedTooLarge: number;
  skippedBadName: number;
  skippedUnreadable: number;
  symlinksNotFollowed: number;
  /** Files the server refused (e.g. a field limit), each with its reason; the rest of their batch is kept. */
  rejected: { path: string; reason: string }[];
  documentsUpserted: number;
  chunksIndexed: number;
  documentsDeleted: number;
  streams: number;
  indexGeneration: string;
  seconds: number;
  statePath: string;
  interrupted: boolean;
}

type DocumentInit = { path: string; content: string; chunks?: { text: string; embedding: number[] }[] };
type UpsertInit = MessageInitShape<typeof UpsertDocumentsRequestSchema>;

/**
 * A refusal because the embeddings have the wrong dimension holds for every document alike: the run stops
 * with one line naming both dimensions instead of refusing each file in turn.
 */
function throwIfDimensionRefused(err: ConnectError): void {
  const said = [err.rawMessage, ...findFieldViolations(err).map((f) => f.description)].join("\n");
  const m = /must have (\d+) dimensions \(the deployment's\), got (\d+)/.exec(said);
  if (m)
    throw new CliUsageError(
      `--embed-command gives ${m[2]}-dimensional embeddings, the server's dimension is ${m[1]} (its ACMS_EMBEDDING_DIM)`,
    );
}

/** Finds the resource behind `alias` in `project`, creating the project and registering the resource when missing. */
export async function ensureResource(
  client: AcmsClient,
  project: string,
  alias: string,
  kind: string,
): Promise<{ resourceId: string; createdProject: boolean; createdResource: boolean }> {
  try {
    const { resourceId } = await client.registry.resolveAlias({ project, aliasOrId: alias });
    return { resourceId, createdProject: false, createdResource: false };
  } catch (err) {
    if (!(err instanceof ConnectError) || err.code !== Code.NotFound) throw err;
  }
  let createdProject = false;
  try {
    await client.registry.createProject({ name: project });
    createdProject = true;
  } catch (err) {
    if (!(err instanceof ConnectError) || err.code !== Code.AlreadyExists) throw err;
  }
  const { resource } = await client.registry.registerResource({ project, alias, kind });
  if (!resource) throw new Error("the server registered the resource but answered without it");
  return { resourceId: resource.id, createdProject, createdResource: true };
}

/**
 * Indexes a folder as one resource of a project: walks it (honouring .gitignore and the globs), skips binary
 * and oversize files with counts, and upserts the rest through the IndexService client stream, leaving
 * chunking to the server. After each stream the server confirmed, the paths and content hashes go to the
 * state file; a re-run skips unchanged files, so an interrupted run resends at most one stream's batches
 * (upserts are idempotent).
 */
export async function ingestDirectory(client: AcmsClient, opts: IngestOptions, progress: IngestProgress): Promise<IngestSummary> {
  const started = Date.now();
  const batchDocs = opts.batchDocs ?? 32;
  const batchBytes = opts.batchBytes ?? 4 * 1024 * 1024;
  const batchesPerStream = opts.batchesPerStream ?? 4;

  const walk = await walkFiles(opts.dir, { include: opts.include, exclude: opts.exclude, maxFileBytes: opts.maxFileBytes });
  const { resourceId, createdProject, createdResource } = await ensureResource(client, opts.project, opts.alias, opts.kind);
  const statePath = opts.statePath(resourceId);
  const state: IngestState = opts.force
    ? { version: 1, url: opts.url, resourceId, files: {} }
    : loadIngestState(statePath, opts.url, resourceId);

  const summary: IngestSummary = {
    project: opts.project,
    alias: opts.alias,
    resourceId,
    createdProject,
    createdResource,
    filesFound: walk.files.length + walk.tooLarge.length,
    filesSent: 0,
    filesUnchanged: 0,
    skippedBinary: 0,
    skippedEmpty: 0,
    skippedTooLarge: walk.tooLarge.length,
    skippedBadName: walk.badNames.length,
    skippedUnreadable: walk.unreadable.length,
    symlinksNotFollowed: walk.symlinks,
    rejected: [],
    documentsUpserted: 0,
    chunksIndexed: 0,
    documentsDeleted: 0,
    streams: 0,
    indexGeneration: "",
    seconds: 0,
    statePath,
    interrupted: false,
  };

  progress.start(walk.files.length);
  let processed = 0;
  let next = 0;

  /** The next file to send, skipping (and counting) unchanged, binary and unreadable ones. */
  async function nextDocument(): Promise<{ doc: DocumentInit; hash: string; bytes: number } | undefined> {
    while (next < walk.files.length) {
      if (opts.signal?.aborted) return undefined;
      const file: WalkedFile = walk.files[next++];
      processed++;
      progress.update(processed, summary.chunksIndexed);
      let bytes: Buffer;
      try {
        bytes = await readFile(file.absolutePath);
      } catch {
        summary.skippedUnreadable++;
        continue;
      }
      if (bytes.length > opts.maxFileBytes) {
        summary.skippedTooLarge++;
        continue;
      }
      const hash = opts.embed ? `${contentHash(bytes)}+${opts.embed.stateTag}` : contentHash(bytes);
      if (state.files[file.path] === hash) {
        summary.filesUnchanged++;
        continue;
      }
      const content = decodeText(bytes);
      if (content === undefined) {
        summary.skippedBinary++;
        continue;
      }
      if (content.trim().length === 0) {
        summary.skippedEmpty++;
        continue;
      }
      return { doc: { path: file.path, content }, hash, bytes: bytes.length };
    }
    return undefined;
  }

  function count(res: UpsertDocumentsResponse): void {
    summary.documentsUpserted += res.documentsUpserted;
    summary.chunksIndexed += res.chunksIndexed;
    summary.indexGeneration = res.indexGeneration.toString();
  }
  async function* single(doc: DocumentInit): AsyncGenerator<UpsertInit> {
    yield { resourceId, documents: [doc] };
  }

  /** Cuts each document with the server's chunker and attaches one embedding per chunk from the embedder. */
  async function embedDocuments(documents: DocumentInit[], embed: IngestEmbedding): Promise<void> {
    const { chunkText } = await import("../domain/chunking.js");
    const texts: string[] = [];
    const owners: DocumentInit[] = [];
    for (const doc of documents) {
      doc.chunks = [];
      for (const text of chunkText(doc.content)) {
        if (text.trim().length === 0) continue;
        texts.push(text);
        owners.push(doc);
      }
    }
    for (let i = 0; i < texts.length; i += embed.batchSize) {
      const batch = texts.slice(i, i + embed.batchSize);
      const vectors = await embed.embedder(batch);
      batch.forEach((text, j) => owners[i + j].chunks!.push({ text, embedding: vectors[j] }));
    }
  }

  let embedFailure: unknown;
  let pending = await nextDocument();
  while (pending && !opts.signal?.aborted) {
    const inStream: { doc: DocumentInit; hash: string }[] = [];
    async function* messages(): AsyncGenerator<UpsertInit> {
      for (let b = 0; b < batchesPerStream && pending; b++) {
        const documents: DocumentInit[] = [];
        let size = 0;
        while (pending && documents.length < batchDocs && (documents.length === 0 || size + pending.bytes <= batchBytes)) {
          documents.push(pending.doc);
          inStream.push({ doc: pending.doc, hash: pending.hash });
          size += pending.bytes;
          pending = await nextDocument();
        }
        if (opts.embed) {
          try {
            await embedDocuments(documents, opts.embed);
          } catch (err) {
            // End the stream here: the batches before are confirmed and recorded, this one is not sent.
            embedFailure = err;
            inStream.splice(inStream.length - documents.length, documents.length);
            pending = undefined;
            return;
          }
        }
        yield { resourceId, documents };
      }
    }
    // The stream ends early (and is confirmed) when the signal fires, so a graceful stop resends nothing.
    let confirmed = inStream;
    const stream = messages();
    try {
      count(await client.index.upsertDocuments(stream));
    } catch (err) {
      if (!(err instanceof ConnectError) || err.code !== Code.InvalidArgument) throw err;
      if (opts.embed) throwIfDimensionRefused(err);
      // Let the generator settle first, so `inStream` and `pending` no longer change under the retry.
      await stream.return(undefined);
      // One document the server refuses must not sink the run: resend the stream's documents one by one
      // (upserts are idempotent) and report the refused ones.
      confirmed = [];
      for (const f of inStream) {
        try {
          count(await client.index.upsertDocuments(single(f.doc)));
          confirmed.push(f);
        } catch (one) {
          if (!(one instanceof ConnectError) || one.code !== Code.InvalidArgument) throw one;
          summary.rejected.push({ path: f.doc.path, reason: one.rawMessage.replace(/documents\[0\]\./g, "") });
        }
      }
    }
    for (const f of confirmed) state.files[f.doc.path] = f.hash;
    saveIngestState(statePath, state);
    summary.streams++;
    summary.filesSent += confirmed.length;
    progress.update(processed, summary.chunksIndexed);
    opts.onStreamConfirmed?.(summary.filesSent);
  }
  progress.update(processed, summary.chunksIndexed);
  progress.stop();
  if (embedFailure !== undefined) throw embedFailure;
  summary.interrupted = pending !== undefined || (opts.signal?.aborted === true && next < walk.files.length);

  if (opts.prune && !summary.interrupted) {
    const present = new Set(walk.files.map((f) => f.path));
    for (const f of walk.tooLarge) present.add(f.path);
    const gone = Object.keys(state.files)
      .filter((p) => !present.has(p))
      .sort();
    for (let i = 0; i < gone.length; i += 500) {
      const paths = gone.slice(i, i + 500);
      const res = await client.index.deleteDocuments({ resourceId, paths });
      summary.documentsDeleted += res.count;
      summary.indexGeneration = res.indexGeneration.toString();
      for (const p of paths) delete state.files[p];
      saveIngestState(statePath, state);
    }
  }
  summary.seconds = (Date.now() - started) / 1000;
  return summary;
}
