// Must NOT type-check: proves the declarations are really consulted (a misspelt method and a wrong field type).
import { createAcmsClient } from "@acms/client";

export async function wrong(): Promise<void> {
  const acms = createAcmsClient({ baseUrl: "http://127.0.0.1:1" });
  await acms.scope.resolveScopes({ projects: ["local/acms"] });
  await acms.text.search({ query: 42 });
}
