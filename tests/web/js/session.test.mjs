// The browser's session module against hand-made frames: the session rules of
// docs/PROTOCOL.md, case by case, as protocol/session.py's tests check them for Python.
// Run: node --test tests/web/js/

import assert from "node:assert/strict";
import { test } from "node:test";
import { decode, encode } from "../../../server/web/static/js/vendor/msgpack.mjs";
import { ClientSession, FRESH } from "../../../server/web/static/js/session.mjs";

const T = "t0123456789ab";
const sent = (outs) => outs.filter((o) => o.kind === "send").map((o) => decode(o.frame));
const ev = (seq, event, table = T) => encode({ type: "event", table, seq, event });
const welcome = (id, token = "tok-2") => encode({ type: "welcome", id, version: 1, session: token,
  player_id: "p1", name: "Ana" });
const info = (status = "playing") => ({ type: "table_changed", table: { table: T, status, seats: [] } });
const snapshot = (viewer = 0) => ({ type: "snapshot", view: { viewer, phase: "play" } });

/** An open session that joined T (ok, head at seq 5) and has seen events up to 7. */
function seated() {
  const s = new ClientSession("Ana", { token: "tok-1", firstId: 10 });
  const hello = sent(s.connect())[0];
  s.receive(welcome(hello.id));
  const [jid] = s.command("join", { table: T, seat: 0 });
  s.receive(encode({ type: "ok", id: jid, result: { table: T, seat: 0 } }));
  s.receive(ev(5, info()));
  s.receive(ev(5, snapshot()));
  s.receive(ev(6, { type: "card_played", seat: 0, card: "3o" }));
  s.receive(ev(7, { type: "turn", seat: 1, phase: "play" }));
  return s;
}

test("hello carries the token and the first id; the welcome rotates the token", () => {
  const s = new ClientSession("Ana", { token: "old", firstId: 42 });
  const [hello] = sent(s.connect());
  assert.deepEqual(hello, { type: "hello", id: 42, versions: [1], name: "Ana", token: "old" });
  const outs = s.receive(welcome(42, "new"));
  assert.equal(outs[0].kind, "welcomed");
  assert.equal(s.token, "new");
  assert.equal(s.state, "open");
  assert.equal(s.nextId, 43);
});

test("a head re-bases the sequence, then events come in order and duplicates are dropped", () => {
  const s = seated();
  assert.equal(s.tables.get(T).seq, 7);
  assert.deepEqual(s.receive(ev(7, { type: "turn", seat: 1, phase: "play" })), []);
  const outs = s.receive(ev(8, { type: "card_played", seat: 1, card: "4o" }));
  assert.deepEqual(outs.map((o) => [o.kind, o.seq]), [["event", 8]]);
});

test("a head's chat_history (1.4) carries the head's seq and is applied, not dropped", () => {
  const s = new ClientSession("Ana", { token: "tok-1", firstId: 10 });
  const hello = sent(s.connect())[0];
  s.receive(welcome(hello.id));
  const [jid] = s.command("spectate", { table: T });
  s.receive(encode({ type: "ok", id: jid, result: { table: T } }));
  s.receive(ev(5, info()));
  s.receive(ev(5, snapshot(null)));
  const history = { type: "chat_history", sender: "d".repeat(16), lines: [] };
  const outs = s.receive(ev(5, history));
  assert.deepEqual(outs.map((o) => [o.kind, o.seq, o.event?.type]), [["event", 5, "chat_history"]]);
  assert.equal(s.tables.get(T).seq, 5);
  // Anything else with a spent seq is a duplicate; a later chat_history would be a gap.
  assert.deepEqual(s.receive(ev(5, { type: "turn", seat: 1, phase: "play" })), []);
  assert.equal(sent(s.receive(ev(7, history)))[0].type, "resume");
});

