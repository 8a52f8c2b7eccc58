// Loads every entry point of the installed package with require() and reports what it got, as one JSON line.
// esm-probe.js (an ES module) tells whether this Node can require() an ES module at all.
const probe = (() => {
  try {
    require("./esm-probe.js");
    return "required";
  } catch (err) {
    return err.code;
  }
})();
const client = require("@acms/client");
const web = require("@acms/client/web");
const { ScopeViolationSchema } = require("@acms/client/gen/acms/v1/errors_pb");
const refusal = new client.ConnectError("no", client.Code.PermissionDenied);
console.log(
  JSON.stringify({
    requireEsm: probe,
    resolved: ["@acms/client", "@acms/client/web", "@acms/client/gen/acms/v1/errors_pb"].map((name) => require.resolve(name)),
    createAcmsClient: typeof client.createAcmsClient,
    createAcmsWebClient: typeof web.createAcmsWebClient,
    url: client.acmsUrlFromEnv({ ACMS_PORT: "6000" }),
    typeName: ScopeViolationSchema.typeName,
    violation: client.findScopeViolation(refusal) ?? null,
    closed: (client.createAcmsClient({ baseUrl: "http://127.0.0.1:1" }).close(), true),
  }),
);
