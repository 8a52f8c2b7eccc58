/**
 * The soak bench's attacker, run as a child process (`tsx bench/soak-attacker.ts '<json args>'`) so its
 * client work (building, encoding and decoding messages) competes with the server for the CPU like a
 * real client's, instead of running on the server's own event loop. Protocol on its standard streams:
 * it writes `ready` once connected, `round` after each completed upload (the upload attack), and on
 * `stop` (standard input) or end of input it finishes the call in flight and writes one JSON line of
 * `[outcome, count]` pairs (the codes its calls ended with) before it exits.
 */
import net from "node:net";
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { GraphBackendService } from "../gen/acms/v1/graph_pb.js";
import { IndexService } from "../gen/acms/v1/index_pb.js";
import { RegistryService } from "../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../gen/acms/v1/text_pb.js";

/** The attacks the soak bench runs, by name. */
export const SOAK_ATTACKS = ["sparql-bomb", "globs", "idle-connections", "slow-sparql", "quota", "upload", "upload-vectors"] as const;
export type SoakAttack = (typeof SOAK_ATTACKS)[number];

/** What the parent tells the attacker process (its one argument, as JSON). */
export interface SoakAttackerArgs {
  attack: SoakAttack;
  url: string;
  port: number;
  key: string;
  scope: string;
  project: string;
  resource: string;
  /** Documents per UpsertDocuments message of the upload attacks. */
  uploadDocs: number;
  /** The deployment's vector dimension (the upload-vectors attack sends one vector per document). */
  embeddingDim: number;
}

const bearer =
  (key: string | undefined, scopeId?: string): Interceptor =>
  (next) =>
  async (req) => {
    if (key) req.header.set("authorization", `Bearer ${key}`);
    if (scopeId) req.header.set("acms-scope", scopeId);
    return next(req);
  };

async function main(): Promise<void> {
  const a = JSON.parse(process.argv[2]) as SoakAttackerArgs;
  const sessions: Http2SessionManager[] = [];
  const client = <S extends DescService>(service: S, scope?: string): Client<S> => {
    const sessionManager = new Http2SessionManager(a.url);
    sessions.push(sessionManager);
    return createClient(service, createGrpcTransport({ baseUrl: a.url, sessionManager, interceptors: [bearer(a.key, scope)] }));
  };
  const notes = new Map<string, number>();
  const note = (what: string) => notes.set(what, (notes.get(what) ?? 0) + 1);
  const stop = new AbortController();
  process.stdin.on("data", (d: Buffer) => {
    if (d.toString().includes("stop")) stop.abort();
  });
  process.stdin.on("end", () => stop.abort());

  /** Repeats `call` on `parallel` loops until stopped, counting the codes it ends with. */
  const hammer = (parallel: number, call: () => Promise<unknown>) =>
    Promise.all(
      Array.from({ length: parallel }, async () => {
        while (!stop.signal.aborted) {
          try {
            await call();
            note("OK");
          } catch (e) {
            note(Code[ConnectError.from(e).code]);
          }
        }
      }),
    );

  const graph = client(GraphBackendService, a.scope);
  const scopes = client(ScopeService);
  const attacks: Record<SoakAttack, () => Promise<unknown>> = {
    "sparql-bomb": () => hammer(2, () => graph.sparqlQuery({ query: `SELECT * WHERE { ${"€".repeat(64 * 1024 - 64)} }` })),
    globs: async () => {
      const { scope } = await scopes.resolveScope({
        projects: [a.project],
        includePaths: ["{a,aa}".repeat(30) + "b", "{a,aa}".repeat(30) + "*c"],
      });
      const text = client(TextBackendService, scope!.scopeId);
      await hammer(2, async () => {
        await scopes
          .resolveScope({ projects: [a.project], includePaths: ["+(a*)"] })
          .catch((e: unknown) => note(`extglob:${Code[ConnectError.from(e).code]}`));
        await text.search({ query: "soak" });
      });
    },
    "idle-connections": async () => {
      const sockets: net.Socket[] = [];
      for (let i = 0; i < 200 && !stop.signal.aborted; i++) {
        const s = net.connect({ port: a.port, host: "127.0.0.1", localAddress: "127.0.0.2" });
        s.on("error", () => undefined);
        s.on("data", () => undefined);
        s.on("close", () => {
          if (!stop.signal.aborted) note("closed by server");
        });
        s.on("connect", () => s.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
        sockets.push(s);
      }
      await new Promise((r) => stop.signal.addEventListener("abort", r, { once: true }));
      for (const s of sockets) s.destroy();
    },
    "slow-sparql": () =>
      hammer(8, () =>
        graph.sparqlQuery({
          query: `SELECT (COUNT(*) AS ?n) WHERE { ${Array.from({ length: 12 }, (_, i) => `?s${i} ?p${i} ?o${i} .`).join(" ")} }`,
        }),
      ),
    quota: () => {
      const registry = client(RegistryService);
      return hammer(50, () => registry.listProjects({}));
    },
    upload: () => upload(false),
    "upload-vectors": () => upload(true),
  };
  /** Uploads `uploadDocs` documents in one message, round after round (each round replaces the last); each with a vector when `vectors`. */
  async function upload(vectors: boolean): Promise<void> {
    const index = client(IndexService);
    for (let round = 0; !stop.signal.aborted; round++) {
      const documents = Array.from({ length: a.uploadDocs }, (_, i) => {
        const content = `tiny uploaded document ${i} round ${round}`;
        if (!vectors) return { path: `upload/${i}.md`, content };
        const embedding = Array.from({ length: a.embeddingDim }, (_, j) => Math.sin(i * 0.37 + j * 1.3 + round));
        return { path: `upload/${i}.md`, content, chunks: [{ text: content, embedding }] };
      });
      try {
        await index.upsertDocuments(
          (async function* () {
            yield { resourceId: a.resource, documents };
          })(),
        );
        note("OK");
      } catch (e) {
        note(Code[ConnectError.from(e).code]);
      }
      process.stdout.write("round\n");
    }
  }
  process.stdout.write("ready\n");
  await attacks[a.attack]();
  process.stdout.write(`${JSON.stringify([...notes])}\n`);
  for (const s of sessions) s.abort();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`soak attacker: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
