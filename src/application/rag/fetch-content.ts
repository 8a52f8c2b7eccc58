import { InvalidArgumentError } from "../../domain/errors.js";
import { guardResults } from "../../domain/leak-guard.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import { parseUkoUri, type UkoUri } from "../../domain/uko-uri.js";
import type { UnitReader } from "../../ports/unit-reader.js";
import { scopeViolation } from "../../domain/scope-violation.js";

/** One fetched unit, keyed by the URI exactly as asked. */
export interface FetchedUnit {
  ukoUri: string;
  resourceId: string;
  path: string;
  content: string;
  metadata: Record<string, string>;
  chunkIndex?: number;
}

/** A FetchContent answer. */
export interface FetchAnswer {
  /** One per requested position found, in request order (duplicates repeat). */
  items: FetchedUnit[];
  /** Each in-scope URI that holds no such unit, once, in request order. */
  missing: string[];
}

/** What FetchContent runs on. */
export interface FetchContentDeps {
  units: UnitReader;
  /** The most URIs one request may name. */
  maxUris: number;
  /** The largest answer, in bytes of content, URIs and metadata (the server's message limit). */
  maxAnswerBytes: number;
  recentWindowMs: number;
  now?: () => number;
}

/**
 * FetchContent: the documents (whole content) and chunks named by UKO URIs, at the version the scope's
 * temporal setting sees (current: the live one; recent and all: the newest visible), in exactly the
 * order asked, so a ranking survives the fetch. Duplicates are answered once per position (and read
 * once). A malformed URI is INVALID_ARGUMENT naming its position; a URI whose resource or path the scope
 * does not allow is PERMISSION_DENIED with a ScopeViolation naming every offender (the access interceptor
 * refuses these first, from the proto's ref annotation; this check keeps the function safe on its own).
 * The answer's size (each position's content, URI and metadata, duplicates counted each time) is summed from
 * the distinct reads before any item is assembled: over `maxAnswerBytes` is INVALID_ARGUMENT `uko_uris`
 * (the same request can never succeed, so not a retryable RESOURCE_EXHAUSTED), and no copy is ever built.
 */
export async function fetchContent(deps: FetchContentDeps, view: ScopedBackendView, uris: readonly string[]): Promise<FetchAnswer> {
  if (uris.length > deps.maxUris) {
    throw InvalidArgumentError.field("uko_uris", `must name at most ${deps.maxUris} URIs, got ${uris.length}`);
  }
  const parsed: UkoUri[] = uris.map((u, i) => parseUkoUri(u, `uko_uris[${i}]`));
  const outside = new Set<string>();
  const outsideUris: string[] = [];
  parsed.forEach((p, i) => {
    if (view.allows(p.resourceId, p.path)) return;
    if (!view.resourceSet.has(p.resourceId)) outside.add(p.resourceId);
    else outsideUris.push(uris[i]);
  });
  if (outside.size > 0 || outsideUris.length > 0) {
    throw scopeViolation({ available: view.projectNames, resources: [...outside], paths: outsideUris });
  }

  // Read each distinct unit once; answer every position from the reads.
  const slot = new Map<string, number>();
  const distinct: UkoUri[] = [];
  const keyOf = (p: UkoUri) => `${p.resourceId}\u0000${p.path}\u0000${p.chunkIndex ?? ""}`;
  for (const p of parsed) {
    const k = keyOf(p);
    if (!slot.has(k)) {
      slot.set(k, distinct.length);
      distinct.push(p);
    }
  }
  const read = await deps.units.readUnits(distinct, {
    temporal: view.temporalScope,
    now: (deps.now ?? Date.now)(),
    recentWindowMs: deps.recentWindowMs,
  });
  const sizes = read.map((u) =>
    u ? Buffer.byteLength(u.content) + Object.entries(u.metadata).reduce((n, [k, v]) => n + k.length + v.length, 0) : 0,
  );
  let answerBytes = 0;
  parsed.forEach((p, i) => {
    answerBytes += sizes[slot.get(keyOf(p))!] + uris[i].length;
  });
  if (answerBytes > deps.maxAnswerBytes) {
    throw InvalidArgumentError.field(
      "uko_uris",
      `the answer would hold ${answerBytes} bytes, more than the ${deps.maxAnswerBytes}-byte message limit: name fewer or smaller units (each position counts, duplicates too)`,
    );
  }
  const items: FetchedUnit[] = [];
  const missing: string[] = [];
  const seenMissing = new Set<string>();
  parsed.forEach((p, i) => {
    const unit = read[slot.get(keyOf(p))!];
    if (unit) {
      items.push({
        ukoUri: uris[i],
        resourceId: unit.resourceId,
        path: unit.path,
        content: unit.content,
        metadata: unit.metadata,
        chunkIndex: p.chunkIndex,
      });
    } else if (!seenMissing.has(uris[i])) {
      seenMissing.add(uris[i]);
      missing.push(uris[i]);
    }
  });
  return { items: guardResults(view, items, "fetch"), missing };
}
