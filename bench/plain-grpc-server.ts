/**
 * The gRPC benchmark's baseline: a plain @grpc/grpc-js server with no framework, no auth, no scope and
 * no checks, answering TextBackendService.Search with one FTS5 statement over the service's own SQLite
 * file (the same MATCH expression the service builds for the scope, ranked by bm25 and hydrated in the
 * same statement), and grpc.health.v1.Health.Check with a constant. It is what a hand-written server
 * would cost, so the service's figures are printed as ratios to it.
 */
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import Database from "better-sqlite3";
import { SearchRequestSchema, SearchResponseSchema } from "../gen/acms/v1/text_pb.js";
import { HealthCheckResponse_ServingStatus, HealthCheckResponseSchema } from "../gen/grpc/health/v1/health_pb.js";
import { normaliseBm25 } from "../src/domain/bm25-normalise.js";
import { scopedMatch } from "../src/adapters/sqlite/fts5-text-backend.js";

interface PlainRow {
  resource_id: string;
  path: string;
  chunk_index: number;
  text: string;
  metadata: string;
  r: number;
}

/** The plain statement: bare FTS5 ranking of the scope's MATCH, joined to the chunk text and document metadata. */
export const PLAIN_SEARCH_SQL = `SELECT c.resource_id, c.path, c.chunk_index, c.text, d.metadata, bm25(chunks_fts, 1.0, 0.0) AS r
  FROM chunks_fts JOIN chunks c ON c.chunk_key = chunks_fts.rowid JOIN documents d ON d.doc_key = c.doc_key
  WHERE chunks_fts MATCH ? AND d.superseded_at IS NULL AND d.staged IS NULL
  ORDER BY r LIMIT ?`;

/** Starts the plain server on a free loopback port over `dbPath`, searching the fixed `resourceIds`. */
export async function startPlainServer(dbPath: string, resourceIds: readonly string[]): Promise<{ port: number; close(): void }> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  const search = db.prepare<[string, number], PlainRow>(PLAIN_SEARCH_SQL);
  const healthAnswer = Buffer.from(
    toBinary(HealthCheckResponseSchema, create(HealthCheckResponseSchema, { status: HealthCheckResponse_ServingStatus.SERVING })),
  );
  const server = new grpc.Server();
  const raw = { serialize: (b: Buffer) => b, deserialize: (b: Buffer) => b };
  server.addService(
    {
      Search: {
        path: "/acms.v1.TextBackendService/Search",
        requestStream: false,
        responseStream: false,
        requestSerialize: raw.serialize,
        requestDeserialize: raw.deserialize,
        responseSerialize: raw.serialize,
        responseDeserialize: raw.deserialize,
      },
      Check: {
        path: "/grpc.health.v1.Health/Check",
        requestStream: false,
        responseStream: false,
        requestSerialize: raw.serialize,
        requestDeserialize: raw.deserialize,
        responseSerialize: raw.serialize,
        responseDeserialize: raw.deserialize,
      },
    },
    {
      Search: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        const req = fromBinary(SearchRequestSchema, call.request);
        const rows = search.all(scopedMatch(req.query, resourceIds) ?? '""', req.maxResults ?? 20);
        const res = create(SearchResponseSchema, {
          results: rows.map((r) => ({
            ukoUri: `uko://${r.resource_id}/${r.path}#${r.chunk_index}`,
            resourceId: r.resource_id,
            path: r.path,
            content: r.text,
            score: normaliseBm25(-r.r),
            metadata: JSON.parse(r.metadata) as Record<string, string>,
          })),
          exhaustive: rows.length < (req.maxResults ?? 20),
        });
        callback(null, Buffer.from(toBinary(SearchResponseSchema, res)));
      },
      Check: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => callback(null, healthAnswer),
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    port,
    close() {
      server.forceShutdown();
      db.close();
    },
  };
}
