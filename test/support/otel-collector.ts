import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** One span as the collector forwarded it (OTLP/JSON), with its resource's attributes beside it. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
  events: unknown[];
  resource: Record<string, string | number | boolean>;
}

/** A real OpenTelemetry Collector (test/support/otel-collector/) receiving OTLP on loopback, and what it forwarded. */
export interface Collector {
  /** The OTLP/HTTP endpoint to export to (OTEL_EXPORTER_OTLP_ENDPOINT). */
  endpoint: string;
  /** The OTLP/gRPC endpoint to export to (OTEL_EXPORTER_OTLP_ENDPOINT with OTEL_EXPORTER_OTLP_PROTOCOL=grpc). */
  grpcEndpoint: string;
  /** Every span received so far. */
  spans(): CollectedSpan[];
  /** Every request body the collector forwarded, raw (for scanning everything exported). */
  rawBodies(): string[];
  /** Waits until `ready(spans)` holds, polling as the collector forwards (the test's timeout bounds it). */
  waitFor(ready: (spans: CollectedSpan[]) => boolean): Promise<CollectedSpan[]>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

function valueOf(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  return JSON.stringify(v);
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list ?? []) out[kv.key] = valueOf(kv.value);
  return out;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The collector binary, built once from the Go module proxy and cached (build.sh). */
export function collectorBinary(): string {
  return execFileSync("bash", [join(__dirname, "otel-collector", "build.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
}

/**
 * Starts the collector with the OTLP receiver on free loopback ports (HTTP and gRPC) and the OTLP/HTTP exporter (JSON, no
 * queue, no retries) pointed at a sink in this process, so the test reads exactly what the collector
 * received and processed. Its own telemetry is off (no metrics port to collide with other tests).
 */
export async function startCollector(): Promise<Collector> {
  const bin = collectorBinary();
  const bodies: string[] = [];
  const spans: CollectedSpan[] = [];
  const sink: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      bodies.push(body);
      try {
        const parsed = JSON.parse(body) as {
          resourceSpans?: {
            resource?: { attributes?: KeyValue[] };
            scopeSpans?: {
              spans?: {
                traceId: string;
                spanId: string;
                parentSpanId?: string;
                name: string;
                kind: number;
                attributes?: KeyValue[];
                status?: { code?: number; message?: string };
                events?: unknown[];
              }[];
            }[];
          }[];
        };
        for (const rs of parsed.resourceSpans ?? []) {
          const resource = attributesOf(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? "",
                name: s.name,
                kind: s.kind,
                attributes: attributesOf(s.attributes),
                status: s.status ?? {},
                events: s.events ?? [],
                resource,
              });
        }
      } catch {
        // Not JSON: kept raw all the same; a test that expects spans fails on their absence.
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  const sinkPort = (sink.address() as { port: number }).port;
  const port = await freePort();
  let grpcPort = await freePort();
  while (grpcPort === port) grpcPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "acms-otelcol-"));
  const configPath = join(dir, "config.yaml");
  writeFileSync(
    configPath,
    [
      "receivers:",
      "  otlp:",
      "    protocols:",
      "      http:",
      `        endpoint: 127.0.0.1:${port}`,
      "      grpc:",
      `        endpoint: 127.0.0.1:${grpcPort}`,
      "exporters:",
      "  otlp_http:",
      `    endpoint: http://127.0.0.1:${sinkPort}`,
      "    encoding: json",
      "    compression: none",
      "    retry_on_failure:",
      "      enabled: false",
      "    sending_queue:",
      "      enabled: false",
      "service:",
      "  telemetry:",
      "    logs:",
      "      level: warn",
      "    metrics:",
      "      level: none",
      "  pipelines:",
      "    traces:",
      "      receivers: [otlp]",
      "      exporters: [otlp_http]",
      "",
    ].join("\n"),
  );
  const proc: ChildProcess = spawn(bin, ["--config", `file:${configPath}`], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (proc.exitCode === null) {
      proc.kill("SIGTERM");
      await exited;
    }
    await new Promise<void>((resolve) => sink.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  };
  // Ready once the receiver answers an (empty) export.
  for (;;) {
    if (proc.exitCode !== null) {
      await stop();
      throw new Error(`the collector exited: ${stderr}`);
    }
    const ok = await fetch(`${endpoint}/v1/traces`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint,
    grpcEndpoint: `http://127.0.0.1:${grpcPort}`,
    spans: () => [...spans],
    rawBodies: () => [...bodies],
    async waitFor(ready) {
      while (!ready(spans)) {
        if (proc.exitCode !== null) throw new Error(`the collector exited: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return [...spans];
    },
    close: stop,
  };
}
