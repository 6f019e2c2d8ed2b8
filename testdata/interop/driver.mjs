#!/usr/bin/env node
// Interop driver: runs requests through real idempotency libraries against a
// real Redis. One JSON command per line on stdin, exactly one JSON reply per
// line on stdout; logs go to stderr. See README.md for the protocol.
//
//   node driver.mjs redis://127.0.0.1:6379/0        (or INTEROP_REDIS_URL)
//   node driver.mjs --oneshot redis://...           (internal: crash calls)
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { calls, newCall, writeLine, log } from "./lib/common.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const oneshot = args[0] === "--oneshot";
if (oneshot) args.shift();
const redisURL = args[0] || process.env.INTEROP_REDIS_URL;

const LIBS = {
  powertools: () => import("./lib/powertools.mjs"),
  "node-idempotency": () => import("./lib/node-idempotency.mjs"),
  "express-idempotency": () => import("./lib/express-idempotency.mjs"),
};

const PINNED = [
  "@aws-lambda-powertools/idempotency",
  "@redis/client",
  "@node-idempotency/core",
  "@node-idempotency/storage-adapter-redis",
  "express-idempotency",
  "express-idempotency-redis-adapter",
  "express",
  "redis", // node-idempotency's redis adapter client (node-redis 4)
];

function versions() {
  const out = { node: process.versions.node };
  for (const name of PINNED) {
    try {
      out[name] = JSON.parse(fs.readFileSync(path.join(here, "node_modules", name, "package.json"), "utf8")).version;
    } catch {
      out[name] = null;
    }
  }
  try {
    out["express-idempotency-redis-adapter>@redis/client"] = JSON.parse(fs.readFileSync(path.join(here,
      "node_modules/express-idempotency-redis-adapter/node_modules/@redis/client/package.json"), "utf8")).version;
  } catch { /* hoisted */ }
  out["node-idempotency express glue"] = "lib/node-idempotency-express.mjs (the harness's own)";
  return out;
}

// One configured library instance per distinct (lib, config).
const instances = new Map();
async function instanceFor(cmd) {
  const loader = LIBS[cmd.lib];
  if (!loader) throw new Error(`unknown lib ${JSON.stringify(cmd.lib)} (want powertools, node-idempotency or express-idempotency)`);
  const mod = await loader();
  const cfg = mod.configOf(cmd);
  const k = `${cmd.lib}|${JSON.stringify(cfg)}`;
  if (!instances.has(k)) instances.set(k, mod.create(redisURL, cfg));
  try {
    return await instances.get(k);
  } catch (e) {
    instances.delete(k);
    throw e;
  }
}

function validate(cmd) {
  if (typeof cmd.key !== "string" || cmd.key === "") throw new Error(`${cmd.op}: "key" must be a non-empty string`);
  const outcome = cmd.outcome || "ok";
  if (!["ok", "error", "crash"].includes(outcome)) throw new Error(`${cmd.op}: unknown outcome ${JSON.stringify(cmd.outcome)}`);
  cmd.outcome = outcome;
}

// ---- crash calls run in a child: the same driver in --oneshot mode.
function spawnCrash(cmd) {
  const child = spawn(process.execPath, [path.join(here, "driver.mjs"), "--oneshot", redisURL], {
    stdio: ["pipe", "pipe", "inherit"], env: process.env,
  });
  const lines = readline.createInterface({ input: child.stdout });
  const queue = [];
  let waiter = null;
  lines.on("line", (l) => {
    let m;
    try { m = JSON.parse(l); } catch { m = { fatal: `child said: ${l}` }; }
    if (waiter) { const w = waiter; waiter = null; w(m); } else queue.push(m);
  });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const next = () => new Promise((resolve) => {
    if (queue.length) resolve(queue.shift());
    else {
      waiter = resolve;
      exited.then(() => setImmediate(() => { if (waiter === resolve) { waiter = null; resolve(null); } }));
    }
  });
  child.stdin.on("error", () => {});
  child.stdin.write(JSON.stringify(cmd) + "\n");
  return { child, next, exited };
}

async function crashOutcome(h, redisKey) {
  const { code, signal } = await h.exited;
  return {
    ran: true, crashed: true, status: null, body: null, redisKey,
    errorName: "Crashed",
    error: `handler process ${signal ? `killed by ${signal}` : `exited with code ${code}`} inside the handler`,
  };
}

