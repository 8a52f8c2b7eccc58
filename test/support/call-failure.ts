import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";

/** The error of a call (or stream) that must fail; throws when it succeeds, so the test fails. */
export async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

/** Asserts the call fails with `code`, and that no stack trace reaches the wire. */
export async function expectCode(p: Promise<unknown>, code: Code): Promise<ConnectError> {
  const err = await failure(p);
  expect(Code[err.code]).toBe(Code[code]);
  expect(err.rawMessage).not.toMatch(/\n\s+at /);
  return err;
}

/** Asserts INVALID_ARGUMENT with a BadRequest detail (and no stack trace), and returns the violated field names. */
export async function badFields(p: Promise<unknown>): Promise<string[]> {
  const err = await expectCode(p, Code.InvalidArgument);
  const [detail] = err.findDetails(BadRequestSchema);
  expect(detail).toBeDefined();
  return detail.fieldViolations.map((v) => v.field);
}
