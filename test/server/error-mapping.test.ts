/**
 * API.md, fair sharing: "A caller over its quota (concurrent calls, request rate, or a per-call cost budget)
 * gets RESOURCE_EXHAUSTED with a google.rpc.RetryInfo detail". Every RESOURCE_EXHAUSTED a domain error becomes
 * on the wire carries RetryInfo, including those raised without a delay of their own (the graph engine's
 * "answer is too large", a per-call memory budget).
 */
import { Code } from "@connectrpc/connect";
import { durationMs } from "@bufbuild/protobuf/wkt";
import { RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { ResourceExhaustedError } from "../../src/domain/errors.js";
import { toConnectError } from "../../src/server/transport/error-mapping.js";

describe("RESOURCE_EXHAUSTED on the wire", () => {
  test("a domain error with a retry delay carries RetryInfo with that delay", () => {
    const err = toConnectError(new ResourceExhaustedError("more than 8 graph queries of this caller are waiting", 250));
    expect(err.code).toBe(Code.ResourceExhausted);
    const [info] = err.findDetails(RetryInfoSchema);
    expect(info && durationMs(info.retryDelay!)).toBe(250);
  });

  test("a domain error raised without a delay (a per-call budget such as a graph answer too large) still carries RetryInfo", () => {
    const err = toConnectError(new ResourceExhaustedError("the graph answer is too large: Invalid string length"));
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.rawMessage).toBe("the graph answer is too large: Invalid string length");
    const [info] = err.findDetails(RetryInfoSchema);
    expect(info).toBeDefined();
    expect(durationMs(info.retryDelay!)).toBeGreaterThan(0);
  });
});

describe("a call whose client went away", () => {
  test("the bare AbortError of an aborted handler signal (passed on as a rejection) is CANCELLED, not an internal error", () => {
    const ctl = new AbortController();
    ctl.abort();
    const logged: unknown[] = [];
    const err = toConnectError(ctl.signal.reason, (e) => logged.push(e));
    expect(err.code).toBe(Code.Canceled);
    expect(logged).toEqual([]);
  });
});
