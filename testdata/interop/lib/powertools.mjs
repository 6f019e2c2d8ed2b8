// Powertools for AWS Lambda (TypeScript) idempotency with its cache
// (Redis/Valkey) persistence layer and the @redis/client it documents.
import { makeIdempotent, IdempotencyConfig } from "@aws-lambda-powertools/idempotency";
import { CachePersistenceLayer } from "@aws-lambda-powertools/idempotency/cache";
import { createClient } from "@redis/client";
import { calls, enterHandler, statusFor, HandlerError, log } from "./common.mjs";

export const DEFAULT_FUNCTION_NAME = "idemctl-interop-fn";
export const DEFAULT_JMESPATH = 'headers."idempotency-key"';
export const DEFAULT_REMAINING_MS = 60000;

export function configOf(cmd) {
  return {
    ttlSeconds: cmd.ttlSeconds || 0,
    functionName: cmd.functionName ?? DEFAULT_FUNCTION_NAME,
    keyPrefix: cmd.keyPrefix || "",
    jmesPath: cmd.jmesPath || DEFAULT_JMESPATH,
    validation: !!cmd.validation,
    noContext: !!cmd.noContext,
  };
}

// eventOf is the API-Gateway-shaped event a call sends: the idempotency key
// in a header, the body as a JSON string.
export function eventOf(cmd) {
  return {
    httpMethod: cmd.method || "POST",
    path: cmd.path || "/orders",
    headers: { "idempotency-key": cmd.key },
    body: JSON.stringify(cmd.body ?? {}),
  };
}

export async function create(redisURL, cfg) {
  const client = await createClient({ url: redisURL }).connect();
  client.on("error", (e) => log("powertools redis client:", e.message));
  // The persistence layer reads AWS_LAMBDA_FUNCTION_NAME once, in its
  // constructor, as the base of its key prefix.
  const prev = process.env.AWS_LAMBDA_FUNCTION_NAME;
  process.env.AWS_LAMBDA_FUNCTION_NAME = cfg.functionName;
  const persistenceStore = new CachePersistenceLayer({ client });
  if (prev === undefined) delete process.env.AWS_LAMBDA_FUNCTION_NAME;
  else process.env.AWS_LAMBDA_FUNCTION_NAME = prev;

  const config = new IdempotencyConfig({
    eventKeyJmesPath: cfg.jmesPath,
    throwOnNoIdempotencyKey: true,
    ...(cfg.ttlSeconds ? { expiresAfterSeconds: cfg.ttlSeconds } : {}),
    ...(cfg.validation ? { payloadValidationJmesPath: "body" } : {}),
  });
  const keyPrefix = cfg.keyPrefix || undefined;
  // What IdempotencyHandler's constructor does on every invocation; done
  // once here so the key can be computed before the first call.
  persistenceStore.configure({ config, keyPrefix });

  const handler = makeIdempotent(async (event, context) => {
    const c = calls.get(context.awsRequestId);
    await enterHandler(c);
    const { cmd } = c;
    const status = statusFor(cmd);
    const result = {
      statusCode: status,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(cmd.response ?? {}),
    };
    if (cmd.outcome === "error" && (cmd.errorVia || "throw") === "throw") {
      throw new HandlerError(`handler failed with status ${status}`, status);
    }
    return result;
  }, { persistenceStore, config, keyPrefix });

  return {
    redisKey(cmd) {
      return persistenceStore.getHashedIdempotencyKey(eventOf(cmd));
    },
    async invoke(c) {
      const { cmd } = c;
      const event = eventOf(cmd);
      const remaining = cmd.remainingMs || DEFAULT_REMAINING_MS;
      const context = {
        awsRequestId: c.id,
        functionName: cfg.functionName,
        invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${cfg.functionName}`,
        callbackWaitsForEmptyEventLoop: true,
        ...(cfg.noContext ? {} : { getRemainingTimeInMillis: () => remaining }),
      };
      // The event goes back with the reply: idemctl find derives the key
      // from it as an engineer would from the invocation's log.
      const reply = { ran: false, redisKey: persistenceStore.getHashedIdempotencyKey(event), event };
      try {
        const result = await handler(event, context);
        reply.status = result?.statusCode ?? null;
        let body = result?.body;
        try { body = typeof body === "string" ? JSON.parse(body) : body; } catch { /* keep */ }
        reply.body = body ?? null;
      } catch (e) {
        reply.status = e instanceof HandlerError ? e.status : null;
        reply.body = null;
        reply.errorName = e.name;
        reply.error = e.message + (e.cause ? `: ${e.cause.name}: ${e.cause.message}` : "");
      }
      reply.ran = c.ran;
      return reply;
    },
    async close() {
      await client.close?.().catch(() => {});
      if (client.isOpen) await client.quit?.().catch(() => {});
    },
  };
}
