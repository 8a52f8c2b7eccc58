/**
 * Jest runs the TypeScript sources through ts-jest in CommonJS mode (see NOTES-TOOLCHAIN). The global set-up
 * builds dist/ when stale (tests start the compiled CLI as a child process) and makes the run directory.
 */
const project = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.test.json", diagnostics: false }],
  },
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  testTimeout: 30000,
};

module.exports = {
  testTimeout: 30000,
  // Three workers on the 2-core CI machine: jest's default there (cores - 1) runs every file in band, one after
  // another, while many files spend their time waiting on child processes (engines, clients, the CLI, Chromium):
  // run alone, search-isolation-restart used 24 s of CPU in 29 s and contract-virtuoso 20 s in 38 s, so two
  // workers left the cores idle part of the time. The tests hold no wall-clock bound (they pass at a load
  // average of 20 here); set 2 again if a file ever proves sensitive to the load three give.
  maxWorkers: 3,
  // The slowest files first (a fresh clone has no jest cache, and jest then orders by file size).
  testSequencer: "<rootDir>/test/support/slowest-first-sequencer.cjs",
  // A run directory shared by the workers; engines started lazily by tests (PostgreSQL) are stopped at the end.
  globalSetup: "<rootDir>/test/support/global-setup.ts",
  globalTeardown: "<rootDir>/test/support/global-teardown.ts",
  projects: [
    { ...project, displayName: "embedded" },
    // The isolation red-team and contract tests once more, against servers on PostgreSQL (test/support/test-engine.ts),
    // and the outside clients as in the duckdb project below ("the outside client suite passes on PostgreSQL").
    // Not their *-virtuoso runs: the graph on Virtuoso is the same adapter whatever the document engine (the
    // graph is never on PostgreSQL), and every assertion of those files already runs here on the embedded
    // graph and in the embedded project on Virtuoso; the PostgreSQL x Virtuoso product cost minutes and
    // exercised no adapter the two runs do not. Nor the in-memory keyword index variant: that index is the same
    // adapter over any store's chunk snapshots, and its attacks run in the embedded and duckdb projects.
    {
      ...project,
      displayName: "postgres",
      testMatch: [
        "<rootDir>/test/isolation/**/*.test.ts",
        "<rootDir>/test/contract/**/*.test.ts",
        "<rootDir>/test/clients/**/*.test.ts",
        "<rootDir>/test/interop/{connect-client,grpc-js-client,python-client}.test.ts",
      ],
      testPathIgnorePatterns: [
        "/node_modules/",
        "-virtuoso\\.test\\.ts$",
        "/search-isolation-memory-index\\.test\\.ts$",
        "/typescript-package-contents\\.test\\.ts$",
        "/search-response-decoding\\.test\\.ts$",
        "/lean-unary-signal\\.test\\.ts$",
        "/python-package\\.test\\.ts$",
      ],
      setupFiles: ["<rootDir>/test/support/engines/use-postgres.ts"],
    },
    // The same outside client files as the postgres project, each test server being TWO servers on one
    // PostgreSQL database behind a round-robin proxy that sends each request or HTTP/2 stream to the next
    // replica (test/support/replicated-server.ts): "passes unchanged on ACMS_POSTGRES_URL with two servers".
    // The graph, never on PostgreSQL, is the run's one Virtuoso, which both replicas see (started in the
    // background by this project's global set-up, test/support/engines/run-virtuoso-setup.ts).
    {
      ...project,
      displayName: "postgres-replicas",
      testMatch: ["<rootDir>/test/clients/**/*.test.ts", "<rootDir>/test/interop/{connect-client,grpc-js-client,python-client}.test.ts"],
      testPathIgnorePatterns: [
        "/node_modules/",
        "/typescript-package-contents\\.test\\.ts$",
        "/search-response-decoding\\.test\\.ts$",
        "/lean-unary-signal\\.test\\.ts$",
        "/python-package\\.test\\.ts$",
      ],
      setupFiles: ["<rootDir>/test/support/engines/use-postgres-replicas.ts"],
      globalSetup: "<rootDir>/test/support/engines/run-virtuoso-setup.ts",
      globalTeardown: "<rootDir>/test/support/engines/run-virtuoso-teardown.ts",
    },
    // Against servers whose documents and vectors are in DuckDB (ACMS_DUCKDB_PATH): the isolation and contract
    // tests, and the outside clients (the TypeScript package in Node and Chromium, Go, Python, the interop clients),
    // which is what "the outside client suite passes on DuckDB" means. What those clients build is made once per
    // run for both projects (test/support/run-shared.ts; the Go builds hit the build cache: -trimpath). Left out:
    // the files of parts DuckDB does not hold (the graph on Virtuoso or Oxigraph, the tiers, registry and scopes
    // in SQLite), the in-memory keyword index variant (on DuckDB keyword search is always the in-memory index), and
    // the client packages' own files (typescript-package-contents, python-package, the SDK's search answer reader and
    // its signal against a raw HTTP/2 server: no ACMS server, no engine).
    {
      ...project,
      displayName: "duckdb",
      testMatch: [
        "<rootDir>/test/isolation/**/*.test.ts",
        "<rootDir>/test/contract/**/*.test.ts",
        "<rootDir>/test/clients/**/*.test.ts",
        "<rootDir>/test/interop/{connect-client,grpc-js-client,python-client}.test.ts",
      ],
      testPathIgnorePatterns: [
        "/node_modules/",
        "virtuoso\\.test\\.ts$",
        "/tier-isolation\\.test\\.ts$",
        "/sparql-isolation\\.test\\.ts$",
        "/scope-isolation\\.test\\.ts$",
        "/search-isolation-memory-index\\.test\\.ts$",
        "/typescript-package-contents\\.test\\.ts$",
        "/search-response-decoding\\.test\\.ts$",
        "/lean-unary-signal\\.test\\.ts$",
        "/python-package\\.test\\.ts$",
      ],
      setupFiles: ["<rootDir>/test/support/engines/use-duckdb.ts"],
    },
  ],
};
