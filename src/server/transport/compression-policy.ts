/**
 * The smallest response message the server compresses (when the client accepts gzip). Compressing costs
 * about a millisecond of server CPU per Search answer of a few KiB and saves nothing on a LAN or loopback,
 * where most calls of a context service travel; it pays for large answers (a thousand results, an RDF
 * export) sent over slower links. connect-node's default is 1 KiB, which compressed nearly every answer.
 */
export const COMPRESS_MIN_BYTES = 64 * 1024;
