import { create, createFileRegistry, setExtension, type DescMethodUnary, type DescService } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  MethodOptionsSchema,
  file_google_protobuf_descriptor,
} from "@bufbuild/protobuf/wkt";
import { Code, createRouterTransport } from "@connectrpc/connect";
import { access, Access, file_acms_v1_options } from "../../gen/acms/v1/options_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { PermissionDeniedError } from "../../src/domain/errors.js";
import type { RegistryStore } from "../../src/ports/registry-store.js";
import type { ScopeStore } from "../../src/ports/scope-store.js";
import { accessRuleOf } from "../../src/server/access/access-check.js";
import { createAccessInterceptor } from "../../src/server/access/access-interceptor.js";
import { generateKey, hashKey, KeyRing } from "../../src/application/access/key-ring.js";
import { failure } from "../support/call-failure.js";
import { authInterceptor } from "../support/test-server.js";

// A method without an (acms.v1.access) option is refused at run time, never served on a key alone.
// The services here are synthetic (built from descriptors), so the contract's protos stay as they are.

/** A service `acms.test.<name>` with one unary method `Ping`, whose options are `mode` (none when undefined). */
function syntheticService(name: string, mode?: Access): DescService {
  const options = create(MethodOptionsSchema);
  if (mode !== undefined) setExtension(options, access, mode);
  const file = create(FileDescriptorProtoSchema, {
    name: `acms/test/${name.toLowerCase()}.proto`,
    package: "acms.test",
    syntax: "proto3",
    dependency: ["acms/v1/options.proto"],
    messageType: [
      {
        name: "PingRequest",
        field: [
          { name: "note", number: 1, type: FieldDescriptorProto_Type.STRING, label: FieldDescriptorProto_Label.OPTIONAL, jsonName: "note" },
        ],
      },
      { name: "PingResponse" },
    ],
    service: [{ name, method: [{ name: "Ping", inputType: ".acms.test.PingRequest", outputType: ".acms.test.PingResponse", options }] }],
  });
  const known = new Map([
    ["acms/v1/options.proto", file_acms_v1_options],
    ["google/protobuf/descriptor.proto", file_google_protobuf_descriptor],
  ]);
  return createFileRegistry(file, (n) => known.get(n)).getService(`acms.test.${name}`)!;
}

/** The service's one method, as the unary method it is. */
function ping(svc: DescService): DescMethodUnary {
  const m = svc.methods[0];
  if (m.methodKind !== "unary") throw new Error("Ping is unary");
  return m as DescMethodUnary;
}

const key = generateKey();
const keys = new KeyRing([{ name: "admin", key_sha256: hashKey(key), projects: ["*/*"], write: true }]);
const noScopes: ScopeStore = {
  save: async () => true,
  get: async () => undefined,
  listByOwner: async () => ({ scopes: [] }),
  usageOf: async () => ({ scopes: 0, bytes: 0 }),
  close: async () => undefined,
};
const noRegistry = { linkRemovals: () => 0 } as unknown as RegistryStore;

describe("accessRuleOf", () => {
  test("a method without the option, or with ACCESS_UNSPECIFIED, is refused with PERMISSION_DENIED", () => {
    for (const svc of [syntheticService("Bare"), syntheticService("Unset", Access.UNSPECIFIED)]) {
      const method = svc.methods[0];
      expect(() => accessRuleOf(method, new Set())).toThrow(PermissionDeniedError);
      expect(() => accessRuleOf(method, new Set())).toThrow(`${svc.typeName}/Ping declares no access rule: refused`);
    }
  });

  test("an explicit rule is answered as it is; a service listed as key-only needs nothing else", () => {
    expect(accessRuleOf(syntheticService("Read", Access.READ).methods[0], new Set())).toBe(Access.READ);
    expect(accessRuleOf(syntheticService("Scoped", Access.SCOPED).methods[0], new Set())).toBe(Access.SCOPED);
    expect(accessRuleOf(syntheticService("Write", Access.WRITE).methods[0], new Set())).toBe(Access.WRITE);
    expect(accessRuleOf(syntheticService("Bare").methods[0], new Set(["acms.test.Bare"]))).toBe("authenticated");
    expect(accessRuleOf(ScopeService.method.getScope, new Set())).toBe(Access.READ);
  });
});

describe("the access interceptor, fail closed", () => {
  const bare = syntheticService("Bare");
  const read = syntheticService("Read", Access.READ);
  const keyOnly = syntheticService("KeyOnly");
  let handled: string[];
  const transport = (apiKey?: string) =>
    createRouterTransport(
      (router) => {
        for (const svc of [bare, read, keyOnly]) router.rpc(ping(svc), () => (handled.push(svc.name), {}));
      },
      {
        router: {
          interceptors: [
            createAccessInterceptor({
              keys,
              scopes: noScopes,
              registry: noRegistry,
              publicServices: new Set(),
              authenticatedServices: new Set(["acms.test.KeyOnly"]),
            }),
          ],
        },
        transport: { interceptors: [authInterceptor(apiKey)] },
      },
    );
  const call = (svc: DescService, apiKey?: string) => transport(apiKey).unary(ping(svc), undefined, undefined, undefined, {});
  beforeEach(() => {
    handled = [];
  });

  test("a method without an access option is refused with a valid key, and its handler never runs", async () => {
    const err = await failure(call(bare, key));
    expect(Code[err.code]).toBe(Code[Code.PermissionDenied]);
    expect(err.rawMessage).toBe("acms.test.Bare/Ping declares no access rule: refused");
    expect(handled).toEqual([]);
  });

  test("without a key the same call is UNAUTHENTICATED (nothing is revealed about the method)", async () => {
    const err = await failure(call(bare));
    expect(Code[err.code]).toBe(Code[Code.Unauthenticated]);
    expect(handled).toEqual([]);
  });

  test("a method with an explicit rule, and a key-only service, are served", async () => {
    await call(read, key);
    await call(keyOnly, key);
    expect(handled).toEqual(["Read", "KeyOnly"]);
    const err = await failure(call(keyOnly, "not-a-key"));
    expect(Code[err.code]).toBe(Code[Code.Unauthenticated]);
  });
});
