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
import { TableModel } from "../../server/web/static/js/model.mjs";
import { dealFacts, dealOutcome } from "../../server/web/static/js/explain.mjs";

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
    case "matched":
      return { matched: { table: out.table, seat: out.seat, rated: out.rated } };
    case "home":
      return { home: { table: out.table, url: out.url } };
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
    return s.command(type, fields, { resend: step.resend ?? null })[1];
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

// ------------------------------------------------------------------ table model

const plain = (x) => (x === null || x === undefined ? null : JSON.parse(JSON.stringify(x)));

function shows(m) {
  return {
    seat: m.seat, spectator: m.spectator, status: m.status, match: m.match, my_turn: m.myTurn,
    stale: m.stale, info: plain(m.info), view: plain(m.view),
    chat: m.chat.map((c) => ({ from_seat: c.from_seat, name: c.name, text: c.text,
      sender: c.sender })),
    speakers: Object.fromEntries([...m.speakers].map(([k, v]) => [k, { name: v.name,
      seat: v.seat }])),
    muted: [...m.muted].sort(), my_sender: m.mySender, commitment: m.commitment,
    fair: m.fairNote === null ? null : { ok: m.fairNote.ok, of: m.fairNote.of },
  };
}

async function modelStep(m, step) {
  if ("event" in step) {
    m.apply(step.event);
    if (m.fairCheck) await m.fairCheck; // R8a's record check is asynchronous in the page
  } else if ("discarding" in step) {
    m.pendingDiscard = [...step.discarding];
  } else if ("contributing" in step) {
    m.contributing(step.contributing.contribution, step.contributing.seen ?? null);
  } else {
    throw new Error(`no input in ${JSON.stringify(step)}`);
  }
}

async function runModel(vector) {
  const made = vector.new ?? {};
  const m = new TableModel(made.table ?? "t");
  m.seat = made.seat ?? null;
  const observed = [];
  for (const step of vector.steps) {
    try {
      await modelStep(m, step);
      observed.push({ shows: shows(m) });
    } catch (err) {
      observed.push({ raised: `${err.name}: ${err.message}` });
      break;
    }
  }
  return observed;
}

// ------------------------------------------------------------------ deal explanation

function explainStep(step) {
  const { winners, mordienne_on: on = true, tricks_seen: seen = true } = step.deal;
  const o = dealOutcome(winners, on);
  const f = dealFacts({ winner: o.winner, points: o.points, mordienne: o.mordienne,
    trick_counts: o.counts, tricks: seen ? winners.map((w) => ({ winner: w })) : null });
  return {
    outcome: { winner: o.winner, points: o.points, counts: o.counts, mordienne: o.mordienne },
    facts: { winner: f.winner, most: f.most, tied: f.tied, spoiled: f.spoiled,
      spoiled_tricks: f.spoiledTricks, reached_at: f.reachedAt, mordienne: f.mordienne,
      early: f.early, team: f.team, points: f.points },
  };
}

async function runExplain(vector) {
  const observed = [];
  for (const step of vector.steps) {
    try {
      observed.push(explainStep(step));
    } catch (err) {
      observed.push({ raised: `${err.name}: ${err.message}` });
      break;
    }
  }
  return observed;
}

// ------------------------------------------------------------------ main

const DRIVERS = { session: runSession, model: runModel, explain: runExplain };

const [area] = process.argv.slice(2);
const drive = DRIVERS[area];
if (!drive) throw new Error(`unknown area ${area}`);
const given = JSON.parse(readFileSync(0, "utf8"));
const result = {};
for (const [name, vector] of Object.entries(given)) result[name] = await drive(vector);
process.stdout.write(JSON.stringify(result));
