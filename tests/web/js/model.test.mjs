// The browser's table model, event by event (the replay in test_js.py checks it against
// the server's snapshots at quiet moments; these check what happens in between).
// Run: node --test tests/web/js/

import assert from "node:assert/strict";
import { test } from "node:test";
import { TableModel } from "../../../server/web/static/js/model.mjs";

function playing(seat = 0) {
  const m = new TableModel("t1");
  m.apply({ type: "table_changed", table: { table: "t1", status: "playing",
    options: { chanter: false }, seats: [{ kind: "human", connected: true }, {}, {}, {}] } });
  m.seat = seat;
  m.apply({ type: "deal_started", deal_number: 1, dealer: 3 });
  m.apply({ type: "hand_dealt", seat, cards: ["4o", "3o", "Rb", "1e", "5c", "6e", "7b", "8c", "9e"] });
  return m;
}

test("the hand is sorted by strength (R3); the first turn is the server's to give", () => {
  const m = playing();
  assert.deepEqual(m.view.hand.slice(0, 3), ["3o", "1e", "Rb"]);
  assert.equal(m.view.leader, 0);
  assert.equal(m.view.to_act, null); // no turn guessed (tests/spec/model/deal_started.json)
  m.apply({ type: "turn", seat: 0, phase: "play" });
  assert.ok(m.myTurn);
});

test("after the fourth card nobody is to act until the server's turn names the leader (R11)", () => {
  const m = playing(1);
  for (const [seat, card] of [[0, "2o"], [1, "3o"], [2, "4b"], [3, "5b"]]) {
    m.apply({ type: "card_played", seat, card });
  }
  assert.equal(m.view.to_act, null);
  assert.ok(!m.myTurn); // seat 1 is left of seat 0, but no turn is guessed
  m.apply({ type: "trick_done", number: 1, leader: 0, cards: ["2o", "3o", "4b", "5b"], winner: 1 });
  assert.equal(m.view.leader, 1);
  assert.equal(m.view.to_act, null); // the server's turn names who leads
  m.apply({ type: "turn", seat: 1, phase: "play" });
  assert.ok(m.myTurn);
  assert.deepEqual(m.view.trick_counts, [0, 1, 0, 0]);
  assert.ok(!m.view.hand.includes("3o"));
});

test("a spoiled trick leaves the same leader (R11) and counts for nobody", () => {
  const m = playing();
  m.apply({ type: "trick_done", number: 1, leader: 2, cards: ["1o", "1c", "4b", "5b"], winner: null });
  assert.equal(m.view.leader, 2);
  assert.equal(m.view.to_act, null);
  assert.deepEqual(m.view.trick_counts, [0, 0, 0, 0]);
});

test("partner draw moves our seat (R7); signals in and out are kept (R15, R16)", () => {
  const m = new TableModel("t1");
  m.seat = 0;
  m.apply({ type: "partner_draw", cards: [[0, "5o"], [1, "3c"]], seating: [2, 0, 1, 3], dealer: 2 });
  assert.equal(m.seat, 2);
  assert.equal(m.view.dealer, 2);
  m.apply({ type: "signal", from_seat: 0, signal: "aces", n: 2 });
  m.apply({ type: "signal_sent", signal: "madame", n: null });
  assert.deepEqual(m.view.signals, [{ from_seat: 0, signal: "aces", n: 2 }]);
  assert.deepEqual(m.view.signals_sent, [{ signal: "madame", n: null }]);
});

test("our discard without the six cards known (another page, a reload) marks the model stale", () => {
  const m = new TableModel("t1");
  m.apply({ type: "table_changed", table: { table: "t1", status: "playing",
    options: { chanter: true }, seats: [] } });
  m.seat = 0;
  m.apply({ type: "deal_started", deal_number: 1, dealer: 0 });
  m.apply({ type: "chanter_result", accepted: true });
  m.apply({ type: "chanter_discarded", seat: 1 });
  assert.ok(!m.stale);
  m.apply({ type: "chanter_discarded", seat: 0 });
  assert.ok(m.stale);
});

test("presence events update the seat's connection flag", () => {
  const m = playing();
  m.apply({ type: "player_disconnected", seat: 0 });
  assert.equal(m.seatInfo(0).connected, false);
  m.apply({ type: "player_connected", seat: 0 });
  assert.equal(m.seatInfo(0).connected, true);
});

