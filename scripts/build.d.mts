// Types of scripts/build.mjs for the TypeScript that imports it (the benches).

/** Whether dist/ is older than some source (or missing). */
export function isStale(): boolean;
/** Bundles the program into dist/ (`clean` first drops older chunks). */
export function build(opts?: { clean?: boolean }): Promise<void>;
/** Compiles stand-alone programs (`{ name: entry }`) into `outDir/name.mjs` with the build's esbuild options. */
export function compilePrograms(entryPoints: Record<string, string>, outDir: string): Promise<void>;
/** Whether dist/console is missing or older than a console source. */
export function consoleIsStale(): boolean;
/** Builds the console with Vite in a child process; false where Vite is not installed. */
export function buildConsole(): boolean;
/** Builds what is missing or older than its sources; returns whether it built. */
export function buildIfStale(): Promise<boolean>;
