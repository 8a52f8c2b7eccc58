/** Superseded versions every document engine keeps per document by default (the live version not counted). */
export const DEFAULT_RETAINED_VERSIONS = 16;
