// The client loaded with `require()` (the package's CommonJS build), as on Node before 20.19, where an ES
// module cannot be required. Usage: node call-server.cjs <grpc|connect>
const client = require("@acms/client");
const { ScopeViolationSchema } = require("@acms/client/gen/acms/v1/errors_pb");
const { HealthCheckResponse_ServingStatus } = require("@acms/client/gen/grpc/health/v1/health_pb");
const { callServer } = require("./call-server-scenario.cjs");

callServer({ ...client, ScopeViolationSchema, HealthCheckResponse_ServingStatus }, require.resolve("@acms/client"), process.argv[2]).catch(
  (err) => {
    console.error(err);
    process.exitCode = 1;
  },
);
