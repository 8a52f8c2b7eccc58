import http from "node:http";
import type net from "node:net";
import type { Registry } from "prom-client";

/** The running `/metrics` listener. */
export interface MetricsListener {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text format) from `registry` on a plain HTTP/1.1 listener of its own,
 * so scrapes never share the API port, its connection caps or its keys. Anything else is 404.
 */
export async function listenMetrics(registry: Registry, host: string, port: number): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: GET /metrics\n");
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": registry.contentType }).end(req.method === "HEAD" ? undefined : text),
      () => res.writeHead(500, { "content-type": "text/plain" }).end("metrics unavailable\n"),
    );
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => {
      const why = err.code === "EADDRINUSE" ? "the port is already in use" : err.code === "EACCES" ? "permission denied" : err.message;
      reject(new Error(`cannot serve metrics on ${host}:${port}: ${why} (set ACMS_METRICS_PORT)`));
    });
    server.listen(port, host, () => {
      server.removeAllListeners("error");
      resolve();
    });
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
