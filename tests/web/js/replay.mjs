// Replays a recorded real session through the browser's session and model modules
// (server/web/static/js) and checks them against the server's own snapshots.
//
// Usage: node replay.mjs RECORDING.json
// The recording (made by tests/web/test_js.py against a real server) holds every frame one
// client received, in order, the commands it sent (with the number of frames received
// before each), and checkpoints: fresh snapshots the client asked for while the table was
// waiting on it. At each checkpoint the model built from the events must equal the
// server's view; the session must never have seen a gap (no resume of its own).

import { readFileSync } from "node:fs";
import { ClientSession } from "../../../server/web/static/js/session.mjs";
import { TableModel } from "../../../server/web/static/js/model.mjs";
import { sortByStrength } from "../../../server/web/static/js/cards.mjs";

const rec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const frames = rec.frames.map((hex) => Uint8Array.from(Buffer.from(hex, "hex")));
const failures = [];
const fail = (msg) => failures.push(msg);

const session = new ClientSession(rec.name);
const models = new Map();
const seqs = new Map();
let events = 0;

function carry(outputs) {
  for (const out of outputs) {
    if (out.kind === "event") {
      events += 1;
      const last = seqs.get(out.table);
      const head = out.event && (out.event.type === "table_changed" || out.event.type === "snapshot");
      if (!head && last !== undefined && out.seq !== last + 1) fail(`seq ${out.seq} after ${last}`);
      seqs.set(out.table, out.seq);
      if (!models.has(out.table)) models.set(out.table, new TableModel(out.table));
      const model = models.get(out.table);
      if (out.event) model.apply(out.event);
      // As main.mjs does (a rematch's deals_committed keeps the model's newer seat).
      if (model.view === null && out.event?.type !== "deals_committed") {
        model.seat = session.tables.get(out.table)?.seat ?? null;
      }
    } else if (out.kind === "send") {
      // Only the recorded commands may be sent: a resume of our own means a gap was seen.
      fail(`the session sent a frame of its own: ${Buffer.from(out.frame).toString("hex")}`);
    } else if (out.kind === "fatal" || out.kind === "table_lost" || out.kind === "session_lost") {
      fail(`unexpected ${out.kind}`);
    }
  }
}

const NO_RESEND = new Set(["ping", "resume", "list_tables"]);

// A snapshot's view.options are the engine's options (server/tablestate.py ENGINE_OPTIONS);
// the server's own table options (bots, timers, auto start) show their defaults there, not
// the table's values, so they are compared for the engine's keys only. The page reads the
// table's values from table_changed (TableInfo.options).
const ENGINE_OPTIONS = ["deals", "target_points", "mordienne", "chanter", "partner_draw",
  "first_dealer", "signals", "signal_risk"];

function normalize(view) {
  const v = JSON.parse(JSON.stringify(view));
  v.options = Object.fromEntries(ENGINE_OPTIONS.map((k) => [k, v.options?.[k] ?? null]));
  v.hand = sortByStrength(v.hand ?? []);
  v.discarded = [...(v.discarded ?? [])].sort();
  return v;
}

function diff(a, b, path, out) {
  if (JSON.stringify(a) === JSON.stringify(b)) return;
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) diff(a[k], b[k], `${path}.${k}`, out);
    return;
  }
  out.push(`${path}: model ${JSON.stringify(a)} != server ${JSON.stringify(b)}`);
}

const sentAt = new Map();
for (const [index, cmd] of rec.sent) {
  if (!sentAt.has(index)) sentAt.set(index, []);
  sentAt.get(index).push(cmd);
}
const checks = new Map(rec.checkpoints.map((c) => [c.at, c]));
let checked = 0;

for (let i = 0; i <= frames.length; i += 1) {
  const cp = checks.get(i);
  if (cp) {
    const model = models.get(cp.table);
    if (!model?.view) fail(`checkpoint ${i}: no view`);
    else {
      const out = [];
      diff(normalize(model.view), normalize(cp.view), "view", out);
      if (model.seat !== cp.view.viewer) out.push(`seat ${model.seat} != ${cp.view.viewer}`);
      out.forEach((d) => fail(`checkpoint at frame ${i}: ${d}`));
      checked += 1;
    }
  }
  for (const cmd of sentAt.get(i) ?? []) {
    if (cmd.type === "hello") {
      const [first] = session.connect();
      const id = session.nextId - 1;
      if (id !== cmd.id) fail(`hello id ${id} != recorded ${cmd.id}`);
      void first;
      continue;
    }
    const { type, id, ...fields } = cmd;
    // As the page does (table.mjs): our own discard is not echoed back (R9), the model
    // learns which six cards went when the server confirms it.
    if (type === "discard") models.get(fields.table).pendingDiscard = [...fields.cards];
    const [cid, outs] = session.command(type, fields, { resend: !NO_RESEND.has(type) });
    if (cid !== id) fail(`command ${type}: id ${cid} != recorded ${id}`);
    for (const o of outs) if (o.kind !== "send") fail(`command ${type} gave ${o.kind}`);
  }
  if (i < frames.length) carry(session.receive(frames[i]));
}
if (checked !== rec.checkpoints.length) fail(`checked ${checked} of ${rec.checkpoints.length} checkpoints`);
if (session.pending.size) fail(`unanswered commands: ${[...session.pending.keys()]}`);
console.log(JSON.stringify({ name: rec.name, frames: frames.length, events, checkpoints: checked,
  failures }));
process.exit(failures.length ? 1 : 0);
