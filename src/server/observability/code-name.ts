import { Code } from "@connectrpc/connect";

const NAMES: string[] = [];
for (const [name, value] of Object.entries(Code)) {
  if (typeof value === "number") NAMES[value] = name.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}
NAMES[Code.Canceled] = "canceled";

/** gRPC's OK (0), which Connect's Code enum leaves out: a call that finished without an error. */
export const OK = 0 as Code;

/** The gRPC name of `code` in snake case ("ok", "permission_denied"), as metric labels and log lines show it. */
export function codeName(code: Code): string {
  return code === OK ? "ok" : NAMES[code];
}

/** Every code with its name, indexed by code (0 is "ok"), for making one metric child per code up front. */
export const CODE_NAMES: readonly string[] = ["ok", ...NAMES.slice(1)];
