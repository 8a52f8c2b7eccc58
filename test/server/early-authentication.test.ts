/**
 * The transport's early key check (createBodyGate) is the access rule itself, run before the body: it lets
 * through exactly what `authenticate` accepts, records the principal or the refusal for the access
 * interceptor, and never judges a public service. principalOf is what the interceptor then uses.
 */
import { createContextValues } from "@connectrpc/connect";
import { UnauthenticatedError } from "../../src/domain/errors.js";
import { generateKey, hashKey, KeyRing } from "../../src/application/access/key-ring.js";
import { authenticate } from "../../src/server/access/access-check.js";
import { createBodyGate, earlyAuthenticationKey, principalOf } from "../../src/server/access/early-authentication.js";

const key = generateKey();
const keys = new KeyRing([{ name: "agent-a", key_sha256: hashKey(key), projects: ["local/*"], write: false }]);
const gate = createBodyGate(keys, new Set(["grpc.health.v1.Health"]));

const headers: Array<string | null> = [
  null,
  "",
  "Bearer",
  `Basic ${key}`,
  `Bearer ${key}x`,
  `Bearer ${key}`,
  `bearer   ${key}  `,
  `Bearer ${key} extra`,
];

it.each(headers.map((h) => [h]))("reads the body exactly when authenticate accepts header #%#, and hands its answer on", (header) => {
  const values = createContextValues();
  const accepted = (() => {
    try {
      return authenticate(keys, header).name;
    } catch (err) {
      expect(err).toBeInstanceOf(UnauthenticatedError);
      return undefined;
    }
  })();
  expect(gate("acms.v1.TextBackendService", header, values)).toBe(accepted !== undefined);
  if (accepted !== undefined) {
    expect(principalOf(keys, values, null).name).toBe(accepted);
  } else {
    expect(() => principalOf(keys, values, `Bearer ${key}`)).toThrow(UnauthenticatedError);
  }
});

it("lets a public service through without recording anything", () => {
  const values = createContextValues();
  expect(gate("grpc.health.v1.Health", null, values)).toBe(true);
  expect(values.get(earlyAuthenticationKey)).toBeUndefined();
});

it("without an early answer (in-memory transports), principalOf authenticates the header itself", () => {
  expect(principalOf(keys, createContextValues(), `Bearer ${key}`).name).toBe("agent-a");
  expect(() => principalOf(keys, createContextValues(), "Bearer nope")).toThrow(UnauthenticatedError);
});
