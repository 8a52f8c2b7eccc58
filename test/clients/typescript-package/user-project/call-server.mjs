// Plain Node, no TypeScript loader: what an agent service does after `npm install @acms/client`.
// Usage: node call-server.mjs <grpc|connect>, with ACMS_URL, ACMS_API_KEY, ACMS_PROJECT set. Prints one JSON line.
import { Code, createAcmsClient, findBadRequest, findScopeViolation } from "@acms/client";
import { ScopeViolationSchema } from "@acms/client/gen/acms/v1/errors_pb";
import { HealthCheckResponse_ServingStatus } from "@acms/client/gen/grpc/health/v1/health_pb";

const protocol = process.argv[2];
const acms = createAcmsClient({ baseUrl: process.env.ACMS_URL, apiKey: process.env.ACMS_API_KEY, protocol });
const refusal = (promise) =>
  promise.then(
    () => undefined,
    (err) => err,
  );
try {
  const health = await acms.health.check({ service: "" });
  const { scope } = await acms.scope.resolveScope({ projects: [process.env.ACMS_PROJECT] });
  const scoped = acms.withScope(scope.scopeId);
  const { results } = await scoped.text.search({ query: "onboarding checklist", maxResults: 3 });
  const refused = await refusal(scoped.scope.validateResourceScope({ requestedResourceIds: ["01ARZ3NDEKTSV4RRFFQ69G5FAV"] }));
  const violation = findScopeViolation(refused);
  const bad = findBadRequest(await refusal(scoped.text.search({ query: "" })));
  console.log(
    JSON.stringify({
      protocol,
      serving: health.status === HealthCheckResponse_ServingStatus.SERVING,
      scopeId: scope.scopeId,
      paths: results.map((r) => r.path),
      refusedCode: Code[refused.code],
      violation: violation && {
        typeName: violation.$typeName === ScopeViolationSchema.typeName ? violation.$typeName : "mismatch",
        resourceIds: violation.resourceIds,
        scopeProjectNames: violation.scopeProjectNames,
      },
      badFields: bad?.fieldViolations.map((v) => v.field),
    }),
  );
} finally {
  acms.close();
}
