// A page on another origin, bundled from the installed @acms/client/web. Its query string says where the
// server is (api), the key and the project; it leaves its answers in window.acmsResults, one per protocol.
import { Code, createAcmsWebClient, findScopeViolation } from "@acms/client/web";

const params = new URLSearchParams(location.search);
const OUTSIDE = "01ARZ3NDEKTSV4RRFFQ69G5FAV";

async function run(protocol) {
  const acms = createAcmsWebClient({ baseUrl: params.get("api"), apiKey: params.get("key"), protocol });
  try {
    const { scope } = await acms.scope.resolveScope({ projects: [params.get("project")] });
    const scoped = acms.withScope(scope.scopeId);
    const { results } = await scoped.text.search({ query: "onboarding checklist", maxResults: 3 });
    let streamedScopeId;
    for await (const _ of scoped.text.searchStream(
      { query: "deploys", maxResults: 3 },
      { onHeader: (h) => (streamedScopeId = h.get("acms-scope-id")) },
    ));
    const refused = await scoped.scope.validateResourceScope({ requestedResourceIds: [OUTSIDE] }).then(
      () => undefined,
      (e) => e,
    );
    const violation = findScopeViolation(refused);
    return {
      protocol,
      paths: results.map((r) => r.path),
      streamedScopeIdMatches: streamedScopeId === scope.scopeId,
      refusedCode: refused && Code[refused.code],
      violation: violation && { resourceIds: violation.resourceIds, scopeProjectNames: violation.scopeProjectNames },
    };
  } catch (err) {
    return { protocol, error: { code: Code[err.code], message: String(err.message) } };
  }
}

window.acmsResults = Promise.all([run("connect"), run("grpc-web")]);
