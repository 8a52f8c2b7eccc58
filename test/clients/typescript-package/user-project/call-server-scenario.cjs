// What an agent service does after `npm install @acms/client`, in plain Node with no TypeScript loader, written
// once for the two ways a program loads the package: call-server.mjs (import) and call-server.cjs (require)
// pass in what they loaded. Reads ACMS_URL (or ACMS_HOST/ACMS_PORT), ACMS_API_KEY, ACMS_PROJECT; prints one JSON line.
exports.callServer = async function callServer(lib, entry, protocol) {
  const {
    Code,
    acmsUrlFromEnv,
    createAcmsClient,
    findBadRequest,
    findScopeViolation,
    ScopeViolationSchema,
    HealthCheckResponse_ServingStatus,
  } = lib;
  const acms = createAcmsClient({ baseUrl: acmsUrlFromEnv(), apiKey: process.env.ACMS_API_KEY, protocol });
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
        entry,
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
};
