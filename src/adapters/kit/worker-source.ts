/**
 * A worker thread's program as source text, for `new Worker(text, { eval: true })`: `program`'s compiled code,
 * called with the worker's `require` and then each of `helpers` (self-contained functions of the sources, e.g.
 * `createChunker`, whose text is put in the worker before the program), in order. A program written as one
 * function this way runs the same from the TypeScript sources (tests, tsx) and from the bundle (the server),
 * neither of which has a worker file of its own to point a Worker at. `__name` is the helper esbuild (tsx)
 * calls to keep function names; the worker has no module scope to find it in, so it is defined here as a no-op.
 */
export function workerSource(
  program: (req: NodeJS.Require, ...helpers: any[]) => void,
  ...helpers: Array<(...args: any[]) => unknown>
): string {
  const defs = helpers.map((h, i) => `var __helper${i} = (${h.toString()});\n`).join("");
  const args = ["require", ...helpers.map((_, i) => `__helper${i}`)].join(", ");
  return `"use strict";\nvar __name = (target) => target;\n${defs}(${program.toString()})(${args});\n`;
}
