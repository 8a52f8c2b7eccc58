/**
 * Red team, finding 6 of issue 24: stored scopes had no cap per principal and are never removed, so a
 * read-only key grew the database at 8.4 MiB/s. Now a principal holds at most ACMS_MAX_SCOPES_PER_PRINCIPAL
 * scopes of at most ACMS_MAX_SCOPE_BYTES_PER_PRINCIPAL bytes in all; past either, ResolveScope and NarrowScope
 * are RESOURCE_EXHAUSTED with google.rpc.RetryInfo (API.md: a caller over its quota), and nothing is stored.
 * Another principal's cap is its own.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { RetryInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { CONTRACT_ENV, seedWorld } from "../contract/contract-fixture.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

async function exhausted(p: Promise<unknown>): Promise<ConnectError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  expect(err?.code).toBe(Code.ResourceExhausted);
  expect(err!.findDetails(RetryInfoSchema)).toHaveLength(1);
  return err!;
}

describe("the count of stored scopes", () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({ env: { ...CONTRACT_ENV, ACMS_MAX_SCOPES_PER_PRINCIPAL: "4" } });
    await seedWorld(t);
  });

  afterAll(async () => {
    await t?.close(true);
  });

  it("refuses the scope past the cap, by ResolveScope or NarrowScope, and stores nothing more", async () => {
    const scopes = t.client(ScopeService, "reader");
    const made: string[] = [];
    for (let i = 0; i < 4; i++)
      made.push((await scopes.resolveScope({ projects: ["local/api"], excludePaths: [`p${i}/**`] })).scope!.scopeId);
    const err = await exhausted(scopes.resolveScope({ projects: ["local/api"] }));
    expect(err.rawMessage).toContain("stored scopes");
    await exhausted(t.client(ScopeService, "reader", made[0]).narrowScope({ excludePaths: ["x/**"] }));
    // What it holds still serves; another principal is not touched by this one's cap.
    expect((await scopes.getScope({ scopeId: made[3] })).scope!.scopeId).toBe(made[3]);
    await t.client(ScopeService, "other").resolveScope({ projects: ["other/x"] });
  });
});

describe("the bytes of stored scopes", () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({ env: { ...CONTRACT_ENV, ACMS_MAX_SCOPE_BYTES_PER_PRINCIPAL: String(40 * 1024) } });
    await seedWorld(t);
  });

  afterAll(async () => {
    await t?.close(true);
  });

  it("refuses new scopes once the principal's stored scopes reach the byte cap", async () => {
    const scopes = t.client(ScopeService, "reader");
    // Each 256 globs of about 100 characters: 27 KB; the second reaches 40 KiB.
    const big = (tag: string) => Array.from({ length: 256 }, (_, i) => `${tag}/${"d".repeat(90)}/${i}`);
    await scopes.resolveScope({ projects: ["local/api"], excludePaths: big("a") });
    await scopes.resolveScope({ projects: ["local/api"], excludePaths: big("b") });
    const err = await exhausted(scopes.resolveScope({ projects: ["local/api"] }));
    expect(err.rawMessage).toContain("bytes");
    await t.client(ScopeService, "other").resolveScope({ projects: ["other/x"] });
  });
});
