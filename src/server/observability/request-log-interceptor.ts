import { randomUUID } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeName, OK } from "./code-name.js";
import { principalKey, requestIdKey } from "../access/context-keys.js";
import type { RequestLog } from "./request-log.js";
import { withMessage } from "../transport/with-message.js";

/** The header that carries a call's request id, in and out. */
export const REQUEST_ID_HEADER = "x-request-id";

/** A caller's id is kept only when it is a plain token, so logs never carry arbitrary bytes from the wire. */
const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function codeOf(err: unknown): Code {
  return err instanceof ConnectError ? err.code : Code.Internal;
}

/** Iterates `messages`, calling `done` once with the code the stream ended with (Canceled when it was stopped). */
function observed<T>(messages: AsyncIterable<T>, done: (code: Code) => void): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const it = messages[Symbol.asyncIterator]();
      let finished = false;
      const finish = (code: Code) => {
        if (finished) return;
        finished = true;
        done(code);
      };
      return {
        async next() {
          try {
            const r = await it.next();
            if (r.done) finish(OK);
            return r;
          } catch (err) {
            finish(codeOf(err));
            throw err;
          }
        },
        async return(value?: unknown) {
          finish(Code.Canceled);
          return (await it.return?.(value)) ?? { done: true, value: undefined };
        },
      } as AsyncIterator<T>;
    },
  };
}

/**
 * Gives every call a request id (the caller's `x-request-id` when it sends a plain one, else a new UUID),
 * echoes it in the response headers (errors too), puts it in the call's context values (`requestIdKey`: the
 * access interceptor logs internal errors with it), and logs the finished call through `log`. Registered
 * outermost, so its line has the final code.
 */
export function createRequestLogInterceptor(log: RequestLog): Interceptor {
  return (next) => async (req) => {
    const given = req.header.get(REQUEST_ID_HEADER);
    const requestId = given !== null && ACCEPTED_ID.test(given) ? given : randomUUID();
    const started = process.hrtime.bigint();
    req.contextValues.set(requestIdKey, requestId);
    const logCall = (code: Code) =>
      log.call(
        {
          requestId,
          service: req.service.typeName,
          method: req.method.name,
          code: codeName(code),
          durationMs: Number(process.hrtime.bigint() - started) / 1e6,
          principal: req.contextValues.get(principalKey)?.name,
        },
        code !== OK,
      );
    try {
      const res = await next(req);
      res.header.set(REQUEST_ID_HEADER, requestId);
      if (res.stream) return withMessage(res, observed(res.message, logCall));
      logCall(OK);
      return res;
    } catch (err) {
      const connectError = ConnectError.from(err);
      connectError.metadata.set(REQUEST_ID_HEADER, requestId);
      logCall(connectError.code);
      throw connectError;
    }
  };
}
