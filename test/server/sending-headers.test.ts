import fc from "fast-check";
import type http2 from "node:http2";
import { SendingHeaders } from "../../clients/typescript/src/node-headers.js";
import { grpcHeaders } from "../../clients/typescript/src/lean-unary-transport.js";
import { requestHeaderWithCompression } from "@connectrpc/connect/protocol-grpc";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";

/** Names and values of every kind Headers meets: plain, mixed case, edge whitespace, invalid, non-Latin-1. */
const name = fc.constantFrom("x-request-id", "X-Request-Id", "acms-scope-id", "set-cookie", "grpc-status", "bad name", "", "é", "a:b");
const value = fc.oneof(
  fc.constantFrom("", "v", " v", "v ", "\tv", "a  b", "a\r\nb", "a\0b", "é", "😀", "01J0000000000000000000000"),
  fc.string({ maxLength: 12 }),
);
const op = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), name, value }),
  fc.record({ kind: fc.constant("append" as const), name, value }),
  fc.record({ kind: fc.constant("delete" as const), name }),
  fc.record({ kind: fc.constant("get" as const), name }),
  fc.record({ kind: fc.constant("has" as const), name }),
  fc.record({ kind: fc.constant("cookies" as const) }),
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

/** What an operation answers on `h`: its result, or the kind of error it throws. */
function apply(h: Headers, o: Op): unknown {
  try {
    switch (o.kind) {
      case "set":
        return h.set(o.name, o.value);
      case "append":
        return h.append(o.name, o.value);
      case "delete":
        return h.delete(o.name);
      case "get":
        return h.get(o.name);
      case "has":
        return h.has(o.name);
      case "cookies":
        return h.getSetCookie();
    }
  } catch (err) {
    return { threw: (err as Error).name };
  }
}

function nodeHeadersOf(h: Headers): http2.OutgoingHttpHeaders {
  const out: http2.OutgoingHttpHeaders = {};
  h.forEach((v, k) => (out[k] = v));
  return out;
}

describe("SendingHeaders", () => {
  it("answers every operation as Headers does, and writes out what Headers' forEach gives", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 12 }), fc.boolean(), (ops, iterate) => {
        const ours = new SendingHeaders();
        const plain = new Headers();
        for (const o of ops) expect([o, apply(ours, o)]).toEqual([o, apply(plain, o)]);
        expect(ours.writeInto({})).toEqual(nodeHeadersOf(plain));
        if (iterate) {
          expect([...ours]).toEqual([...plain]);
          expect([...ours.keys()]).toEqual([...plain.keys()]);
          expect([...ours.values()]).toEqual([...plain.values()]);
          expect(nodeHeadersOf(ours)).toEqual(nodeHeadersOf(plain));
          expect(ours.writeInto({})).toEqual(nodeHeadersOf(plain));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps headers that are only set out of Headers, normalised and refused as Headers does otherwise", () => {
    const h = new SendingHeaders();
    h.set("X-Request-Id", "abc");
    h.set("x-request-id", "def");
    h.set("acms-scope-id", "s1");
    expect(h.writeInto({ ":status": 200 })).toEqual({ ":status": 200, "x-request-id": "def", "acms-scope-id": "s1" });
    expect(() => h.set("bad name", "v")).toThrow(/invalid header name/);
    h.set("x-padded", "  v ");
    expect(h.get("x-padded")).toBe("v");
    expect(h.writeInto({})).toEqual({ "acms-scope-id": "s1", "x-padded": "v", "x-request-id": "def" });
    expect(h).toBeInstanceOf(Headers);
  });
});

describe("the SDK's gRPC request headers", () => {
  it("are the headers connect's transport makes for a call without headers of its own", () => {
    const accept = [compressionGzip, compressionBrotli];
    for (const timeoutMs of [undefined, 0, 1, 30_000]) {
      const ours = grpcHeaders(timeoutMs);
      const connect = requestHeaderWithCompression(true, timeoutMs, undefined, accept, null);
      expect(ours).toBeInstanceOf(SendingHeaders);
      expect((ours as SendingHeaders).writeInto({})).toEqual(nodeHeadersOf(connect));
      expect([...ours]).toEqual([...connect]);
    }
  });
});