test("a gap is answered by one resume from the last seq (PROTOCOL.md, Detecting a gap)", () => {
  const s = seated();
  const outs = s.receive(ev(9, { type: "card_played", seat: 1, card: "4o" }));
  const [resume] = sent(outs);
  assert.equal(resume.type, "resume");
  assert.equal(resume.last_seq, 7);
  assert.equal(resume.token, "tok-2");
  assert.deepEqual(s.receive(ev(10, { type: "turn", seat: 2 })), []); // one resume at a time
  // The replay then continues the sequence.
  s.receive(encode({ type: "ok", id: resume.id, result: { table: T, seat: 0, seq: 9,
    snapshot: false, replayed: 2 } }));
  assert.equal(s.receive(ev(8, { type: "card_played", seat: 1, card: "4o" }))[0].seq, 8);
  assert.equal(s.receive(ev(9, { type: "turn", seat: 2 }))[0].seq, 9);
});

test("unknown event types are skipped but their seq is counted; placeholders too", () => {
  const s = seated();
  const [unknown] = s.receive(ev(8, { type: "confetti", n: 3 }));
  assert.equal(unknown.event, null);
  assert.equal(unknown.unknown.type, "confetti");
  const [placeholder] = s.receive(ev(9, null));
  assert.equal(placeholder.seq, 9);
  assert.equal(s.receive(ev(10, { type: "turn", seat: 0 }))[0].seq, 10);
});

test("reconnect: hello with the newest token, resume every table, resend unanswered ids", () => {
  const s = seated();
  const [pid, outs] = s.command("play", { table: T, card: "Rb" });
  const original = outs[0].frame;
  const [lid] = s.command("list_tables", {}, { resend: false });
  const lost = s.connectionLost(1006);
  assert.deepEqual(lost.map((o) => [o.kind, o.id]), [["replied", lid]]); // not resent
  assert.equal(s.state, "disconnected");
  // A command made while offline waits for the connection, with its id kept.
  const [qid, queued] = s.command("signal", { table: T, signal: "madame", n: null });
  assert.deepEqual(queued, []);
  const [hello] = sent(s.connect());
  assert.equal(hello.token, "tok-2");
  const after = s.receive(welcome(hello.id, "tok-3"));
  assert.equal(after[0].kind, "welcomed");
  assert.equal(after[0].reconnected, true);
  const frames = sent(after);
  assert.deepEqual(frames.map((f) => f.type), ["resume", "play", "signal"]);
  assert.equal(frames[0].token, "tok-3");
  assert.equal(frames[0].last_seq, 7);
  assert.deepEqual([frames[1].id, frames[2].id], [pid, qid]);
  assert.deepEqual(after.filter((o) => o.kind === "send")[1].frame, original);
});

test("a resume answered by a snapshot re-bases, even backwards", () => {
  const s = seated();
  s.connectionLost(1001);
  const [hello] = sent(s.connect());
  const [resume] = sent(s.receive(welcome(hello.id)));
  s.receive(encode({ type: "ok", id: resume.id, result: { table: T, seat: 0, seq: 3,
    snapshot: true, replayed: 0 } }));
  assert.equal(s.receive(ev(3, info()))[0].seq, 3);
  assert.equal(s.receive(ev(3, snapshot()))[0].seq, 3);
  assert.equal(s.tables.get(T).seq, 3);
  assert.equal(s.receive(ev(4, { type: "turn", seat: 0 }))[0].seq, 4);
});

test("FRESH asks a resume for a snapshot (a reloaded page), as a msgpack integer", () => {
  const s = new ClientSession("Ana", { token: "tok-1" });
  s.tables.set(T, { table: T, seq: FRESH, seat: null, resuming: false, expectHead: false });
  const [hello] = sent(s.connect());
  const outs = s.receive(welcome(hello.id));
  const [resume] = sent(outs);
  assert.equal(resume.last_seq, 2 ** 53 - 1);
  // uint64 0x001fffffffffffff, not a float64 (0xcb): the server refuses a float seq.
  const raw = Buffer.from(outs.find((o) => o.kind === "send").frame);
  assert.ok(raw.includes(Buffer.from([0xcf, 0x00, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])));
  assert.ok(!raw.includes(0xcb));
});

