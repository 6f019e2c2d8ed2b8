// Express glue for @node-idempotency/core, written for this harness.
//
// The official express plugin (@node-idempotency/express) is not published
// on the npm registry, so the harness drives the published core and redis
// adapter itself, the way that plugin's documentation and source describe
// (read, not copied): the core decides (onRequest / onResponse) and writes
// the record; the glue only translates HTTP. What the core stores is
// therefore the plugin's format:
//   - on a response, `additional` holds the HTTP status (`statusCode`) and
//     the Content-Type, and the payload goes to `body` below status 400 and
//     to `error` from 400 up (JSON bodies parsed back into values);
//   - on a replay, the stored status is set, the stored Content-Type and
//     `Idempotent-Replayed: true` are sent, then the body — or the stored
//     error is handed to express's error handling with that status;
//   - the core's own refusals map to 409 (in progress, with Retry-After: 1),
//     422 (another body under the same key) and 400 (key missing or long).
import core from "@node-idempotency/core";
import redisAdapter from "@node-idempotency/storage-adapter-redis";

const { Idempotency, IdempotencyError, IdempotencyErrorCodes } = core;
const { RedisStorageAdapter } = redisAdapter;

const refusalStatus = new Map([
  [IdempotencyErrorCodes.REQUEST_IN_PROGRESS, 409],
  [IdempotencyErrorCodes.IDEMPOTENCY_FINGERPRINT_MISSMATCH, 422],
  [IdempotencyErrorCodes.IDEMPOTENCY_KEY_MISSING, 400],
  [IdempotencyErrorCodes.IDEMPOTENCY_KEY_LEN_EXEEDED, 400],
]);

function contentTypeOf(res) {
  const v = res.getHeader("content-type");
  return v == null ? undefined : String(v);
}

// stored turns what the handler sent into the response the core keeps.
function stored(res, payload) {
  const additional = { statusCode: res.statusCode };
  const type = contentTypeOf(res);
  if (type) additional["Content-Type"] = type;
  let value = payload;
  if (typeof value === "string" && type && type.toLowerCase().includes("application/json")) {
    try {
      value = JSON.parse(value);
    } catch {
      // not JSON after all: kept as sent
    }
  }
  return res.statusCode < 400 ? { additional, body: value } : { additional, error: value };
}

function replay(res, next, cached) {
  const extra = cached.additional || {};
  if (extra.statusCode) res.status(extra.statusCode);
  if (extra["Content-Type"]) res.setHeader("Content-Type", extra["Content-Type"]);
  res.setHeader("Idempotent-Replayed", "true");
  if (cached.body) {
    res.send(cached.body);
    return;
  }
  next(cached.error);
}

// nodeIdempotencyMiddleware returns the middleware and the core instance
// (the driver awaits the core's writes before it answers).
export async function nodeIdempotencyMiddleware(options) {
  const storage = new RedisStorageAdapter(options.redis);
  await storage.connect();
  const idempotency = new Idempotency(storage, options.core || {});
  const middleware = async (req, res, next) => {
    const request = { headers: req.headers, body: req.body, path: req.url, method: req.method };
    let cached;
    try {
      cached = await idempotency.onRequest(request);
    } catch (err) {
      if (!(err instanceof IdempotencyError)) return next(err);
      if (err.code === IdempotencyErrorCodes.REQUEST_IN_PROGRESS) res.setHeader("Retry-After", "1");
      res.status(refusalStatus.get(err.code) || 500);
      return next(err);
    }
    if (cached) return replay(res, next, cached);
    const send = res.send.bind(res);
    res.send = (body) => {
      void idempotency.onResponse(request, stored(res, body));
      return send(body);
    };
    next();
  };
  return { middleware, idempotency, storage };
}
