/**
 * Jest runs the TypeScript sources through ts-jest in CommonJS mode (see NOTES-TOOLCHAIN); the global set-up
 * builds dist/ when stale, for the tests that start the compiled CLI as a child process.
 */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  globalSetup: "<rootDir>/test/support/build-dist.mjs",
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.test.json", diagnostics: false }],
  },
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  testTimeout: 30000,
};
