// express-idempotency with express-idempotency-redis-adapter on a real
// express server on loopback, wired as both READMEs show.
import express from "express";
import expressIdempotency from "express-idempotency";
import redisAdapterModule from "express-idempotency-redis-adapter";
import { expressRoute, jsonErrorHandler, listen, closeServer, callRoute, httpReply } from "./common.mjs";

const RedisAdapter = redisAdapterModule.default ?? redisAdapterModule;

export function configOf(cmd) {
  return { ttlSeconds: cmd.ttlSeconds || 0 };
}

export async function create(redisURL, cfg) {
  const adapter = new RedisAdapter({
    connectionConfig: { url: redisURL },
    ...(cfg.ttlSeconds ? { ttl: cfg.ttlSeconds } : {}),
  });
  await adapter.connect();
  // The middleware writes the completed record fire-and-forget after
  // res.send; a transparent wrapper lets the driver wait for those writes.
  const pending = new Set();
  const track = (p) => {
    pending.add(p);
    p.finally(() => pending.delete(p)).catch(() => {});
    return p;
  };
  const dataAdapter = {
    findByIdempotencyKey: (k) => adapter.findByIdempotencyKey(k),
    create: (r) => track(adapter.create(r)),
    update: (r) => track(adapter.update(r)),
    delete: (k) => track(adapter.delete(k)),
  };
  const middleware = expressIdempotency.idempotency({ dataAdapter });
  // The module keeps the last created service as "shared"; take ours now.
  const service = expressIdempotency.getSharedIdempotencyService();

  const app = express();
  app.set("env", "production");
  app.use(express.json());
  app.all("/{*path}", middleware, expressRoute({
    isHit: (req) => service.isHit(req),
    reportError: (req) => service.reportError(req),
  }));
  app.use(jsonErrorHandler);
  const server = await listen(app);
  const port = server.address().port;

  return {
    redisKey: (cmd) => cmd.key,
    async invoke(c) {
      const { cmd } = c;
      const r = await callRoute(port, c);
      // Let the fire-and-forget hook run, then wait for its write.
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.allSettled([...pending]);
      return httpReply(c, r, cmd.key);
    },
    async close() {
      await closeServer(server);
      await adapter.disconnect().catch(() => {});
    },
  };
}
