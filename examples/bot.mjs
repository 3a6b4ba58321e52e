// An Aluette Online bot from scratch: node's WebSocket and the vendored msgpack, nothing else.
// Usage: node examples/bot.mjs ws://HOST:PORT [DEALS [BOT_DELAY_MS]]; see docs/BOT-API.md.
// It says it is a bot, creates a table (DEALS deals, 5 by default), starts it (the server's
// bots fill the other seats and play without pause, or BOT_DELAY_MS), plays one whole match
// with legal cards, signals its partner, survives dropped connections and server restarts,
// and exits 0 when the match is over.

import { decode, encode } from "../server/web/static/js/vendor/msgpack.mjs";

if (typeof WebSocket === "undefined") {   // node 20: its WebSocket client is behind a flag
  const { spawn } = await import("node:child_process");
  const child = spawn(process.execPath, ["--experimental-websocket", "--no-warnings",
    ...process.argv.slice(1)], { stdio: "inherit" });
  for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
  child.on("exit", (code) => process.exit(code ?? 1));
}

const FRESH = Number.MAX_SAFE_INTEGER;                    // a last_seq that asks for a snapshot
const FATAL = new Set([4000, 4001, 4002, 4009, 1009]);    // close codes not to reconnect after
const MAJORS = { "3o": "monsieur", "3c": "madame", "2o": "borgne", "2c": "vache",
  "9c": "grand_neuf", "9o": "petit_neuf", "2b": "deux_de_chene", "2e": "deux_d_ecrit" };
const STRENGTH = { "3o": 19, "3c": 18, "2o": 17, "2c": 16, "9c": 15, "9o": 14, "2b": 13, "2e": 12 };
const RANKS = Object.fromEntries([..."1RCV9876543"].map((r, i) => [r, 11 - i]));  // aces: 11
const ACTIONS = new Set(["play", "chanter_vote", "discard"]);
const PACE = 1000 / 16;             // ms between frames: under the server's 20 per second
/** R3: the eight cartes majeures by name, then by rank; suits never matter. */
const strength = (card) => STRENGTH[card] ?? RANKS[card[0]];
const weakestFirst = (cards) => [...cards].sort((a, b) => strength(a) - strength(b));

const [url, deals = 5, bot_delay_ms = 0] = [process.argv[2], ...process.argv.slice(3).map(Number)];
const die = (why) => { console.error(why); process.exit(1); };
const bot = {   // the session, the table and what we know of it: it survives reconnections
  ids: 1, queue: [], nextAt: 0, token: null, ws: null, pending: new Map(), table: null,
  seat: null, toAct: null, phase: null, lastSeq: 0, replayLeft: 0, head: false, hand: [],
  trick: [], signalsOn: true, started: false, over: false, refused: 0, helloId: 0, resumeId: 0,
  commitment: null, contribution: crypto.randomUUID().replaceAll("-", ""),   // R8a: random hex
};

function send(msg, old = false) {
  if (!old) msg.id = bot.ids++;         // command ids: unique for the session's whole life
  if (!["hello", "ping", "resume"].includes(msg.type)) bot.pending.set(msg.id, msg);
  bot.queue.push(encode(msg));          // pending ones are resent, same id, after a reconnect
  if (bot.queue.length === 1) drain();
  return msg.id;
}

function drain() {                      // every frame counts towards the rate: pace them
  if (!bot.queue.length || bot.ws.readyState !== WebSocket.OPEN) return;
  const wait = bot.nextAt - Date.now();
  if (wait > 0) return void setTimeout(drain, wait);
  bot.nextAt = Math.max(bot.nextAt, Date.now()) + PACE;
  bot.ws.send(bot.queue.shift());
  drain();
}

function connect(backoff) {
  const ws = bot.ws = new WebSocket(url);
  ws.binaryType = "arraybuffer";        // frames are binary: one msgpack map each
  let heard = Date.now();
  const keepalive = setInterval(() => {   // idle: a ping proves the link is alive
    if (ws.readyState !== WebSocket.OPEN) return;
    if (Date.now() - heard > 40000) ws.close();
    else if (Date.now() - heard > 20000) send({ type: "ping" });
  }, 5000);
  ws.onopen = () => {                   // say hello first, as a bot, with our latest token
    backoff = 500;
    bot.helloId = send({ type: "hello", versions: [1], name: "example bot (node)",
      token: bot.token, bot: true });
  };
  ws.onmessage = (e) => {               // (not from a connection we gave up on)
    if (ws === bot.ws) { heard = Date.now(); receive(decode(new Uint8Array(e.data))); }
  };
  let gone = false;                     // node 20 may report a refused connection by an
  const lost = (code) => {              // error event alone, with no close event after it
    clearInterval(keepalive);
    if (gone || bot.over) return;
    [gone, bot.queue.length] = [true, 0];
    if (FATAL.has(code)) die(`closed with ${code}: not reconnecting`);
    setTimeout(() => connect(Math.min(backoff * 2, 10000)), backoff);   // back off, come back
  };
  ws.onclose = (e) => lost(e.code);
  ws.onerror = () => lost(1006);
}

