/**
 * The one shape every port's conformance suite takes: `run<Port>Suite({ name, create, skip, unavailable })`.
 *
 * - `skip` maps a test's title to the reason it does not apply to this adapter; the skipped test stays
 *   in the output with the reason in its title. A skip that names no test of the suite fails (a renamed
 *   test must not leave a stale skip behind), and so does a suite whose every test is skipped.
 * - `unavailable` says the engine the adapter needs cannot run here (a binary missing, a server not
 *   started). That outcome is loud, never a quiet pass: under CI (`process.env.CI`) it is a failing test
 *   naming the engine; locally it prints a warning and lists the suite's tests as skipped with the reason.
 */

/** What every suite's entry takes besides its own `create`. */
export interface ConformanceOptions {
  /** The adapter (or adapter mode) under test; it names the suite in the output. */
  name: string;
  /** Tests that do not apply to this adapter: title to reason. */
  skip?: Record<string, string>;
  /** Set when the engine this adapter needs cannot run here. */
  unavailable?: EngineUnavailable;
}

/** Why an adapter's engine cannot run here. */
export interface EngineUnavailable {
  /** The engine, as a reader of the output knows it (e.g. "PostgreSQL 15", "Virtuoso 7"). */
  engine: string;
  reason: string;
}

/** Registers one test of a suite (honouring the suite's skips). */
export type ConformanceTest = (title: string, fn: () => Promise<void> | void, timeoutMs?: number) => void;

/** Whether this run is CI, where an unavailable engine fails instead of warning. */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.CI;
  return v !== undefined && v !== "" && v !== "0" && v.toLowerCase() !== "false";
}

/**
 * Declares the suite of `port` for one adapter: a `describe` named after both, inside which `body`
 * registers its hooks and its tests through the `test` it is handed (never the global one, so skips and
 * an unavailable engine apply to every test).
 */
export function conformanceSuite(port: string, opts: ConformanceOptions, body: (test: ConformanceTest) => void): void {
  const title = `${port} conformance: ${opts.name}`;
  if (opts.unavailable) {
    declareUnavailable(title, port, opts.unavailable, body);
    return;
  }
  const skip = opts.skip ?? {};
  describe(title, () => {
    const seen = new Set<string>();
    body((name, fn, timeoutMs) => {
      seen.add(name);
      const reason = skip[name];
      if (reason) it.skip(`${name} [skipped: ${reason}]`, async () => fn());
      else it(name, async () => fn(), timeoutMs);
    });
    const stale = Object.keys(skip).filter((name) => !seen.has(name));
    if (stale.length > 0) {
      it("every skip names a test of the suite", () => {
        throw new Error(`skip names no test of the ${port} suite: ${stale.map((s) => JSON.stringify(s)).join(", ")}`);
      });
    }
    if (seen.size > 0 && [...seen].every((name) => skip[name])) {
      it("at least one test of the suite runs", () => {
        throw new Error(`every test of the ${port} suite is skipped for ${opts.name}: the suite checks nothing`);
      });
    }
  });
}

function declareUnavailable(title: string, port: string, why: EngineUnavailable, body: (test: ConformanceTest) => void): void {
  const message = `ENGINE UNAVAILABLE: ${why.engine} (${why.reason}): the ${port} suite did not run`;
  const ci = isCi();
  if (!ci) process.stderr.write(`\n*** ${title}: ${message} ***\n\n`);
  describe(title, () => {
    if (ci) {
      it(`${why.engine} is available`, () => {
        throw new Error(`${message}; under CI every engine a suite needs must be installed and started`);
      });
    } else {
      it.skip(message, () => undefined);
    }
    // The suite's tests, listed as skipped so the output shows what did not run. Their hooks never run.
    describe.skip(`not run: ${why.engine} unavailable`, () => {
      body((name, fn) => it.skip(`${name} [skipped: ${why.engine} unavailable]`, async () => fn()));
    });
  });
}