async function crashCall(cmd) {
  const h = spawnCrash(cmd);
  const first = await h.next();
  if (!first) throw new Error("crash child exited without a word");
  if (first.fatal) throw new Error(first.fatal);
  if (first.reply) { await h.exited; return first.reply; } // handler never ran: library answered
  return crashOutcome(h, first.redisKey);
}

// ---- held requests
const held = new Map();

async function start(cmd) {
  if (!cmd.id) throw new Error('start: "id" is required');
  if (held.has(cmd.id)) throw new Error(`start: id ${cmd.id} is already held`);
  validate(cmd);
  if (cmd.outcome === "crash") {
    const h = spawnCrash(cmd);
    const first = await h.next();
    if (!first) throw new Error("crash child exited without a word");
    if (first.fatal) throw new Error(first.fatal);
    if (first.reply) { await h.exited; return { started: false, ...first.reply }; }
    held.set(cmd.id, { crash: h, redisKey: first.redisKey });
    return { started: true, redisKey: first.redisKey };
  }
  const inst = await instanceFor(cmd);
  const c = newCall(cmd, { hold: true });
  const done = inst.invoke(c).finally(() => calls.delete(c.id));
  done.catch(() => {});
  const first = await Promise.race([c.entered, done.then(() => false, () => false)]);
  if (!first) {
    return { started: false, ...(await done) };
  }
  held.set(cmd.id, { call: c, done, redisKey: inst.redisKey(cmd) });
  return { started: true, redisKey: inst.redisKey(cmd) };
}

async function finish(cmd) {
  const h = held.get(cmd.id);
  if (!h) throw new Error(`finish: no held request with id ${JSON.stringify(cmd.id)}`);
  held.delete(cmd.id);
  if (h.crash) {
    h.crash.child.stdin.write("finish\n");
    return crashOutcome(h.crash, h.redisKey);
  }
  h.call.release();
  return await h.done;
}

async function call(cmd) {
  validate(cmd);
  if (cmd.outcome === "crash") return crashCall(cmd);
  const inst = await instanceFor(cmd);
  const c = newCall(cmd);
  try {
    return await inst.invoke(c);
  } finally {
    calls.delete(c.id);
  }
}

async function handle(cmd) {
  switch (cmd.op) {
    case "ping": return { ok: true, versions: versions(), redisURL };
    case "call": return call(cmd);
    case "start": return start(cmd);
    case "finish": return finish(cmd);
    default: throw new Error(`unknown op ${JSON.stringify(cmd.op)}`);
  }
}

async function shutdown(code) {
  const t = setTimeout(() => process.exit(code), 3000);
  t.unref();
  for (const h of held.values()) {
    if (h.crash) h.crash.child.kill("SIGKILL");
    else h.call.release();
  }
  for (const p of instances.values()) {
    try { await (await p).close(); } catch (e) { log("close:", e.message); }
  }
  process.exit(code);
}

// ---- oneshot child: run one command whose handler crashes.
async function runOneshot() {
  const rl = readline.createInterface({ input: process.stdin });
  const it = rl[Symbol.asyncIterator]();
  const { value: line } = await it.next();
  const cmd = JSON.parse(line);
  const inst = await instanceFor(cmd);
  const redisKey = inst.redisKey(cmd);
  const c = newCall(cmd, {
    hold: cmd.op === "start",
    onEnter: () => writeLine({ entered: true, redisKey }),
  });
  if (cmd.op === "start") it.next().then(() => c.release());
  const reply = await inst.invoke(c);
  writeLine({ reply }); // only reached when the handler did not run
  await shutdown(0);
}

if (!redisURL) {
  writeLine({ fatal: "no Redis URL: pass it as the first argument or set INTEROP_REDIS_URL" });
  process.exit(2);
}

process.on("unhandledRejection", (e) => log("unhandled rejection:", e?.stack || e));

if (oneshot) {
  runOneshot().catch((e) => { writeLine({ fatal: String(e?.stack || e) }); process.exit(1); });
} else {
  const rl = readline.createInterface({ input: process.stdin });
  let chain = Promise.resolve();
  rl.on("line", (line) => {
    if (line.trim() === "") return;
    chain = chain.then(async () => {
      let cmd;
      try {
        cmd = JSON.parse(line);
      } catch (e) {
        writeLine({ fatal: `bad JSON command: ${e.message}` });
        return;
      }
      try {
        writeLine(await handle(cmd));
      } catch (e) {
        log(`${cmd.op} failed:`, e?.stack || e);
        writeLine({ fatal: String(e?.message || e) });
      }
    });
  });
  rl.on("close", () => { chain.then(() => shutdown(0)); });
  log(`ready, redis ${redisURL}`);
}
