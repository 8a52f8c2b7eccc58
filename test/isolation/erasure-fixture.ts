import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { TermKind } from "../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ContextTierService, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { ensureProject } from "../support/ensure-project.js";
import type { TestPrincipal, TestServer } from "../support/test-server.js";
import { DEFAULT_PRINCIPALS } from "../support/test-server.js";
import { resolve } from "./isolation-fixture.js";

/** The erasure tests' principals: the defaults, and a writer of local/borrow only (the doomed resource is linked there). */
export const ERASURE_PRINCIPALS: TestPrincipal[] = [...DEFAULT_PRINCIPALS, { name: "borrower", projects: ["local/borrow"], write: true }];

/** A word nothing but the doomed resource holds: in documents, versions, metadata, triples, typed literals and fragments. */
export const MARKER = "qzxerasuremarkerword";

export const DIM = 4;
export const EX = "http://example.org/erase/";

/** What the erasure tests build. */
export interface ErasureFixture {
  /** local/erase, alias "doomed": the resource erased. */
  doomed: string;
  /** local/erase, alias "kid": a DAG child of doomed. */
  kid: string;
  /** local/erase, alias "keeper": stays. */
  keeper: string;
  /** Documents of doomed, counting every retained version. */
  doomedVersions: number;
  doomedChunks: number;
  doomedVectors: number;
  doomedTriples: number;
}

async function* each<T>(list: readonly T[]): AsyncIterable<T> {
  for (const m of list) yield m;
}

/**
 * Builds local/erase (doomed with two versions of one document and a document deleted since, a DAG child, a
 * keeper), links doomed into local/borrow, writes its graph (a plain and a typed literal holding the marker)
 * and fragments naming it in the hot, warm and cold tiers.
 */
export async function buildErasureFixture(t: TestServer, principal = "writer"): Promise<ErasureFixture> {
  await ensureProject(t, principal, "local/erase");
  await ensureProject(t, principal, "local/borrow");
  const reg = t.client(RegistryService, principal);
  const doomed = (await reg.registerResource({ project: "local/erase", alias: "doomed", kind: "repo", metadata: { note: MARKER } }))
    .resource!.id;
  const kid = (await reg.registerResource({ project: "local/erase", alias: "kid", kind: "repo", parentIds: [doomed] })).resource!.id;
  const keeper = (await reg.registerResource({ project: "local/erase", alias: "keeper", kind: "repo" })).resource!.id;
  await reg.linkResource({ project: "local/borrow", resourceId: doomed, alias: "borrowed" });
  const idx = t.client(IndexService, principal);
  const doc = (resourceId: string, path: string, content: string, embedding: number[]) => ({
    resourceId,
    documents: [{ path, content, metadata: { tag: content }, chunks: [{ text: content, embedding }] }],
  });
  await idx.upsertDocuments(
    each([
      doc(doomed, "a.md", `zebra ${MARKER} first version`, [1, 0, 0, 0]),
      doc(doomed, "a.md", `zebra ${MARKER} second version`, [0.9, 0.1, 0, 0]),
      doc(doomed, "gone.md", `zebra ${MARKER} deleted since`, [0.8, 0.2, 0, 0]),
      doc(kid, "kid.md", "zebra kid notes", [0, 1, 0, 0]),
      doc(keeper, "keep.md", "zebra keeper notes", [0.7, 0.7, 0, 0]),
    ]),
  );
  await idx.deleteDocuments({ resourceId: doomed, paths: ["gone.md"] });
  const iri = (value: string) => ({ kind: TermKind.IRI, value });
  await idx.putTriples({
    resourceId: doomed,
    replace: true,
    triples: [
      { subject: iri(`${EX}doomed`), predicate: iri(`${EX}label`), object: { kind: TermKind.LITERAL, value: `${MARKER} label` } },
      {
        subject: iri(`${EX}doomed`),
        predicate: iri(`${EX}code`),
        object: { kind: TermKind.LITERAL, value: `${MARKER}typed`, datatype: `${EX}codeType` },
      },
      { subject: iri(`${EX}doomed`), predicate: iri(`${EX}next`), object: iri(`${EX}keeper`) },
    ],
  });
  await idx.putTriples({
    resourceId: keeper,
    replace: true,
    triples: [{ subject: iri(`${EX}keeper`), predicate: iri(`${EX}label`), object: { kind: TermKind.LITERAL, value: "keeper label" } }],
  });
  const scope = await resolve(t, principal, { projects: ["local/erase"] });
  const tiers = t.client(ContextTierService, principal, scope.scopeId);
  for (const tier of [Tier.HOT, Tier.WARM, Tier.COLD]) {
    await tiers.storeFragment({
      fragment: { content: `${MARKER} fragment ${tier}`, projectName: "local/erase", tier, resourceId: doomed },
    });
  }
  await tiers.storeFragment({ fragment: { content: "keeper fragment", projectName: "local/erase", tier: Tier.HOT, resourceId: keeper } });
  return { doomed, kid, keeper, doomedVersions: 3, doomedChunks: 3, doomedVectors: 3, doomedTriples: 3 };
}

/** Every file under `dir` whose bytes hold `needle` (UTF-8), as paths relative to `dir`. */
export function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = [];
  const bytes = Buffer.from(needle, "utf8");
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && readFileSync(p).includes(bytes)) found.push(p.slice(dir.length + 1));
    }
  };
  walk(dir);
  return found;
}