test("a refused resume loses the table; storage_unavailable does not", () => {
  const s = seated();
  const [gap] = sent(s.receive(ev(12, { type: "turn", seat: 0 })));
  const outs = s.receive(encode({ type: "error", id: gap.id, code: "storage_unavailable",
    message: "" }));
  assert.ok(s.tables.has(T));
  assert.ok(!outs.some((o) => o.kind === "table_lost"));
  const [again] = sent(s.receive(ev(13, { type: "turn", seat: 0 })));
  const lost = s.receive(encode({ type: "error", id: again.id, code: "not_at_table", message: "" }));
  assert.equal(lost[0].kind, "table_lost");
  assert.ok(!s.tables.has(T));
  assert.deepEqual(s.receive(ev(14, { type: "turn", seat: 0 })), []); // not ours any more
});

test("bad_token: a new session, old seats and their commands dropped", () => {
  const s = seated();
  s.command("play", { table: T, card: "Rb" });
  s.connectionLost(1006);
  const [hello] = sent(s.connect());
  const outs = s.receive(encode({ type: "error", id: hello.id, code: "bad_token", message: "" }));
  assert.equal(outs[0].kind, "session_lost");
  const [fresh] = sent(outs);
  assert.equal(fresh.type, "hello");
  assert.equal(fresh.token, null);
  assert.ok(fresh.id > hello.id);
  assert.equal(s.tables.size, 0);
  assert.equal(s.pending.size, 0);
});

test("4009 (replaced) is fatal; 1006 and 1001 are not", () => {
  for (const [code, fatal] of [[4009, true], [4001, true], [1006, false], [1001, false]]) {
    const s = seated();
    const outs = s.connectionLost(code);
    assert.equal(outs.some((o) => o.kind === "fatal"), fatal, String(code));
    assert.equal(s.state, fatal ? "closed" : "disconnected");
  }
});

test("a hello refused with shutting_down or rate_limited is retried later, not fatal", () => {
  for (const code of ["shutting_down", "rate_limited", "storage_unavailable"]) {
    const s = new ClientSession("Ana", { token: "t" });
    const [hello] = sent(s.connect());
    const outs = s.receive(encode({ type: "error", id: hello.id, code, message: "" }));
    assert.deepEqual(outs, []);
    assert.equal(s.state, "disconnected");
  }
  const s = new ClientSession("Ana");
  const [hello] = sent(s.connect());
  const outs = s.receive(encode({ type: "error", id: hello.id, code: "invalid_field", message: "x" }));
  assert.equal(outs[0].kind, "fatal");
});

test("shutting_down to a command keeps it for the resend after reconnecting", () => {
  const s = seated();
  const [pid] = s.command("play", { table: T, card: "Rb" });
  assert.deepEqual(s.receive(encode({ type: "error", id: pid, code: "shutting_down", message: "" })), []);
  assert.ok(s.pending.has(pid));
  const ok = s.receive(encode({ type: "ok", id: pid, result: { table: T } }));
  assert.equal(ok[0].kind, "replied");
  assert.ok(!s.pending.has(pid));
});

test("frames that are not maps with a type are skipped, never thrown", () => {
  const s = seated();
  for (const bad of [encode([1, 2]), encode("x"), Uint8Array.of(0xc1), encode({ type: 5 }),
    encode({ type: "event", table: T, seq: "8", event: null }),
    encode({ type: "event", table: T, seq: 8, event: "x" })]) {
    assert.deepEqual(s.receive(bad), []);
  }
  assert.equal(s.tables.get(T).seq, 7);
});

test("leave forgets the table; events for it are then ignored", () => {
  const s = seated();
  const [lid] = s.command("leave", { table: T });
  s.receive(encode({ type: "ok", id: lid, result: { table: T, seat: 0 } }));
  assert.ok(!s.tables.has(T));
  assert.deepEqual(s.receive(ev(8, { type: "turn", seat: 0 })), []);
});

test("protocol 1.3's events are known: deals_committed, rematch_accepted, chat", () => {
  const s = seated();
  const payloads = [
    { type: "deals_committed", match: 2, commitment: "ab".repeat(32), contributions: [null, null, null, null] },
    { type: "rematch_accepted", seat: 1 },
    { type: "chat", from_seat: 1, name: "Bo", text: "gg", sender: "0123456789abcdef" },
  ];
  payloads.forEach((payload, i) => {
    const [out] = s.receive(ev(8 + i, payload));
    assert.equal(out.seq, 8 + i);
    assert.deepEqual(out.event, payload);
    assert.equal(out.unknown, null);
  });
});