function receive(msg) {
  if (msg.type === "event") return onEvent(msg.seq, msg.event);
  if (msg.type === "welcome") {
    bot.token = msg.session;            // keep only the newest token
    const unanswered = [...bot.pending.values()];
    if (bot.table !== null) resume(bot.lastSeq);
    else if (!bot.pending.size) send({ type: "create_table", options: { deals, bot_delay_ms } });
    for (const old of unanswered) send(old, true);   // the same id: never applied twice
  } else if (msg.type === "ok" || msg.type === "error") {
    const sent = bot.pending.get(msg.id);
    bot.pending.delete(msg.id);
    onReply(sent, msg);
  }
}

function resume(lastSeq) {
  bot.resumeId = send({ type: "resume", token: bot.token, table: bot.table, last_seq: lastSeq });
}

function onReply(sent, msg) {
  if (msg.type === "error") {
    if (msg.id === bot.helloId && msg.code === "bad_token") die("the server forgot our session");
    if (msg.id === bot.helloId) return;   // "later": the server closes, we come back
    if (msg.code === "shutting_down" && sent) { bot.pending.set(msg.id, sent); return; }
    bot.refused += 1;
    console.error(`refused: ${msg.code}: ${msg.message}`);
    if (sent && ACTIONS.has(sent.type)) resume(FRESH);   // our picture was stale: a snapshot
    return;
  }
  const r = msg.result;
  if (ACTIONS.has(sent?.type)) bot.toAct = null;   // applied: the turn has passed
  if (sent?.type === "create_table") {
    [bot.table, bot.seat] = [r.table, r.seat];
    console.log(`table ${bot.table}, seat ${bot.seat}`);
  } else if (sent?.type === "discard") bot.hand = bot.hand.filter((c) => !sent.cards.includes(c));
  else if (msg.id === bot.resumeId) [bot.head, bot.replayLeft] = [r.snapshot, r.replayed];
  maybeAct();
}

function onEvent(seq, ev) {
  const head = ev.type === "snapshot"
    || (["table_changed", "chat_history"].includes(ev.type) && (bot.head || seq === bot.lastSeq));
  if (head) bot.lastSeq = seq;          // a head re-bases the sequence
  else if (seq <= bot.lastSeq) return;  // a duplicate, around a resume
  else if (seq !== bot.lastSeq + 1) return resume(bot.lastSeq);   // a gap: ask for it
  else [bot.lastSeq, bot.replayLeft] = [seq, Math.max(0, bot.replayLeft - 1)];
  apply(ev);
  maybeAct();
}

function apply(ev) {
  switch (ev.type) {
    case "table_changed": {
      const info = ev.table;
      bot.head &&= info.status === "playing";   // a snapshot follows
      bot.signalsOn = info.options.signals !== "off";
      if (info.status === "waiting" && !bot.started && info.next_commitment) {
        [bot.started, bot.commitment] = [true, info.next_commitment];   // R8a
        send({ type: "start", table: bot.table, contribution: bot.contribution });
      }
      break;
    }
    case "snapshot": {
      const v = ev.view;
      Object.assign(bot, { head: false, seat: v.viewer, hand: [...v.hand], toAct: v.to_act,
        phase: v.phase, trick: v.trick.map(([, card]) => card) });
      bot.over ||= v.phase === "match_over";
      break;
    }
    case "deals_committed":
      if (ev.commitment !== bot.commitment) console.error("R8a: not the commitment we saw");
      break;
    case "hand_dealt": bot.hand = [...ev.cards]; signal(); break;
    case "talon_dealt": bot.hand.push(...ev.cards); break;   // R9: six more, six to discard
    case "turn": [bot.toAct, bot.phase] = [ev.seat, ev.phase]; break;
    case "card_played":
      bot.trick.push(ev.card);
      if (ev.seat === bot.seat) bot.hand = bot.hand.filter((c) => c !== ev.card);
      break;
    case "trick_done": bot.trick = []; break;
    case "match_over":
      bot.over = true;
      console.log(`match over: ${ev.result}, points [${ev.points.join(", ")}]; `
        + `${bot.refused} commands refused`);
      bot.ws.close(1000);
      break;
  }
}

/** R15: tell the partner our cartes majeures and our aces (not again in a replay). */
function signal() {
  if (!bot.signalsOn || bot.replayLeft) return;
  const aces = bot.hand.filter((c) => c[0] === "1").length;
  const said = bot.hand.filter((c) => c in MAJORS).map((c) => [MAJORS[c], null]);
  if (aces) said.push(["aces", aces]); else if (!said.length) said.push(["useless_hand", null]);
  for (const [name, n] of said) send({ type: "signal", table: bot.table, signal: name, n });
}

/** Act when it is our turn, once the replay is read and no action awaits its reply. */
function maybeAct() {
  if (bot.over || bot.toAct === null || bot.toAct !== bot.seat || bot.replayLeft || bot.head
      || [...bot.pending.values()].some((p) => ACTIONS.has(p.type))) return;
  if (bot.phase === "chanter_vote") {         // R9: never ask for the talon
    send({ type: "chanter_vote", table: bot.table, vote: false });
  } else if (bot.phase === "chanter_discard") {   // R9: keep the nine strongest
    send({ type: "discard", table: bot.table, cards: weakestFirst(bot.hand).slice(0, 6) });
  } else if (bot.phase === "play") {          // R10: every card in hand is legal
    const top = Math.max(0, ...bot.trick.map(strength));
    const winners = bot.hand.filter((c) => strength(c) > top);   // R11: beat the top card
    const [card] = weakestFirst(winners.length ? winners : bot.hand);
    send({ type: "play", table: bot.table, card });
  }
}

if (typeof WebSocket !== "undefined") connect(500);
