// The page's R8a checks (server/web/static/js/fair.mjs) against seed material made by the
// server's own server/game/fair.py: tests/web/test_js.py writes it to the JSON file named by
// FAIR_VECTORS ({fair, commitment_seen}); by hand: a vector made the same way is built in.
// Run: node --test tests/web/js/fair.test.mjs

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { checkReveal, checkStart, commitmentOf, newContribution, seedOf }
  from "../../../server/web/static/js/fair.mjs";

const BUILT_IN = [{ scheme: "aluette-fair/1",
  commitment: "024af38fbd03e00e640bf72d96248430cd17bd251500bfecc50a8517256a0ba5",
  secret: "ab".repeat(32), salt: "cd".repeat(16),
  contributions: ["9f2c41d0", null, "00ff".repeat(8), null],
  seed: "71d082508c33c807a0aa20605c17592fd8d5d085022c1fba351ce1c594655106" }];
const VECTORS = process.env.FAIR_VECTORS
  ? JSON.parse(readFileSync(process.env.FAIR_VECTORS, "utf8")) : BUILT_IN;

test("the hashes are the server's (fair.commitment, fair.derive_seed)", async () => {
  assert.ok(VECTORS.length >= 1);
  for (const fair of VECTORS) {
    assert.equal(await commitmentOf(fair.secret, fair.salt), fair.commitment);
    assert.equal(await seedOf(fair.secret, fair.salt, fair.contributions), fair.seed);
  }
});

test("a true reveal is checked; every tampered one is a warning", async () => {
  for (const fair of VECTORS) {
    const good = await checkReveal(fair, fair.commitment);
    assert.equal(good.ok, true, good.text);
    assert.match(good.text, /^Fair deals checked/);
    const flip = (hex) => (hex[0] === "0" ? "1" : "0") + hex.slice(1);
    const tampered = [
      [{ ...fair, seed: flip(fair.seed) }, /seed does not follow/],
      [{ ...fair, secret: flip(fair.secret) }, /do not match the commitment/],
      [{ ...fair, salt: flip(fair.salt) }, /do not match the commitment/],
      [{ ...fair, contributions: [flip(fair.contributions[0] ?? "0"), ...fair.contributions.slice(1)] },
        /seed does not follow/],
      [{ ...fair, scheme: "aluette-fair/0" }, /unknown scheme/],
      [{ ...fair, secret: "xyz" }, /not well formed/],
      [(({ seed, ...rest }) => rest)(fair), /reveals no seed/],
    ];
    for (const [bad, why] of tampered) {
      const note = await checkReveal(bad, fair.commitment);
      assert.equal(note.ok, false, JSON.stringify(bad));
      assert.match(note.text, /^Warning: the record does not prove fair deals/);
      assert.match(note.text, why);
    }
    // A true reveal, but not of the commitment the match started with.
    const other = await checkReveal(fair, flip(fair.commitment));
    assert.equal(other.ok, false);
    assert.match(other.text, /not the one the match started with/);
    assert.equal((await checkReveal(null, null)).ok, false);
  }
});

test("the start: the commitment we saw, and our contribution at our seat", () => {
  const seen = "5b".repeat(32);
  const e = { type: "deals_committed", match: 1, commitment: seen,
    contributions: [null, "9f2c41d0", null, null] };
  const ok = checkStart(e, [seen, "9f2c41d0"], 1);
  assert.equal(ok.ok, true);
  assert.match(ok.text, /your contribution is in\. The seed will be revealed at the end\./);
  const swapped = checkStart({ ...e, commitment: "6c".repeat(32) }, [seen, "9f2c41d0"], 1);
  assert.equal(swapped.ok, false);
  assert.match(swapped.text, /not the one the table showed before you contributed/);
  const dropped = checkStart({ ...e, contributions: [null, "00", null, null] }, [seen, "9f2c41d0"], 1);
  assert.equal(dropped.ok, false);
  assert.match(dropped.text, /your contribution is not in it/);
  assert.equal(checkStart(e, null, null).ok, true); // a spectator: nothing of ours to check
});

test("a contribution is 16 random bytes in lowercase hex", () => {
  const a = newContribution();
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.notEqual(a, newContribution());
});

test("the model: deals_committed then match_over, a true record and a tampered one", async () => {
  const { TableModel } = await import("../../../server/web/static/js/model.mjs");
  for (const tamper of [false, true]) {
    const fair = VECTORS[0];
    const m = new TableModel("t1");
    m.apply({ type: "table_changed", table: { table: "t1", status: "waiting",
      next_commitment: fair.commitment, seats: [] } });
    m.seat = 0;
    m.contributing(fair.contributions[0]);
    m.apply({ type: "deals_committed", match: 1, commitment: fair.commitment,
      contributions: fair.contributions });
    assert.equal(m.fairNote.ok, true, m.fairNote.text);
    assert.equal(m.fairNote.of, "deals_committed");
    m.apply({ type: "deal_started", deal_number: 1, dealer: 0 });
    const record = { fair: tamper ? { ...fair, seed: "0".repeat(64) } : fair };
    m.apply({ type: "match_over", points: [1, 0], result: "team0", record });
    await m.fairCheck;
    assert.equal(m.fairNote.of, "match_over");
    assert.equal(m.fairNote.ok, !tamper, m.fairNote.text);
  }
});

test("without crypto.subtle (plain http on a network address) the page says it cannot check", async () => {
  // An own property shadows the prototype's getter for this test, and is removed after it.
  Object.defineProperty(globalThis.crypto, "subtle", { value: undefined, configurable: true });
  try {
    const note = await checkReveal(VECTORS[0], VECTORS[0].commitment);
    assert.equal(note.ok, true);
    assert.match(note.text, /cannot check the revealed seed here/);
  } finally {
    delete globalThis.crypto.subtle;
    assert.ok(globalThis.crypto.subtle);
  }
});
