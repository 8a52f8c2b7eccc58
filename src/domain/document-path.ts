/** The longest document path accepted. */
export const MAX_DOCUMENT_PATH_LENGTH = 1024;

/**
 * Why `path` is not a valid document path (relative POSIX, no `.`/`..` segments, no empty segments,
 * no NUL or `#`), or undefined when it is valid.
 */
export function validateDocumentPath(path: string): string | undefined {
  if (path.length === 0) return "the path is empty";
  if (path.length > MAX_DOCUMENT_PATH_LENGTH) return `the path is longer than ${MAX_DOCUMENT_PATH_LENGTH} characters`;
  if (path.startsWith("/")) return "the path is absolute";
  if (path.includes("\\")) return "the path contains a backslash";
  if (path.includes("\0")) return "the path contains a NUL character";
  if (path.includes("#")) return "the path contains '#'";
  for (const seg of path.split("/")) {
    if (seg === "") return "the path has an empty segment";
    if (seg === "." || seg === "..") return "the path has a '.' or '..' segment";
  }
  return undefined;
}