test("deals_committed opens a new match (a rematch): a fresh view, as at a first start", () => {
  const m = playing(2);
  m.apply({ type: "deal_scored", deal_number: 1, dealer: 3, trick_counts: [3, 2, 2, 2],
    winner: 0, points: [1, 0], mordienne: false, totals: [1, 0] });
  m.apply({ type: "match_over", points: [1, 0], result: "team0", record: {} });
  assert.equal(m.status, "finished"); // no table_changed comes for it (server/table.py)
  m.info.seats = [{ kind: "human" }, { kind: "bot" }, { kind: "human" }, { kind: "bot" }];
  m.apply({ type: "rematch_accepted", seat: 0 });
  assert.deepEqual(m.rematch, [0]);
  assert.deepEqual(m.rematchWaitingFor, [2]); // bots always agree
  m.apply({ type: "rematch_accepted", seat: 0 }); // the same seat once only
  assert.deepEqual(m.rematch, [0]);
  m.apply({ type: "deals_committed", match: 2, commitment: "ab".repeat(32),
    contributions: [null, null, null, null] });
  assert.equal(m.view, null);
  assert.equal(m.match, 2);
  assert.equal(m.seat, 2);
  assert.equal(m.matchOver, null);
  assert.equal(m.lastDeal, null);
  assert.equal(m.status, "playing");
  assert.deepEqual(m.rematch, []);
  m.apply({ type: "deal_started", deal_number: 1, dealer: 1 });
  assert.deepEqual(m.view.points, [0, 0]);
  assert.deepEqual(m.view.deals, []);
  assert.equal(m.view.deal_number, 1);
  assert.equal(m.view.phase, "play");
});

test("chat lines are kept apart from the view, bounded, cleaned, and ours are marked", () => {
  const m = playing(1);
  m.apply({ type: "chat", from_seat: 1, name: "Bo", text: "hi", sender: "a".repeat(16) });
  m.apply({ type: "chat", from_seat: 0, name: "Ana\u202e", text: " <b>x</b>\u0007 ",
    sender: "b".repeat(16) });
  assert.deepEqual(m.chat.map((l) => [l.name, l.text, l.mine]),
    [["Bo", "hi", true], ["Ana", "<b>x</b>", false]]);
  assert.equal(m.mySender, "a".repeat(16));
  assert.deepEqual(m.speakers.get("b".repeat(16)), { name: "Ana", seat: 0 });
  m.apply({ type: "snapshot", view: { viewer: 1, phase: "play", hand: [], deals: [], points: [0, 0] } });
  assert.equal(m.chat.length, 2); // a snapshot replaces the view, never the conversation
  for (let i = 0; i < 150; i += 1) {
    m.apply({ type: "chat", from_seat: 0, name: "Ana", text: `n${i}`, sender: "b".repeat(16) });
  }
  assert.equal(m.chat.length, 100);
  assert.equal(m.chat[99].text, "n149");
  assert.equal(m.chat[0].text, "n50");
});

test("a head's chat_history replaces the log and names our sender (protocol 1.4)", () => {
  const m = playing(1);
  m.apply({ type: "chat", from_seat: 2, name: "Cy", text: "stale", sender: "e".repeat(16) });
  m.apply({ type: "chat_history", sender: "d".repeat(16), lines: [
    // seat 1's earlier line came from another player (its sender is not ours)
    { type: "chat", from_seat: 1, name: "Old", text: "bye", sender: "a".repeat(16) },
    { type: "chat", from_seat: null, name: "Me", text: "watching\u0007", sender: "d".repeat(16) },
    { type: "chat", from_seat: 1, name: "Bo", text: "hi", sender: "d".repeat(16) },
  ] });
  assert.deepEqual(m.chat.map((l) => [l.name, l.text, l.mine]),
    [["Old", "bye", false], ["Me", "watching", true], ["Bo", "hi", true]]);
  assert.equal(m.mySender, "d".repeat(16));
  assert.deepEqual(m.speakers.get("a".repeat(16)), { name: "Old", seat: 1 });
  assert.deepEqual([...m.muted], []);
  // Whom we mute comes with it; those with no line left get the page's "Unmute" note.
  m.apply({ type: "chat_history", sender: "d".repeat(16), muted: ["a".repeat(16), "f".repeat(16), 7],
    lines: [{ type: "chat", from_seat: 1, name: "Old", text: "bye", sender: "a".repeat(16) }] });
  assert.deepEqual([...m.muted], ["a".repeat(16), "f".repeat(16)]);
  assert.deepEqual(m.mutedUnseen, ["f".repeat(16)]);
  m.apply({ type: "chat_history", sender: "d".repeat(16), lines: "junk" });
  assert.deepEqual(m.chat, []);
  assert.deepEqual(m.mutedUnseen, []);
});

test("a spectator's own line is recognised by its text after our ok, then by its sender", () => {
  const m = new TableModel("t1");
  m.apply({ type: "chat", from_seat: null, name: "Kim", text: "psst", sender: "c".repeat(16) });
  m.said("psst"); // the ok of our chat: the next line with these words is ours
  m.apply({ type: "chat", from_seat: null, name: "Sam", text: "psst", sender: "d".repeat(16) });
  m.apply({ type: "chat", from_seat: null, name: "Kim", text: "psst", sender: "c".repeat(16) });
  m.apply({ type: "chat", from_seat: null, name: "Sam", text: "again", sender: "d".repeat(16) });
  assert.deepEqual(m.chat.map((l) => l.mine), [false, true, false, true]);
  assert.equal(m.mySender, "d".repeat(16));
});
