// @node-idempotency/core + storage-adapter-redis on a real express server on
// loopback, through the harness's express glue (node-idempotency-express.mjs).
import express from "express";
import { nodeIdempotencyMiddleware } from "./node-idempotency-express.mjs";
import { calls, expressRoute, jsonErrorHandler, listen, closeServer, callRoute, httpReply } from "./common.mjs";

export function configOf(cmd) {
  return { ttlSeconds: cmd.ttlSeconds || 0 };
}

export async function create(redisURL, cfg) {
  const { middleware, idempotency, storage } = await nodeIdempotencyMiddleware({
    redis: { url: redisURL },
    core: cfg.ttlSeconds ? { cacheTTLMS: cfg.ttlSeconds * 1000 } : {},
  });
  // The plugin calls onResponse fire-and-forget from res.send; track those
  // writes so a reply is only sent once the library's record is stored.
  const pending = new Set();
  const onResponse = idempotency.onResponse.bind(idempotency);
  idempotency.onResponse = (req, res) => {
    const p = onResponse(req, res);
    pending.add(p);
    p.finally(() => pending.delete(p)).catch(() => {});
    return p;
  };
  const app = express();
  app.set("env", "production");
  app.use(express.json());
  app.all("/{*path}", middleware, expressRoute());
  app.use(jsonErrorHandler);
  const server = await listen(app);
  const port = server.address().port;

  const redisKey = (cmd) => idempotency.getIdempotencyCacheKey(idempotency.getInternalRequest({
    headers: { "idempotency-key": cmd.key }, path: cmd.path || "/orders", method: cmd.method || "POST",
  }));

  return {
    redisKey,
    async invoke(c) {
      const { cmd } = c;
      const r = await callRoute(port, c);
      await Promise.allSettled([...pending]);
      return httpReply(c, r, redisKey(cmd));
    },
    async close() {
      await closeServer(server);
      await storage.disconnect?.();
    },
  };
}
