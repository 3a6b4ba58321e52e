// The browser's replay steps (server/web/static/js/replaysteps.mjs) against the server's
// replay of the same records: tests/records/test_replay_js.py writes the JSON file named by
// REPLAY_VECTORS: [{record, summary (verify_record's), signals: [[deal, trick, count]]}].
// Run: REPLAY_VECTORS=... node --test tests/records/js/replay.test.mjs

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { markOf, replaySteps, reviewMarks } from "../../../server/web/static/js/replaysteps.mjs";

const VECTORS = JSON.parse(readFileSync(process.env.REPLAY_VECTORS, "utf8"));

test("leaders, winners, counts, results and totals are the server's (R10-R14)", () => {
  assert.ok(VECTORS.length >= 5);
  for (const { record, summary } of VECTORS) {
    const steps = replaySteps(record);
    assert.equal(steps.length, record.deals.reduce((n, d) => n + d.tricks.length + 1, 0));
    for (const [i, deal] of summary.deals.entries()) {
      const mine = steps.filter((s) => s.deal === i + 1);
      assert.deepEqual(mine.slice(1).map((s) => ({ leader: s.leader, winner: s.winner })),
        deal.tricks);
      const last = mine[mine.length - 1];
      assert.deepEqual(last.counts, deal.trick_counts);
      assert.deepEqual(last.result.trick_counts, deal.trick_counts);
      assert.equal(last.result.winner, deal.winner);
      assert.deepEqual(last.result.points, deal.points);
      assert.equal(last.result.mordienne, deal.mordienne);
      assert.equal(mine[0].hands.flat().length, 36);
      assert.equal(last.hands.flat().length, 0);
    }
    const final = steps[steps.length - 1].result.totals;
    assert.deepEqual(final, summary.points);
  }
});

test("signals are shown at the step where they were sent, as the terminal shows them", () => {
  for (const { record, signals } of VECTORS) {
    const steps = replaySteps(record);
    const got = steps.filter((s) => s.signals.length)
      .map((s) => [s.deal, s.trick, s.signals.length]);
    assert.deepEqual(got, signals);
  }
});

test("review marks: ?! from 0.1 points, ? from 0.25, ?? from 0.5; cards only", () => {
  assert.deepEqual([0, 0.09, 0.1, 0.25, 0.5].map(markOf), ["", "", "?!", "?", "??"]);
  const marks = reviewMarks({ decisions: [
    { kind: "card", deal: 1, trick: 2, lost: 0.3, preferred: "3o", actual: "4c" },
    { kind: "chanter_vote", deal: 1, trick: null, lost: 1, preferred: "yes", actual: "no" }] });
  assert.deepEqual([...marks.keys()], ["1:2"]);
  assert.equal(marks.get("1:2").mark, "?");
});
