import { InvalidArgumentError } from "./errors.js";
import { hasNul } from "./nul-character.js";

/** `page_size` when the request leaves it out. */
export const DEFAULT_PAGE_SIZE = 100;
/** The largest `page_size` a listing accepts. */
export const MAX_PAGE_SIZE = 1000;
/** The longest `page_token` looked at (a real one is well under a hundred characters). */
const MAX_TOKEN_CHARS = 1024;
/** The longest position a token may hold (a project name, an alias or a ULID). */
const MAX_KEY_CHARS = 512;

/** The listings that page, each with its own token: a token of one is refused by another. */
export type PagedListing = "projects" | "resources" | "scopes";

/** What a page token holds: the listing, the key of the last row answered, and what the listing was of (a project). */
interface TokenBody {
  v: 1;
  l: PagedListing;
  /** The key of the last row of the previous page: the next page starts after it (before it, for scopes). */
  k: string;
  /** What the listing lists within (ListResources' project); empty otherwise. */
  o: string;
}

/** The page size a request asks for: absent is the default; present it must be in 1..MAX_PAGE_SIZE (INVALID_ARGUMENT `page_size`). */
export function pageSizeOf(pageSize: number | undefined): number {
  if (pageSize === undefined) return DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize <= 0 || pageSize > MAX_PAGE_SIZE) {
    throw InvalidArgumentError.field("page_size", `must be from 1 to ${MAX_PAGE_SIZE} (absent: ${DEFAULT_PAGE_SIZE}), got ${pageSize}`);
  }
  return pageSize;
}

/**
 * The `next_page_token` continuing `listing` (of `of`, e.g. ListResources' project) after the row keyed
 * `key`. It is a position only (base64url of a small versioned JSON): it names no rights, so whatever it
 * says, the next page is filtered by the caller's rights again and can show nothing the caller could not
 * list from the start. Opaque to clients: its layout may change.
 */
export function encodePageToken(listing: PagedListing, key: string, of = ""): string {
  const body: TokenBody = { v: 1, l: listing, k: key, o: of };
  return Buffer.from(JSON.stringify(body), "utf8").toString("base64url");
}

function badToken(why: string): InvalidArgumentError {
  return InvalidArgumentError.field("page_token", `${why}: pass the next_page_token of the previous page unchanged, or leave it empty`);
}

/**
 * The position a `page_token` holds, undefined for an empty token (the first page). A token that is not
 * one of ours, is of another listing, or of the same listing of something else (another project) is
 * INVALID_ARGUMENT on `page_token`; `validKey` checks the position's shape.
 */
export function decodePageToken(
  token: string,
  listing: PagedListing,
  of = "",
  validKey: (key: string) => boolean = () => true,
): string | undefined {
  if (token.length === 0) return undefined;
  if (token.length > MAX_TOKEN_CHARS || !/^[A-Za-z0-9_-]+$/.test(token)) throw badToken("not a page token");
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw badToken("not a page token");
  }
  const b = body as Partial<TokenBody> | null;
  if (
    typeof b !== "object" ||
    b === null ||
    b.v !== 1 ||
    typeof b.l !== "string" ||
    typeof b.k !== "string" ||
    typeof b.o !== "string" ||
    b.k.length === 0 ||
    b.k.length > MAX_KEY_CHARS ||
    hasNul(b.k)
  ) {
    throw badToken("not a page token");
  }
  if (b.l !== listing || b.o !== of) throw badToken("made for another listing");
  if (!validKey(b.k)) throw badToken("not a page token");
  return b.k;
}
