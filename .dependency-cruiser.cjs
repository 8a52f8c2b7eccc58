/**
 * The import rules of src/ (docs/architecture.md, "Rooms and what they may import"), checked by
 * test/architecture/import-rules.test.ts on every CI run: a violation fails the build with the rule's name,
 * the importing file and the imported one.
 */
const ENGINE = "(sqlite|postgres|duckdb|oxigraph|sparql-endpoint|memory|onnx|openai-embeddings)";
/** Packages that talk to a network, a database or the wire: never in the domain, ports or application. */
const IO_PACKAGES = "^(node_modules/)?(@connectrpc|@grpc|@bufbuild|better-sqlite3|pg|@duckdb|oxigraph|usearch|prom-client)(/|$)";
const NODE_IO = "^(node:)?(http|http2|https|net|tls|dgram|worker_threads|child_process)$";

module.exports = {
  forbidden: [
    {
      name: "domain-is-pure",
      comment: "The domain imports only the domain: no port, use case, adapter, server, CLI, generated wire code or I/O.",
      severity: "error",
      from: { path: "^src/domain/" },
      to: { path: ["^src/(ports|application|adapters|server|cli|client)/", "^gen/", "^clients/", IO_PACKAGES, NODE_IO] },
    },
    {
      name: "domain-no-io-packages",
      comment: "The domain never reaches a transport or a database.",
      severity: "error",
      from: { path: "^src/domain/" },
      to: { dependencyTypes: ["core"], path: ["^(node:)?(fs|fs/promises|http|http2|https|net|tls|dgram|worker_threads|child_process)$"] },
    },
    {
      name: "ports-are-interfaces",
      comment: "Ports import the domain and each other only.",
      severity: "error",
      from: { path: "^src/ports/" },
      to: { path: ["^src/(application|adapters|server|cli|client)/", "^gen/", IO_PACKAGES, NODE_IO] },
    },
    {
      name: "application-no-adapters-or-server",
      comment: "Use cases run over ports: never an adapter, the server, the CLI or a transport package.",
      severity: "error",
      from: { path: "^src/application/" },
      to: { path: ["^src/(adapters|server|cli|client)/", IO_PACKAGES, NODE_IO] },
    },
    {
      name: "adapters-no-server-application-cli",
      comment: "An adapter (or the kit) implements ports over an engine; it never reaches up into use cases, the server or the CLI.",
      severity: "error",
      from: { path: "^src/adapters/" },
      to: { path: ["^src/(application|server|cli|client)/", "^gen/"] },
    },
    {
      name: "adapter-no-other-adapter",
      comment: "An engine folder imports only itself and the adapters' kit (src/adapters/kit): what two engines share belongs in the kit.",
      severity: "error",
      from: { path: `^src/adapters/${ENGINE}/` },
      to: { path: "^src/adapters/", pathNot: ["^src/adapters/$1/", "^src/adapters/kit/"] },
    },
    {
      name: "kit-no-engine",
      comment: "The adapters' kit never imports an engine folder.",
      severity: "error",
      from: { path: "^src/adapters/kit/" },
      to: { path: "^src/adapters/", pathNot: "^src/adapters/kit/" },
    },
    {
      name: "adapters-only-in-composition",
      comment: "Only the composition root picks adapters, and only through an engine's index.ts (or the kit's).",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/adapters/", "^src/server/composition/"] },
      to: { path: "^src/adapters/" },
    },
    {
      name: "composition-opens-engines-by-index",
      comment: "The composition root opens an engine through its index.ts, never a file inside it.",
      severity: "error",
      from: { path: "^src/server/composition/" },
      to: { path: "^src/adapters/", pathNot: [`^src/adapters/${ENGINE}/index\\.ts$`, "^src/adapters/kit/index\\.ts$"] },
    },
    {
      name: "routes-get-services",
      comment: "Routes translate the wire and call application services: they never import an adapter or the backends bundle.",
      severity: "error",
      from: { path: "^src/server/routes/" },
      to: { path: ["^src/adapters/", "^src/server/composition/(backends|composition-root|start-acms|server)\\.ts$"] },
    },
    {
      name: "server-rooms-not-composition",
      comment: "Only the composition room assembles; the other rooms do not import it (its types of dependencies excepted).",
      severity: "error",
      from: { path: "^src/server/(transport|access|quotas|observability|console|mcp)/" },
      to: { path: "^src/server/(composition|routes)/", pathNot: "^src/server/composition/(config|backends)\\.ts$" },
    },
    {
      name: "cli-no-server-internals",
      comment: "The CLI starts the server through the composition root only; it never imports a room inside the server.",
      severity: "error",
      from: { path: "^src/cli/" },
      to: { path: "^src/server/", pathNot: "^src/server/composition/(start-acms|config|server)\\.ts$" },
    },
    {
      name: "cli-no-adapters",
      comment: "The CLI is a client of the service: it never opens an engine.",
      severity: "error",
      from: { path: "^src/cli/" },
      to: { path: "^src/adapters/" },
    },
    {
      name: "mcp-is-a-client",
      comment:
        "The MCP tools call the RPCs over the transport they are handed (one access path): never a server room, a use case, a port or an engine.",
      severity: "error",
      from: { path: "^src/mcp/" },
      to: { path: "^src/(server|application|ports|adapters|cli)/" },
    },
    {
      name: "no-circular",
      comment: "Import cycles make the layering unreadable (type-only cycles included).",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".cjs", ".mjs", ".json"],
    },
  },
};
