/**
 * MCP benchmark: the same text search (same query, same scope, 20 results) as an MCP `search` tool call on
 * POST /mcp and as a gRPC `Search`, on one server, over a corpus of BENCH_SCALE x 20,000 one-chunk documents,
 * measured in the same run, rounds interleaved. Two MCP clients: the official TypeScript SDK client over
 * Streamable HTTP (what an agent runs: it validates each answer against the tool's output schema) and a bare
 * JSON-RPC POST (the endpoint's own cost). The ratio is gRPC's median latency over MCP's: the share of gRPC's
 * speed the MCP path keeps (goal >= 0.8x). The MCP call runs the Search RPC in process through the same
 * interceptors, so the difference is the MCP layer: JSON-RPC parsing, a fresh stateless server per request,
 * zod checks of the arguments and the answer, and JSON out.
 */
import { RegistryService } from "../gen/acms/v1/registry_pb.js";
import { IndexService } from "../gen/acms/v1/index_pb.js";
import { ScopeService } from "../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../gen/acms/v1/text_pb.js";
import { prng } from "../test/support/prng.js";
import { startTestServer } from "../test/support/test-server.js";
import { connectMcp } from "../test/mcp/mcp-client.js";
import { formatMs, median } from "./bench-timing.js";
import { syntheticWord, zipfRank } from "./synthetic-corpus.js";

const CHUNKS = 20_000;
const WORDS = 40;
const VOCABULARY = 5000;
const BATCH = 500;
const ROUNDS = 9;
const CALLS_PER_ROUND = 40;
const TOP = 20;

export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const chunks = Math.max(200, Math.round(CHUNKS * scale));
  const t = await startTestServer();
  try {
    const rand = prng(25);
    await t.client(RegistryService, "admin").createProject({ name: "bench/mcp" });
    const resource = (await t.client(RegistryService, "admin").registerResource({ project: "bench/mcp", alias: "corpus", kind: "docs" }))
      .resource!.id;
    async function* messages() {
      for (let from = 0; from < chunks; from += BATCH) {
        const documents = [];
        for (let d = from; d < Math.min(chunks, from + BATCH); d++) {
          const words: string[] = [];
          for (let w = 0; w < WORDS; w++) words.push(syntheticWord(zipfRank(rand, VOCABULARY)));
          documents.push({ path: `docs/${d}.md`, content: words.join(" ") });
        }
        yield { resourceId: resource, documents };
      }
    }
    await t.client(IndexService, "admin").upsertDocuments(messages());
    const scope = (await t.client(ScopeService, "admin").resolveScope({ projects: ["bench/mcp"] })).scope!.scopeId;
    // Two words of middling frequency: enough hits for a full page of results.
    const query = `${syntheticWord(40)} ${syntheticWord(90)}`;

    const grpc = t.client(TextBackendService, "admin", scope, "grpc");
    const sdk = await connectMcp(t.server.url, t.keys.admin, scope);
    const post = () =>
      fetch(`${t.server.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${t.keys.admin}`,
          "acms-scope": scope,
          "mcp-protocol-version": "2025-06-18",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "search", arguments: { query, mode: "text", top_k: TOP } },
        }),
      }).then((r) => r.json());

    // The same answer both ways, before timing anything.
    const viaGrpc = (await grpc.search({ query, maxResults: TOP })).results.map((r) => r.ukoUri);
    const viaMcp = (
      (await sdk.callTool({ name: "search", arguments: { query, mode: "text", top_k: TOP } })).structuredContent as {
        results: { uko_uri: string }[];
      }
    ).results.map((r) => r.uko_uri);
    if (JSON.stringify(viaGrpc) !== JSON.stringify(viaMcp) || viaGrpc.length === 0)
      throw new Error("MCP search and gRPC Search answered differently");

    const samples = { grpc: [] as number[], sdk: [] as number[], post: [] as number[] };
    const time = async (into: number[], fn: () => Promise<unknown>) => {
      const t0 = performance.now();
      await fn();
      into.push(performance.now() - t0);
    };
    for (let round = 0; round < ROUNDS + 1; round++) {
      // Round 0 warms every path (JIT, connections) and is not kept.
      const sink = round === 0 ? { grpc: [], sdk: [], post: [] } : samples;
      for (let i = 0; i < CALLS_PER_ROUND; i++) {
        await time(sink.grpc, () => grpc.search({ query, maxResults: TOP }));
        await time(sink.sdk, () => sdk.callTool({ name: "search", arguments: { query, mode: "text", top_k: TOP } }));
        await time(sink.post, post);
      }
    }
    await sdk.close();
    const g = median(samples.grpc);
    const s = median(samples.sdk);
    const p = median(samples.post);
    const row = (name: string, ms: number) =>
      `  ${name.padEnd(44)} ${formatMs(ms, 0).padStart(10)}   ${(g / ms).toFixed(2)}x of gRPC's speed\n`;
    process.stdout.write(`text search, ${TOP} results, ${chunks} chunks, median of ${ROUNDS * CALLS_PER_ROUND} calls each (interleaved)\n`);
    process.stdout.write(`  ${"gRPC Search (Connect grpc transport, HTTP/2)".padEnd(44)} ${formatMs(g, 0).padStart(10)}   baseline\n`);
    process.stdout.write(row("MCP search, official TS SDK client", s));
    process.stdout.write(row("MCP search, bare JSON-RPC POST", p));
    process.stdout.write(`  goal: MCP >= 0.80x of gRPC's speed (SDK client): ${g / s >= 0.8 ? "met" : "NOT met"}\n`);
  } finally {
    await t.close(true);
  }
}
