import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A throw-away Virtuoso Open Source 7 server on loopback, with a service user set up as README says. */
export interface VirtuosoInstance {
  /** The anonymous SPARQL endpoint (`/sparql`); the service user's endpoint is `authQueryUrl`. */
  anonymousUrl: string;
  /** `/sparql-auth`: digest authentication, SPARQL query and update. */
  authQueryUrl: string;
  /** The service user: reads and writes every graph but the private ones (`FOREIGN_GRAPH` among them). */
  user: string;
  password: string;
  /** The environment that points the server's graph at this instance. */
  env: Record<string, string>;
  /** Runs SQL as dba through isql and returns its output. */
  sql(statements: string): string;
  /** Stops the server and deletes its database directory. */
  stop(): Promise<void>;
}

/** A graph the service user is refused by graph-level security in every test instance. */
export const FOREIGN_GRAPH = "http://foreign.example/private-graph";

const VIRTUOSO = "virtuoso-t";
const ISQL = "isql-vt";

function onPath(cmd: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
}

/** Installs Debian's virtuoso-opensource when its server binary is missing (as root, or through sudo). */
export function ensureVirtuosoInstalled(): void {
  if (onPath(VIRTUOSO) && onPath(ISQL)) return;
  const sudo = process.getuid?.() === 0 ? [] : ["sudo"];
  const run = (args: string[]) =>
    execFileSync(sudo.length ? "sudo" : args[0], sudo.length ? args : args.slice(1), {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  run(["apt-get", "update", "-qq"]);
  run(["apt-get", "install", "-y", "-qq", "virtuoso-opensource"]);
  // The package starts a system Virtuoso on fixed ports with a default dba account: stop it, tests start their own.
  spawnSync(
    "sh",
    [
      "-c",
      `${sudo.join(" ")} /etc/init.d/virtuoso-opensource-7 stop; command -v systemctl && ${sudo.join(" ")} systemctl disable --now virtuoso-opensource-7`,
    ],
    { stdio: "ignore" },
  );
  if (!onPath(VIRTUOSO)) throw new Error("virtuoso-opensource was installed but virtuoso-t is not on PATH");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Options of a throw-away Virtuoso. */
export interface VirtuosoOptions {
  /**
   * Page buffers (8 KiB each; default 20,000, about 160 MB). A benchmark of a million triples wants more,
   * or Virtuoso pages its indexes to disk; Virtuoso's guide: about 85,000 per GB of memory given to it.
   */
  buffers?: number;
}

function iniText(dir: string, sqlPort: number, httpPort: number, buffers: number): string {
  return `[Database]
DatabaseFile = ${dir}/virtuoso.db
ErrorLogFile = ${dir}/virtuoso.log
LockFile = ${dir}/virtuoso.lck
TransactionFile = ${dir}/virtuoso.trx
xa_persistent_file = ${dir}/virtuoso.pxa
ErrorLogLevel = 7
FileExtend = 200
Striping = 0
TempStorage = TempDatabase

[TempDatabase]
DatabaseFile = ${dir}/virtuoso-temp.db
TransactionFile = ${dir}/virtuoso-temp.trx
Striping = 0

[Parameters]
ServerPort = 127.0.0.1:${sqlPort}
DisableUnixSocket = 1
MaxClientConnections = 20
CheckpointInterval = 60
CaseMode = 2
DirsAllowed = ., /usr/share/virtuoso-opensource-7/vad
NumberOfBuffers = ${buffers}
MaxDirtyBuffers = ${Math.round(buffers * 0.75)}
MaxQueryMem = 500M
ThreadsPerQuery = 2
AsyncQueueMaxThreads = 4

[HTTPServer]
ServerPort = 127.0.0.1:${httpPort}
ServerRoot = /var/lib/virtuoso-opensource-7/vsp
MaxClientConnections = 20
ServerThreads = 20
MaxKeepAlives = 20
KeepAliveTimeout = 10
EnabledDavVSP = 0
HTTPProxyEnabled = 0
Charset = UTF-8
EnabledGzipContent = 0

[SPARQL]
ResultSetMaxRows = 1000000
MaxQueryCostEstimationTime = 0
MaxQueryExecutionTime = 120
MaxSortedTopRows = 1000000
`;
}

async function waitForHttp(url: string, child: ChildProcess, logFile: string): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) {
      let log = "";
      try {
        log = readFileSync(logFile, "utf8").slice(-2000);
      } catch {
        // No log written yet.
      }
      throw new Error(`virtuoso-t exited with status ${child.exitCode} before it answered:\n${log}`);
    }
    try {
      const res = await fetch(`${url}?query=${encodeURIComponent("ASK {}")}`, { headers: { accept: "application/sparql-results+json" } });
      if (res.ok) {
        await res.text();
        return;
      }
    } catch {
      // Not listening yet.
    }
    if (Date.now() - started > 120_000) throw new Error(`virtuoso did not answer on ${url} within 120 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Waits until the service user may run SPARQL Update (a DROP SILENT of a graph nothing uses, as that user):
 * once in a while a fresh Virtuoso refused the first DROP with "SR186: No permission to execute procedure
 * DB.DBA.SPARUL_DROP" although SPARQL_UPDATE was granted, so the grant is made again until the probe passes.
 */
async function updatesAllowed(user: string, password: string, sql: (s: string, pwd?: string, login?: string) => string): Promise<void> {
  let last: unknown;
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      sql("SPARQL DROP SILENT GRAPH <urn:x-acms-test:update-probe>;\n", password, user);
      return;
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 500));
      sql(`GRANT SPARQL_UPDATE TO "${user}";\n`);
    }
  }
  throw new Error(`the Virtuoso user ${user} may not run SPARQL Update: ${String(last)}`);
}

/**
 * Starts one throw-away Virtuoso (database files in a fresh temp directory, SQL and HTTP ports picked at
 * random on 127.0.0.1), waits until its SPARQL endpoint answers, and sets up the service user the way
 * the README tells operators to: SPARQL_SELECT and SPARQL_UPDATE, no graph access for anonymous users,
 * and no access for the service user to graphs outside the ones it manages (`FOREIGN_GRAPH` here).
 * Installs virtuoso-opensource with apt-get first when it is missing.
 */
export async function startVirtuoso(opts: VirtuosoOptions = {}): Promise<VirtuosoInstance> {
  ensureVirtuosoInstalled();
  const dir = mkdtempSync(join(tmpdir(), "acms-virtuoso-"));
  const sqlPort = await freePort();
  const httpPort = await freePort();
  const ini = join(dir, "virtuoso.ini");
  writeFileSync(ini, iniText(dir, sqlPort, httpPort, opts.buffers ?? 20_000));
  const child = spawn(VIRTUOSO, ["+configfile", ini, "+foreground"], { cwd: dir, stdio: "ignore", detached: false });
  const base = `http://127.0.0.1:${httpPort}`;
  // A test process that dies without stopping it must not leave a server and its files behind.
  const onExit = () => {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener("exit", onExit);
    if (child.exitCode === null) {
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGKILL");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForHttp(`${base}/sparql`, child, join(dir, "virtuoso.log"));
    const dbaPassword = randomBytes(12).toString("hex");
    const user = "acms";
    const password = randomBytes(12).toString("hex");
    const sql = (statements: string, pwd = dbaPassword, login = "dba") => {
      const out = spawnSync(ISQL, [`127.0.0.1:${sqlPort}`, login, pwd, "VERBOSE=OFF", "BANNER=OFF", "PROMPT=OFF", "ERRORS=STDOUT"], {
        input: statements,
        encoding: "utf8",
      });
      const text = `${out.stdout ?? ""}${out.stderr ?? ""}`;
      if (out.status !== 0 || /\*\*\* Error/.test(text)) throw new Error(`isql failed: ${text.slice(0, 2000)}`);
      return text;
    };
    sql(`set password "dba" "${dbaPassword}";\n`, "dba");
    sql(
      [
        `DB.DBA.USER_CREATE('${user}', '${password}');`,
        `GRANT SPARQL_SELECT TO "${user}";`,
        `GRANT SPARQL_UPDATE TO "${user}";`,
        // Anonymous /sparql reads nothing; the service user reads and writes what is not private.
        `DB.DBA.RDF_DEFAULT_USER_PERMS_SET('nobody', 0);`,
        `DB.DBA.RDF_DEFAULT_USER_PERMS_SET('nobody', 0, 1);`,
        `DB.DBA.RDF_DEFAULT_USER_PERMS_SET('${user}', 3);`,
        `DB.DBA.RDF_DEFAULT_USER_PERMS_SET('${user}', 0, 1);`,
        `SPARQL INSERT DATA { GRAPH <${FOREIGN_GRAPH}> { <http://foreign.example/s> <http://foreign.example/p> "FOREIGN-SECRET" } };`,
        `DB.DBA.RDF_GRAPH_GROUP_CREATE('http://www.openlinksw.com/schemas/virtrdf#PrivateGraphs', 1);`,
        `DB.DBA.RDF_GRAPH_GROUP_INS('http://www.openlinksw.com/schemas/virtrdf#PrivateGraphs', '${FOREIGN_GRAPH}');`,
        "",
      ].join("\n"),
    );
    await updatesAllowed(user, password, sql);
    const authQueryUrl = `${base}/sparql-auth`;
    return {
      anonymousUrl: `${base}/sparql`,
      authQueryUrl,
      user,
      password,
      env: {
        ACMS_SPARQL_QUERY_URL: authQueryUrl,
        ACMS_SPARQL_UPDATE_URL: authQueryUrl,
        ACMS_SPARQL_USER: user,
        ACMS_SPARQL_PASSWORD: password,
      },
      sql: (s) => sql(s),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
