import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lockDataDir } from "../../src/server/composition/data-dir-lock.js";
import { startTestServer } from "../support/test-server.js";

describe("data directory lock", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "acms-lock-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses a second holder while the first lives, and frees the directory on release", () => {
    const first = lockDataDir(dir);
    expect(readFileSync(join(dir, "LOCK"), "utf8").trim()).toBe(String(process.pid));
    expect(() => lockDataDir(dir)).toThrow(/in use by this process/);
    first.release();
    first.release();
    expect(existsSync(join(dir, "LOCK"))).toBe(false);
    lockDataDir(dir).release();
  });

  it("takes over a lock left by a process that is gone", async () => {
    const child = spawn(process.execPath, ["-e", ""]);
    const pid = child.pid!;
    await new Promise((resolve) => child.on("exit", resolve));
    writeFileSync(join(dir, "LOCK"), `${pid}\n`);
    const lock = lockDataDir(dir);
    expect(readFileSync(join(dir, "LOCK"), "utf8").trim()).toBe(String(process.pid));
    lock.release();
  });

  it("refuses a lock held by another live process", () => {
    writeFileSync(join(dir, "LOCK"), `${process.ppid}\n`);
    expect(() => lockDataDir(dir)).toThrow(new RegExp(`in use by process ${process.ppid}`));
  });

  it("a second server on the same data directory refuses to start; after the first stops it starts", async () => {
    const t = await startTestServer({ dataDir: dir });
    await expect(startTestServer({ dataDir: dir, keyEntries: t.keyEntries, keys: t.keys })).rejects.toThrow(/in use/);
    await t.close();
    const again = await startTestServer({ dataDir: dir, keyEntries: t.keyEntries, keys: t.keys });
    await again.close();
  });
});
