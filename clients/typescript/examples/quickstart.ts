/**
 * The quickstart as a program: resolve a scope over one project, search it, read the best hit in full, and
 * see an out-of-scope request refused with the offending id. In a project that installed @acms/client:
 *
 *   ACMS_API_KEY=... npx tsx quickstart.ts "how do I deploy"
 *
 * Environment: ACMS_URL, else ACMS_HOST and ACMS_PORT as the server and the CLI read them (default
 * http://127.0.0.1:50051); ACMS_API_KEY; ACMS_PROJECT (default local/acms).
 */
import { acmsUrlFromEnv, createAcmsClient, findScopeViolation } from "@acms/client";

const project = process.env.ACMS_PROJECT ?? "local/acms";
const question = process.argv.slice(2).join(" ") || "how do I resolve a scope";
const acms = createAcmsClient({ baseUrl: acmsUrlFromEnv(), apiKey: process.env.ACMS_API_KEY });
try {
  const { scope } = await acms.scope.resolveScope({ projects: [project] });
  if (!scope) throw new Error("the server answered no scope");
  console.log(`scope ${scope.scopeId}: ${scope.resourceIds.length} resources in ${scope.projectNames.join(", ")}`);
  const scoped = acms.withScope(scope.scopeId);

  const { results } = await scoped.text.search({ query: question, maxResults: 3 });
  console.log(`text search: ${results.map((r) => `${r.path} (${r.score.toFixed(3)})`).join(", ") || "nothing"}`);

  const best = results[0];
  if (best) {
    const { items } = await scoped.rag.fetchContent({ ukoUris: [best.ukoUri] });
    console.log(`best hit ${best.ukoUri}: ${items[0]?.content.length ?? 0} characters`);
  }

  const outside = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
  const refused = await scoped.scope.validateResourceScope({ requestedResourceIds: [outside] }).then(
    () => undefined,
    (err: unknown) => err,
  );
  const violation = findScopeViolation(refused);
  if (!violation) throw refused ?? new Error(`${outside} was not refused`);
  console.log(`refused out of scope: ${violation.resourceIds.join(", ")} (scope projects ${violation.scopeProjectNames.join(", ")})`);
} catch (err) {
  console.error(`quickstart: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  acms.close();
}
