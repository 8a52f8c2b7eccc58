// A CommonJS module of a TypeScript user (node16/nodenext resolution): its imports take the package's
// `require` condition, so they must find the CommonJS declarations (an ES module's would be error TS1479).
import { acmsUrlFromEnv, createAcmsClient, findBadRequest, type AcmsClient } from "@acms/client";
import { createAcmsWebClient } from "@acms/client/web";
import { ScopeViolationSchema } from "@acms/client/gen/acms/v1/errors_pb";

export async function paths(acms: AcmsClient, scopeId: string): Promise<string[]> {
  const { results } = await acms.withScope(scopeId).text.search({ query: "x" });
  return results.map((r) => r.path);
}

export const fields = (err: unknown): string[] => findBadRequest(err)?.fieldViolations.map((v) => v.field) ?? [];
export const typeName: string = ScopeViolationSchema.typeName;
export const clients: AcmsClient[] = [createAcmsClient({ baseUrl: acmsUrlFromEnv({}) }), createAcmsWebClient({ baseUrl: "http://127.0.0.1:1" })];
