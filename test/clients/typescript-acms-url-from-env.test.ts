import { acmsUrlFromEnv } from "../../clients/typescript/src/index.js";
import { urlFromServeEnv } from "../../src/cli/connection-options.js";

// The client package's reading of ACMS_URL / ACMS_HOST / ACMS_PORT, which its examples use: the CLI's rule.

test("ACMS_URL wins, trimmed and without trailing slashes", () => {
  expect(acmsUrlFromEnv({ ACMS_URL: " https://acms.example.com:8443/ ", ACMS_PORT: "6000" })).toBe("https://acms.example.com:8443");
  expect(acmsUrlFromEnv({ ACMS_URL: "http://10.0.0.5:7000" })).toBe("http://10.0.0.5:7000");
});

test("without ACMS_URL (or with it empty) the server's ACMS_HOST and ACMS_PORT are dialled", () => {
  expect(acmsUrlFromEnv({})).toBe("http://127.0.0.1:50051");
  expect(acmsUrlFromEnv({ ACMS_URL: "  ", ACMS_PORT: "6000" })).toBe("http://127.0.0.1:6000");
  expect(acmsUrlFromEnv({ ACMS_HOST: "acms.internal" })).toBe("http://acms.internal:50051");
});

test("the default is process.env", () => {
  const saved = { ...process.env };
  try {
    delete process.env.ACMS_URL;
    process.env.ACMS_HOST = "0.0.0.0";
    process.env.ACMS_PORT = "6123";
    expect(acmsUrlFromEnv()).toBe("http://127.0.0.1:6123");
  } finally {
    process.env = saved;
  }
});

test.each<Record<string, string>>([
  {},
  { ACMS_PORT: "6000" },
  { ACMS_HOST: "0.0.0.0", ACMS_PORT: "7000" },
  { ACMS_HOST: "::" },
  { ACMS_HOST: "[::]", ACMS_PORT: "1" },
  { ACMS_HOST: "::1", ACMS_PORT: "65535" },
  { ACMS_HOST: "[fe80::1]" },
  { ACMS_HOST: " acms.internal ", ACMS_PORT: " 6000 " },
])("host and port %j give the URL the CLI dials", (env) => {
  expect(acmsUrlFromEnv(env)).toBe(urlFromServeEnv(env));
});

test.each<Record<string, string>>([{ ACMS_PORT: "0" }, { ACMS_PORT: "65536" }, { ACMS_PORT: "http" }, { ACMS_PORT: "60 00" }])(
  "a bad port %j is refused, as the CLI refuses it",
  (env) => {
    expect(() => urlFromServeEnv(env)).toThrow(/ACMS_PORT/);
    expect(() => acmsUrlFromEnv(env)).toThrow(/ACMS_PORT must be a port number from 1 to 65535/);
  },
);

test("an ACMS_URL that is not http(s) is refused rather than replaced by a default", () => {
  expect(() => acmsUrlFromEnv({ ACMS_URL: "127.0.0.1:50051" })).toThrow(/ACMS_URL must be an http:\/\/ or https:\/\/ URL/);
  expect(() => acmsUrlFromEnv({ ACMS_URL: "grpc://127.0.0.1:50051" })).toThrow(/ACMS_URL/);
});
