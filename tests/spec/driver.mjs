// The browser's modules under the specification's vectors (tests/spec/spec.py says the
// shape): session.mjs, model.mjs and explain.mjs, each driven step by step, with what it
// observed printed as JSON in the same shape tests/spec/pydriver.py gives for the Python
// client. The expectations are checked in Python (tests/spec/spec.py), once for both.
//
// Usage: node driver.mjs AREA < VECTORS.json   (AREA: session, model or explain; the input
// maps each vector's file name to the vector, its `given` steps written out)

import { readFileSync } from "node:fs";
import { encode } from "../../server/web/static/js/vendor/msgpack.mjs";
import { ClientSession } from "../../server/web/static/js/session.mjs";

const hex = (bytes) => Buffer.from(bytes).toString("hex");

// ------------------------------------------------------------------ session

function output(out) {
  switch (out.kind) {
    case "send":
      return { send_hex: hex(out.frame) };
    case "welcomed":
      return { welcomed: { reconnected: out.reconnected } };
    case "replied": {
      const r = out.reply;
      const said = r === null ? null : r.type === "error" ? `error ${r.code}` : r.type;
      return { replied: { id: out.id, command: out.command, reply: said } };
    }
    case "event":
      return { event: { table: out.table, seq: out.seq, type: out.event?.type ?? null,
        unknown: out.unknown?.type ?? null } };
    case "table_lost":
      return { table_lost: { table: out.table, code: out.code } };
    case "session_lost":
      return { session_lost: {} };
    case "fatal":
      return { fatal: out.reason };
    default:
      return { unknown_output: out.kind };
  }
}

function sessionState(s) {
  const tables = {};
  for (const [t, st] of s.tables) {
    tables[t] = { seq: st.seq, seat: st.seat, resuming: st.resuming, expect_head: st.expectHead };
  }
  return {
    state: s.state, token: s.token, player_id: s.playerId, name: s.name, version: s.version,
    next_id: s.nextId, table_names: [...s.tables.keys()].sort(), tables,
    pending: [...s.pending.values()].sort((a, b) => a.id - b.id)
      .map((p) => ({ id: p.id, type: p.type, resend: p.resend, table: p.table })),
  };
}

function sessionStep(s, step) {
  if ("connect" in step) return s.connect();
  if ("receive" in step) return s.receive(encode(step.receive));
  if ("receive_hex" in step) return s.receive(Uint8Array.from(Buffer.from(step.receive_hex, "hex")));
  if ("lost" in step) return s.connectionLost(step.lost);
  if ("command" in step) {
    const { type, ...fields } = step.command;
    return s.command(type, fields, { resend: step.resend ?? true })[1];
  }
  if ("resume" in step) return s.resume(step.resume, step.last_seq ?? null);
  if ("forget" in step) {
    s.forget(step.forget);
    return [];
  }
  throw new Error(`no input in ${JSON.stringify(step)}`);
}

async function runSession(vector) {
  const made = vector.new ?? {};
  const s = new ClientSession(made.name ?? "Ana", { token: made.token ?? null,
    firstId: made.first_id ?? 1 });
  const observed = [];
  for (const step of vector.steps) {
    try {
      observed.push({ out: sessionStep(s, step).map(output), state: sessionState(s) });
    } catch (err) {
      observed.push({ raised: `${err.name}: ${err.message}` });
      break;
    }
  }
  return observed;
}

// ------------------------------------------------------------------ main

const DRIVERS = { session: runSession };

const [area] = process.argv.slice(2);
const drive = DRIVERS[area];
if (!drive) throw new Error(`unknown area ${area}`);
const given = JSON.parse(readFileSync(0, "utf8"));
const result = {};
for (const [name, vector] of Object.entries(given)) result[name] = await drive(vector);
process.stdout.write(JSON.stringify(result));
