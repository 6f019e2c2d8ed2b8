// Shared pieces of the interop driver: per-call state, the handler body
// every library wraps, the loopback HTTP client and the express error handler.
import http from "node:http";
import fs from "node:fs";

// Calls in flight in this process, by call id. A library's handler finds its
// call through a value the library passes through untouched: the Lambda
// context's awsRequestId (Powertools) or the X-Interop-Call-Id request header
// (express libraries).
export const calls = new Map();
let seq = 0;

export function newCall(cmd, { hold = false, onEnter = null } = {}) {
  const c = { id: `c${process.pid}-${++seq}`, cmd, ran: false, gate: null, release: () => {} };
  c.entered = new Promise((resolve) => {
    c.markEntered = () => {
      c.ran = true;
      if (onEnter) onEnter(c);
      resolve(true);
    };
  });
  if (hold) {
    c.gate = new Promise((resolve) => { c.release = resolve; });
  }
  calls.set(c.id, c);
  return c;
}

// crashNow ends this process at once, the way a killed container or an OOM
// kill would: no finally blocks, no pending writes.
export function crashNow() {
  process.kill(process.pid, "SIGKILL");
}

// enterHandler is the common start of every handler body: note that it ran,
// report entry, wait for the gate of a held call, crash if told to.
export async function enterHandler(c) {
  c.markEntered();
  if (c.gate) await c.gate;
  if (c.cmd.outcome === "crash") crashNow();
}

export function statusFor(cmd) {
  if (cmd.status) return cmd.status;
  return cmd.outcome === "error" ? 500 : 200;
}

export function writeLine(obj) {
  fs.writeSync(1, JSON.stringify(obj) + "\n");
}

export function log(...args) {
  process.stderr.write(`[interop ${process.pid}] ${args.join(" ")}\n`);
}

const replyHeaders = [
  "content-type", "idempotent-replayed", "retry-after", "idempotency-key", "x-interop-library-error",
];

// callRoute sends a harness command to the express app on port as the
// client would: its method and path (POST /orders by default), its key in
// the idempotency-key header, and the call id for the hooks to tag.
export function callRoute(port, c) {
  const { cmd } = c;
  return httpCall({
    port, method: cmd.method || "POST", path: cmd.path || "/orders",
    headers: { "idempotency-key": cmd.key, "x-interop-call-id": c.id },
    body: cmd.body ?? {},
  });
}

// httpCall sends one request to a loopback express server with no keep-alive
// and returns {status, headers, text, body}.
export function httpCall({ port, method, path, headers, body }) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request({
      host: "127.0.0.1", port, method, path, agent: false,
      headers: {
        ...headers,
        ...(payload ? { "content-type": "application/json", "content-length": payload.length } : {}),
        connection: "close",
      },
    }, (res) => {
      const chunks = [];
      res.on("data", (d) => chunks.push(d));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed = text;
        try { parsed = text === "" ? null : JSON.parse(text); } catch { /* keep text */ }
        const h = {};
        for (const name of replyHeaders) {
          if (res.headers[name] !== undefined) h[name] = String(res.headers[name]);
        }
        resolve({ status: res.statusCode, headers: h, text, body: parsed });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    if (payload) req.write(payload);
    req.end();
  });
}

// HandlerError is what a handler told to fail raises.
export class HandlerError extends Error {
  constructor(message, status) {
    super(message);
    this.name = "HandlerError";
    this.status = status;
    this.fromHandler = true;
  }
}

// jsonErrorHandler is a typical express JSON error handler. Errors the
// idempotency middleware raises are marked with X-Interop-Library-Error so
// the driver can tell them from the handler's own failures. A HandlerError
// marked useDefaultHandler goes on to express's built-in finalhandler, which
// answers with res.end() and so never passes through res.send().
export function jsonErrorHandler(err, req, res, next) {
  if (err && err.useDefaultHandler) return next(err);
  const isError = err instanceof Error;
  let status = res.statusCode >= 400 ? res.statusCode : 500;
  if (err && typeof err.status === "number" && err.status >= 400 && err.status < 600) status = err.status;
  if (isError && !err.fromHandler) res.setHeader("X-Interop-Library-Error", "1");
  const body = isError ? { error: err.message, ...(err.code ? { code: err.code } : {}) } : err;
  res.status(status).json(body ?? { error: "unknown error" });
}

// listen starts an express app on a free loopback port.
export function listen(app) {
  return new Promise((resolve, reject) => {
    const server = http.createServer(app);
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

export function closeServer(server) {
  return new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
  });
}

// httpReply turns an HTTP answer into the driver's reply.
export function httpReply(c, r, redisKey) {
  const libErr = r.headers["x-interop-library-error"] === "1";
  const reply = {
    ran: c.ran,
    status: r.status,
    body: r.body,
    headers: r.headers,
    redisKey,
  };
  if (libErr) {
    reply.error = r.body && typeof r.body === "object" ? r.body.error : r.text;
    reply.errorName = r.body && r.body.code ? r.body.code : "LibraryError";
  } else if (c.ran && c.cmd.outcome === "error") {
    reply.error = `handler failed with status ${statusFor(c.cmd)}`;
    reply.errorName = "HandlerError";
  }
  return reply;
}

// expressRoute is the route handler both express libraries wrap: it answers
// per the call's outcome. isHit, when given, is express-idempotency's
// documented check that the middleware already answered.
export function expressRoute({ isHit, reportError } = {}) {
  return async (req, res, next) => {
    if (isHit && isHit(req)) return;
    const c = calls.get(req.get("x-interop-call-id"));
    if (!c) {
      res.status(500).json({ error: "interop: unknown call id" });
      return;
    }
    await enterHandler(c);
    const { cmd } = c;
    const status = statusFor(cmd);
    if (cmd.outcome === "error") {
      const via = cmd.errorVia || "send";
      if (via === "report" && reportError) await reportError(req);
      if (via === "next" || via === "default-handler") {
        const e = new HandlerError(`handler failed with status ${status}`, status);
        if (via === "default-handler") e.useDefaultHandler = true;
        next(e);
        return;
      }
    }
    if (cmd.emptyBody) {
      res.status(status).send();
      return;
    }
    res.status(status).json(cmd.response ?? (cmd.outcome === "error" ? { error: `handler failed with status ${status}` } : {}));
  };
}
