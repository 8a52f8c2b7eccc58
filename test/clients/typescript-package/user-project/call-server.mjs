// The client loaded with `import` (the package's ES build). Usage: node call-server.mjs <grpc|connect>
import * as client from "@acms/client";
import { ScopeViolationSchema } from "@acms/client/gen/acms/v1/errors_pb";
import { HealthCheckResponse_ServingStatus } from "@acms/client/gen/grpc/health/v1/health_pb";
import { callServer } from "./call-server-scenario.cjs";

await callServer(
  { ...client, ScopeViolationSchema, HealthCheckResponse_ServingStatus },
  import.meta.resolve("@acms/client"),
  process.argv[2],
);
