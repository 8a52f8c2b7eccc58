// Type-checked against the installed package's declarations: the types a TypeScript user gets.
import { acmsUrlFromEnv, createAcmsClient, findScopeViolation, type AcmsClient, type ScopeViolation } from "@acms/client";
import { createAcmsWebClient } from "@acms/client/web";
import type { ResolveScopeResponse } from "@acms/client/gen/acms/v1/scope_pb";

export async function firstPath(acms: AcmsClient): Promise<string | undefined> {
  const res: ResolveScopeResponse = await acms.scope.resolveScope({ projects: ["local/acms"] });
  const { results } = await acms.withScope(res.scope?.scopeId).text.search({ query: "x", maxResults: 1 });
  return results[0]?.path;
}

export function offenders(err: unknown): string[] {
  const v: ScopeViolation | undefined = findScopeViolation(err);
  return v?.resourceIds ?? [];
}

export const clients = [
  createAcmsClient({ baseUrl: acmsUrlFromEnv({ ACMS_PORT: "1" }), protocol: "grpc" }),
  createAcmsWebClient({ baseUrl: "http://127.0.0.1:1", protocol: "grpc-web" }),
];
