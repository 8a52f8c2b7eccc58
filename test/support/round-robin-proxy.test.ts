import http from "node:http";
import http2 from "node:http2";
import { listen, type Listener } from "../../src/server/transport/listener.js";
import { startRoundRobinProxy, type RoundRobinProxy } from "./round-robin-proxy.js";

/**
 * The proxy the postgres-replicas project puts in front of two replicas: if it sent every call of a
 * connection to one upstream, or dropped trailers or resets, that project would pass without testing two
 * replicas. Two tiny upstreams here (on the server's own listener: h2c and HTTP/1.1 on one port) answer
 * with their name and tell when a stream of theirs was reset by the client.
 */
interface Upstream {
  url: string;
  /** Resolves when the hanging stream of this upstream is reset by the other side. */
  aborted: Promise<void>;
  listener: Listener;
}

async function upstream(name: string): Promise<Upstream> {
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<void>((resolve) => (onAbort = resolve));
  const streams = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): boolean => {
    const path = String(headers[":path"]);
    stream.on("error", () => undefined);
    if (path === "/hang") {
      // Headers and one message, then nothing: only the client's cancellation ends it.
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      stream.write(name);
      stream.on("close", () => {
        if (stream.rstCode !== http2.constants.NGHTTP2_NO_ERROR) onAbort();
      });
      return true;
    }
    if (path === "/trailers-only") {
      stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "5", "grpc-message": name }, { endStream: true });
      return true;
    }
    let body = "";
    stream.setEncoding("utf8");
    stream.on("data", (d: string) => (body += d));
    stream.on("end", () => {
      stream.respond({ ":status": 200, "x-upstream": name }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0", "x-body": body }));
      stream.end(name);
    });
    return true;
  };
  const requests = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      res.setHeader("x-upstream", name);
      res.end(`${name} ${req.method} ${req.url} ${body}`);
    });
  };
  const listener = await listen(requests, "127.0.0.1", 0, undefined, streams);
  return { url: `http://127.0.0.1:${listener.port}`, aborted, listener };
}

/** One HTTP/2 request over `session`: the answer's headers, body and trailers. */
function h2Request(
  session: http2.ClientHttp2Session,
  path: string,
  body = "",
): Promise<{ headers: http2.IncomingHttpHeaders; body: string; trailers: http2.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ":method": "POST", ":path": path });
    let headers: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    let text = "";
    req.setEncoding("utf8");
    req.on("response", (h) => (headers = h));
    req.on("trailers", (t) => (trailers = t));
    req.on("data", (d: string) => (text += d));
    req.on("end", () => resolve({ headers, body: text, trailers }));
    req.on("error", reject);
    req.end(body);
  });
}

/** One HTTP/1.1 request over `agent` (one keep-alive connection): the answer's body. */
function h1Request(url: string, agent: http.Agent, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/h1`, { method: "POST", agent }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve(text));
    });
    req.on("error", reject);
    req.end(body);
  });
}

let a: Upstream;
let b: Upstream;
let proxy: RoundRobinProxy;
beforeAll(async () => {
  a = await upstream("a");
  b = await upstream("b");
  proxy = await startRoundRobinProxy([a.url, b.url]);
});
afterAll(async () => {
  await proxy.close();
  await a.listener.close(0);
  await b.listener.close(0);
});

test("HTTP/2: the streams of one connection go to each upstream in turn, with headers, body and trailers as sent", async () => {
  const session = http2.connect(proxy.url);
  try {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await h2Request(session, "/echo", `call ${i}`));
    expect(
      answers.map((r) => [r.headers[":status"], r.headers["x-upstream"], r.body, r.trailers["grpc-status"], r.trailers["x-body"]]),
    ).toEqual([
      [200, "a", "a", "0", "call 0"],
      [200, "b", "b", "0", "call 1"],
      [200, "a", "a", "0", "call 2"],
      [200, "b", "b", "0", "call 3"],
    ]);
    // A trailers-only answer stays one header block that ends the stream (gRPC clients read its status there).
    const only = await h2Request(session, "/trailers-only");
    expect([only.headers["grpc-status"], only.headers["grpc-message"], only.body, only.trailers]).toEqual(["5", "a", "", {}]);
  } finally {
    session.close();
  }
});

test("HTTP/2: a client's reset of a stream resets the upstream's stream", async () => {
  const session = http2.connect(proxy.url);
  try {
    // The next stream goes to b (the trailers-only call above went to a).
    const req = session.request({ ":method": "POST", ":path": "/hang" });
    req.on("error", () => undefined);
    const first = await new Promise<string>((resolve) => req.once("data", (d: Buffer) => resolve(d.toString())));
    expect(first).toBe("b");
    req.close(http2.constants.NGHTTP2_CANCEL);
    await b.aborted;
  } finally {
    session.close();
  }
});

test("HTTP/1.1: the requests of one keep-alive connection go to each upstream in turn", async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await h1Request(proxy.url, agent, `req ${i}`));
    // Streams and requests share one turn: the last HTTP/2 stream went to b.
    expect(answers).toEqual(["a POST /h1 req 0", "b POST /h1 req 1", "a POST /h1 req 2"]);
  } finally {
    agent.destroy();
  }
  expect(proxy.sent).toEqual([5, 4]);
});
