import { loadConfig } from "../../src/server/composition/config.js";

describe("ACMS_SPARQL_* configuration", () => {
  it("is absent without ACMS_SPARQL_QUERY_URL: the embedded graph runs", () => {
    expect(loadConfig({}).sparqlEndpoint).toBeUndefined();
  });

  it("reads the endpoint; the update URL defaults to the query URL", () => {
    const c = loadConfig({
      ACMS_SPARQL_QUERY_URL: "http://127.0.0.1:8890/sparql-auth",
      ACMS_SPARQL_USER: "acms",
      ACMS_SPARQL_PASSWORD: "pw",
    });
    expect(c.sparqlEndpoint).toEqual({
      queryUrl: "http://127.0.0.1:8890/sparql-auth",
      updateUrl: "http://127.0.0.1:8890/sparql-auth",
      user: "acms",
      password: "pw",
      concurrency: 8,
    });
    const split = loadConfig({ ACMS_SPARQL_QUERY_URL: "https://db.example/sparql", ACMS_SPARQL_UPDATE_URL: "https://db.example/update" });
    expect(split.sparqlEndpoint).toEqual({
      queryUrl: "https://db.example/sparql",
      updateUrl: "https://db.example/update",
      user: undefined,
      password: undefined,
      concurrency: 8,
    });
    const wide = loadConfig({ ACMS_SPARQL_QUERY_URL: "http://127.0.0.1:8890/sparql-auth", ACMS_SPARQL_CONCURRENCY: "3" });
    expect(wide.sparqlEndpoint?.concurrency).toBe(3);
  });

  it("refuses bad values with one line naming the variable, never echoing a password", () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ ACMS_SPARQL_QUERY_URL: "not a url" }, /^ACMS_SPARQL_QUERY_URL must be an http or https URL/],
      [{ ACMS_SPARQL_QUERY_URL: "ftp://db.example/sparql" }, /^ACMS_SPARQL_QUERY_URL must be an http or https URL/],
      [{ ACMS_SPARQL_QUERY_URL: "http://acms:secret-pw@db.example/sparql" }, /^ACMS_SPARQL_QUERY_URL must not hold credentials/],
      [{ ACMS_SPARQL_QUERY_URL: "http://db.example/sparql", ACMS_SPARQL_UPDATE_URL: "nope" }, /^ACMS_SPARQL_UPDATE_URL must be/],
      [{ ACMS_SPARQL_UPDATE_URL: "http://db.example/update" }, /^ACMS_SPARQL_QUERY_URL must be set/],
      [{ ACMS_SPARQL_PASSWORD: "secret-pw" }, /^ACMS_SPARQL_QUERY_URL must be set/],
      [
        { ACMS_SPARQL_QUERY_URL: "http://db.example/sparql", ACMS_SPARQL_USER: "acms" },
        /^ACMS_SPARQL_USER and ACMS_SPARQL_PASSWORD must be set together/,
      ],
      [
        { ACMS_SPARQL_QUERY_URL: "http://db.example/sparql", ACMS_SPARQL_PASSWORD: "secret-pw" },
        /^ACMS_SPARQL_USER and ACMS_SPARQL_PASSWORD must be set together/,
      ],
      [
        { ACMS_SPARQL_QUERY_URL: "http://db.example/sparql", ACMS_SPARQL_CONCURRENCY: "0" },
        /^ACMS_SPARQL_CONCURRENCY must be between 1 and 256/,
      ],
    ];
    for (const [env, message] of cases) {
      let error: Error | undefined;
      try {
        loadConfig(env);
      } catch (err) {
        error = err as Error;
      }
      expect(error?.message).toMatch(message);
      expect(error?.message).not.toContain("\n");
      expect(error?.message).not.toContain("secret-pw");
    }
  });
});
