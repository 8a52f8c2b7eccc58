/**
 * Using the ACMS TypeScript client: resolve a scope, search it three ways, fetch the best hits in order,
 * keep a note in the hot tier, and see an out-of-scope request refused with the offending id.
 *
 *   ACMS_API_KEY=... npx tsx examples/typescript-client.ts "how do I ingest a folder"
 *
 * Environment: ACMS_URL, else ACMS_HOST and ACMS_PORT as the server and the CLI read them (default
 * http://127.0.0.1:50051); ACMS_API_KEY; ACMS_PROJECT (default local/acms).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { acmsUrlFromEnv, createAcmsClient, findScopeViolation } from "../src/index.js";

async function main(): Promise<void> {
  const project = process.env.ACMS_PROJECT ?? "local/acms";
  const question = process.argv.slice(2).join(" ") || "how do I resolve a scope";
  const acms = createAcmsClient({ baseUrl: acmsUrlFromEnv(), apiKey: process.env.ACMS_API_KEY });
  try {
    const { scope } = await acms.scope.resolveScope({ projects: [project] });
    console.log(`scope ${scope!.scopeId}: ${scope!.resourceIds.length} resources in ${scope!.projectNames.join(", ")}`);
    const scoped = acms.withScope(scope!.scopeId);

    const text = await scoped.text.search({ query: question, maxResults: 3 });
    console.log(`text search: ${text.results.map((r) => r.path).join(", ") || "nothing"}`);

    let uris = text.results.map((r) => r.ukoUri);
    try {
      const hybrid = await scoped.rag.hybridSearch({ query: question, topK: 3 });
      uris = hybrid.results.map((r) => r.ukoUri);
      console.log(`hybrid search: ${hybrid.results.map((r) => `${r.path} (${r.score.toFixed(4)})`).join(", ") || "nothing"}`);
      const fetched = await scoped.rag.fetchContent({ ukoUris: uris });
      console.log(`fetched ${fetched.items.length} items in order: ${fetched.items.every((it, i) => it.ukoUri === uris[i])}`);
    } catch (err) {
      if (!(err instanceof ConnectError) || err.code !== Code.Unimplemented) throw err;
      console.log("hybrid search: not served by this server");
    }

    const { fragment } = await scoped.tiers.storeFragment({
      fragment: { projectName: project, content: `Question: ${question}\nSources: ${uris.join(" ")}`, metadata: { kind: "plan" } },
    });
    console.log(`stored note ${fragment!.fragmentId} (${fragment!.tokenCount} tokens)`);

    try {
      await scoped.scope.validateResourceScope({ requestedResourceIds: ["01ARZ3NDEKTSV4RRFFQ69G5FAV"] });
    } catch (err) {
      const violation = findScopeViolation(err);
      if (!violation) throw err;
      console.log(`refused out of scope: ${violation.resourceIds.join(", ")} (scope projects ${violation.scopeProjectNames.join(", ")})`);
    }
  } finally {
    acms.close();
  }
}

main().catch((err: unknown) => {
  console.error(`example: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
