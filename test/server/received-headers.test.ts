import type http2 from "node:http2";
import { ReceivedHeaders } from "../../clients/typescript/src/node-headers.js";

/** Node's HTTP/2 header object for a gRPC call (null prototype, pseudo-headers, a repeated header as an array). */
function raw(): http2.IncomingHttpHeaders {
  return Object.assign(Object.create(null) as http2.IncomingHttpHeaders, {
    ":method": "POST",
    ":path": "/acms.v1.TextBackendService/Search",
    "content-type": "application/grpc",
    authorization: "Bearer k1 ",
    "acms-scope": " 01J0000000000000000000000 ",
    "x-trace": ["a", " b"],
  });
}

/** The same metadata copied into a plain Headers, as the fast path did before. */
function copied(): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw())) {
    if (k.startsWith(":") || v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) h.append(k, item);
    else h.append(k, v);
  }
  return h;
}

describe("ReceivedHeaders", () => {
  it("answers get and has as a copied Headers does, pseudo-headers and unknown names included", () => {
    const lazy = new ReceivedHeaders(raw());
    const plain = copied();
    for (const name of [
      "authorization",
      "Authorization",
      "acms-scope",
      "x-trace",
      "content-type",
      "x-request-id",
      "constructor",
      ":path",
      "toString",
    ]) {
      const expected = name.startsWith(":") ? null : plain.get(name);
      expect([name, lazy.get(name)]).toEqual([name, expected]);
      expect([name, lazy.has(name)]).toEqual([name, name.startsWith(":") ? false : plain.has(name)]);
    }
    expect(lazy.get("authorization")).toBe("Bearer k1");
    expect(lazy.get("acms-scope")).toBe("01J0000000000000000000000");
    expect(lazy.get("x-trace")).toBe("a, b");
  });

  it("iterates and changes like a copied Headers, reads after a change included", () => {
    const lazy = new ReceivedHeaders(raw());
    expect([...lazy]).toEqual([...copied()]);
    const changed = new ReceivedHeaders(raw());
    changed.set("acms-scope", "other");
    changed.append("x-trace", "c");
    changed.delete("authorization");
    expect(changed.get("acms-scope")).toBe("other");
    expect(changed.get("x-trace")).toBe("a, b, c");
    expect(changed.has("authorization")).toBe(false);
    expect(changed.get("content-type")).toBe("application/grpc");
    const seen: string[] = [];
    new ReceivedHeaders(raw()).forEach((v, k) => seen.push(`${k}=${v}`));
    expect(seen).toEqual([...copied()].map(([k, v]) => `${k}=${v}`));
    expect(new ReceivedHeaders(raw())).toBeInstanceOf(Headers);
  });
});
