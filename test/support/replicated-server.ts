import type { AcmsServer } from "../../src/server/composition/server.js";
import { startRoundRobinProxy, type RoundRobinProxy } from "./round-robin-proxy.js";

/** Replica servers seen as one: the proxy's address, and the replicas behind it. */
export interface ReplicatedServer extends AcmsServer {
  readonly replicas: readonly AcmsServer[];
  readonly proxy: RoundRobinProxy;
}

/**
 * Puts `replicas` (servers on one shared database) behind one round-robin proxy and answers as one
 * server: `url` and `port` are the proxy's, so a client calling it has consecutive calls answered by
 * different replicas. Closing stops the replicas first (in-flight calls finish through the proxy within
 * `graceMs`), then the proxy, and fails when a replica answered no call at all.
 * @example const server = await behindOneAddress([a, b]); createAcmsClient({ baseUrl: server.url });
 */
export async function behindOneAddress(replicas: readonly AcmsServer[]): Promise<ReplicatedServer> {
  const proxy = await startRoundRobinProxy(replicas.map((r) => r.url));
  return {
    port: proxy.port,
    url: proxy.url,
    replicas,
    proxy,
    async close(graceMs?: number) {
      try {
        await Promise.all(replicas.map((r) => r.close(graceMs)));
      } finally {
        await proxy.close();
      }
      // A pair that was wired wrong (every call to one replica) would pass its tests without testing two.
      const total = proxy.sent.reduce((a, b) => a + b, 0);
      const idle = proxy.sent.findIndex((n) => n === 0);
      if (total >= replicas.length && idle >= 0)
        throw new Error(`replica ${idle + 1} of ${replicas.length} answered none of ${total} calls`);
    },
  };
}
