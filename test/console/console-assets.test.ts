import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { relativeAssetPath } from "../../src/server/console/console-assets.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** A GET (or another method) over plain HTTP/1.1 with the path sent exactly as written, no normalisation. */
function get(port: number, path: string, method = "GET"): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("console assets at /console", () => {
  let t: TestServer;
  let root: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "acms-console-"));
    const build = join(root, "build");
    mkdirSync(join(build, "assets"), { recursive: true });
    writeFileSync(join(build, "index.html"), "<!doctype html><title>console</title>");
    writeFileSync(join(build, "assets", "index-abc123.js"), "console.log('hi')");
    writeFileSync(join(build, "assets", "index-abc123.css"), "body{}");
    writeFileSync(join(root, "secret.txt"), "TOP SECRET");
    symlinkSync(join(root, "secret.txt"), join(build, "leak.txt"));
    t = await startTestServer({ env: { ACMS_CONSOLE_DIR: build } });
  });

  afterAll(async () => {
    await t.close(true);
    rmSync(root, { recursive: true, force: true });
  });

  test("/console and /console/ answer index.html as revalidated HTML with a strict CSP", async () => {
    for (const path of ["/console", "/console/", "/console/?x=1"]) {
      const r = await get(t.server.port, path);
      expect(r.status).toBe(200);
      expect(r.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(r.headers["cache-control"]).toBe("no-cache");
      expect(r.headers["content-security-policy"]).toContain("default-src 'self'");
      expect(r.headers["x-content-type-options"]).toBe("nosniff");
      expect(r.body).toContain("<title>console</title>");
    }
  });

  test("hashed assets get their content type and an immutable cache", async () => {
    const js = await get(t.server.port, "/console/assets/index-abc123.js");
    expect(js.status).toBe(200);
    expect(js.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(js.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(js.body).toBe("console.log('hi')");
    const css = await get(t.server.port, "/console/assets/index-abc123.css");
    expect(css.headers["content-type"]).toBe("text/css; charset=utf-8");
    const head = await get(t.server.port, "/console/assets/index-abc123.js", "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers["content-length"]).toBe(String("console.log('hi')".length));
    expect(head.body).toBe("");
  });

  test("nothing outside the build folder is served: traversal, encoded traversal, symlinks out, backslashes", async () => {
    const attempts = [
      "/console/../secret.txt",
      "/console/assets/../../secret.txt",
      "/console/%2e%2e/secret.txt",
      "/console/%2E%2E%2Fsecret.txt",
      "/console/assets%2f..%2f..%2fsecret.txt",
      "/console/..%5csecret.txt",
      "/console/leak.txt",
      "/console/%00index.html",
      "/console//etc/passwd",
      "/console/%zz",
    ];
    for (const path of attempts) {
      const r = await get(t.server.port, path);
      expect({ path, status: r.status }).toEqual({ path, status: 404 });
      expect(r.body).not.toContain("TOP SECRET");
    }
  });

  test("unknown files and folders under /console are 404, other methods 405", async () => {
    expect((await get(t.server.port, "/console/nope.js")).status).toBe(404);
    expect((await get(t.server.port, "/console/assets")).status).toBe(404);
    expect((await get(t.server.port, "/console/assets/")).status).toBe(404);
    const post = await get(t.server.port, "/console/", "POST");
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe("GET, HEAD");
  });

  test("paths that only start like /console still reach the RPC handler", async () => {
    const r = await get(t.server.port, "/consoles");
    expect(r.status).not.toBe(200);
    expect(r.headers["content-security-policy"]).toBeUndefined();
    const health = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: "127.0.0.1",
          port: t.server.port,
          path: "/grpc.health.v1.Health/Check",
          method: "POST",
          headers: { "content-type": "application/json" },
          agent: false,
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end("{}");
    });
    expect(health).toBe(200);
  });

  test("relativeAssetPath refuses every segment that could leave the folder", () => {
    expect(relativeAssetPath("")).toBe("");
    expect(relativeAssetPath("/")).toBe("");
    expect(relativeAssetPath("/assets/a.js")).toBe("assets/a.js");
    expect(relativeAssetPath("/a%20b.txt")).toBe("a b.txt");
    for (const bad of ["/..", "/a/../b", "/./a", "/a//b", "/a\\b", "/%2e%2e", "/a%00", "x", "/%E0%A4%A"])
      expect(relativeAssetPath(bad)).toBeUndefined();
  });
});

describe("console not built", () => {
  test("/console says how to build it instead of crashing, and the API still answers", async () => {
    const empty = mkdtempSync(join(tmpdir(), "acms-console-empty-"));
    const t = await startTestServer({ env: { ACMS_CONSOLE_DIR: join(empty, "missing") } });
    try {
      const r = await get(t.server.port, "/console/");
      expect(r.status).toBe(503);
      expect(r.headers["content-type"]).toBe("text/plain; charset=utf-8");
      expect(r.body).toContain("npm run build");
      expect((await get(t.server.port, "/console/assets/x.js")).status).toBe(503);
    } finally {
      await t.close(true);
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
