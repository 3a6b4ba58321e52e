// The page's R8a checks (server/web/static/js/fair.mjs, pyrandom.mjs) against the server's
// own server/game/fair.py, rules.py and CPython's random.Random: tests/web/test_js.py writes
// the JSON file named by FAIR_VECTORS: {reveals: [fair...], all_cards, random: [what
// random.Random(text) draws, shuffles and deals, per text], records: [{name, record,
// expected, python}]: real records, genuine and tampered, with what fair.check_record says
// of each (null: proven)}. By hand, the vectors built in below (a reveal and its record,
// made by fair.reveal and a match played from its seed) are checked, and the tests that
// need the Python side are skipped.
// Run: node --test tests/web/js/fair.test.mjs

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { CARD_CODES } from "../../../server/web/static/js/cards.mjs";
import { checkReveal, checkStart, commitmentOf, deal, firstDealer, newContribution,
  partnerDraw, seedOf } from "../../../server/web/static/js/fair.mjs";
import { PyRandom } from "../../../server/web/static/js/pyrandom.mjs";

const FAIR = { scheme: "aluette-fair/1",
  commitment: "024af38fbd03e00e640bf72d96248430cd17bd251500bfecc50a8517256a0ba5",
  secret: "ab".repeat(32), salt: "cd".repeat(16),
  contributions: ["9f2c41d0", null, "00ff".repeat(8), null],
  seed: "71d082508c33c807a0aa20605c17592fd8d5d085022c1fba351ce1c594655106" };
// tests.records.test_fair.fair_record(secret, salt, contributions, play_seed=1, deals=2,
// chanter=True): its options and hands (the tricks are not the page's to check).
const RECORD = { fair: FAIR, options: { deals: 2, chanter: true, partner_draw: false,
  first_dealer: "random" }, deals: [
  { dealer: 0, hands: [["6b", "1c", "Cc", "2e", "Co", "6c", "Re", "8c", "9c"],
    ["8o", "Vo", "7c", "1b", "6o", "8b", "5c", "3b", "9e"],
    ["4c", "7b", "8e", "Ve", "Vb", "Ro", "2c", "Ce", "4b"],
    ["5e", "5b", "1e", "9o", "Rb", "Rc", "3c", "5o", "1o"]] },
  { dealer: 1, hands: [["Ve", "3o", "2e", "8e", "9e", "Rb", "3c", "Ce", "Co"],
    ["Vc", "9b", "5b", "1b", "Vo", "4e", "9c", "3b", "6o"],
    ["8b", "5e", "2b", "7o", "Ro", "Re", "8o", "9o", "1c"],
    ["2o", "2c", "Rc", "4o", "4b", "1o", "6e", "5o", "7e"]] }] };
const BUILT_IN = { reveals: [FAIR], all_cards: null, random: [],
  records: [{ name: "built-in", record: RECORD, expected: FAIR.commitment, python: null }] };
const VECTORS = process.env.FAIR_VECTORS
  ? JSON.parse(readFileSync(process.env.FAIR_VECTORS, "utf8")) : BUILT_IN;
const FROM_PYTHON = { skip: process.env.FAIR_VECTORS ? false
  : "needs the Python side's vectors (FAIR_VECTORS, written by tests/web/test_js.py)" };
const WARNING = "Warning: the record does not prove fair deals (R8a): ";
const genuine = VECTORS.records.find((v) => v.python === null && v.expected !== null);

test("the hashes are the server's (fair.commitment, fair.derive_seed)", async () => {
  assert.ok(VECTORS.reveals.length >= 1);
  for (const fair of VECTORS.reveals) {
    assert.equal(await commitmentOf(fair.secret, fair.salt), fair.commitment);
    assert.equal(await seedOf(fair.secret, fair.salt, fair.contributions), fair.seed);
  }
});

test("a true reveal is checked; every tampered one is a warning", async () => {
  for (const fair of VECTORS.reveals) {
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
      assert.ok(note.text.startsWith(WARNING), note.text);
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

test("the model: deals_committed then match_over, a true record and tampered ones", async () => {
  const { TableModel } = await import("../../../server/web/static/js/model.mjs");
  const { record } = genuine;
  const { fair } = record;
  const swapped = structuredClone(record);       // one card exchanged between two seats
  const [a, b] = swapped.deals[0].hands;
  [a[0], b[0]] = [b[0], a[0]];
  for (const [tampered, ok] of [[record, true], [{ ...record, fair: { ...fair,
    seed: "0".repeat(64) } }, false], [swapped, false]]) {
    const m = new TableModel("t1");
    m.apply({ type: "table_changed", table: { table: "t1", status: "waiting",
      next_commitment: fair.commitment, seats: [] } });
    m.seat = 0;
    m.contributing(fair.contributions[0]);
    m.apply({ type: "deals_committed", match: 1, commitment: fair.commitment,
      contributions: fair.contributions });
    assert.equal(m.fairNote.ok, true, m.fairNote.text);
    assert.equal(m.fairNote.of, "deals_committed");
    m.apply({ type: "deal_started", deal_number: 1, dealer: record.deals[0].dealer });
    m.apply({ type: "match_over", points: [1, 0], result: "team0", record: tampered });
    await m.fairCheck;
    assert.equal(m.fairNote.of, "match_over");
    assert.equal(m.fairNote.ok, ok, m.fairNote.text);
    if (ok) assert.match(m.fairNote.text, /every deal was replayed from it/);
    if (tampered === swapped) assert.match(m.fairNote.text, /^Warning: .*deal 1, seat [01], card /);
  }
});

test("without crypto.subtle (plain http on a network address) the page says it cannot check", async () => {
  // An own property shadows the prototype's getter for this test, and is removed after it.
  Object.defineProperty(globalThis.crypto, "subtle", { value: undefined, configurable: true });
  try {
    const note = await checkReveal(genuine.record.fair, genuine.expected, genuine.record);
    assert.equal(note.ok, true);
    assert.match(note.text, /cannot check the revealed seed here/);
  } finally {
    delete globalThis.crypto.subtle;
    assert.ok(globalThis.crypto.subtle);
  }
});

test("pyrandom is CPython's random.Random: getrandbits, randrange, shuffle", FROM_PYTHON,
  async () => {
    assert.ok(VECTORS.random.length >= 200);
    for (const v of VECTORS.random) {
      const r = await PyRandom.fromString(v.text);
      const at = JSON.stringify(v.text).slice(0, 40);
      assert.deepEqual(v.bits32.map(() => r.getrandbits(32)), v.bits32, at);
      assert.deepEqual(v.bits.map((_, k) => r.getrandbits(k)), v.bits, at);
      assert.deepEqual(v.below.map(([n]) => r.randrange(n)), v.below.map(([, x]) => x), at);
      assert.deepEqual(r.shuffle([...CARD_CODES]), v.shuffled, at);
      const far = [];
      for (let i = 1; i <= 1300; i++) {
        const x = r.getrandbits(32);
        if (i % 100 === 0) far.push(x);
      }
      assert.deepEqual(far, v.far, at);           // past two refills of the 624 words
      assert.equal((await PyRandom.fromString(v.text)).randrange(4), v.randrange4, at);
    }
  });

test("the pack, the deal and the partner draw are rules.deal's and rules.partner_draw's",
  FROM_PYTHON, async () => {
    assert.deepEqual([...CARD_CODES], VECTORS.all_cards);     // cards.ALL_CARDS, in order
    for (const v of VECTORS.random) {
      const at = JSON.stringify(v.text).slice(0, 40);
      for (const [dealer, expected] of v.deals.entries()) {
        assert.deepEqual(deal(await PyRandom.fromString(v.text), dealer), expected, at);
      }
      assert.deepEqual(partnerDraw(await PyRandom.fromString(v.text)), v.draw, at);
    }
  });

test("real records replay from their seed; tampered ones fail in check_record's words",
  FROM_PYTHON, async () => {
    const names = new Set();
    for (const v of VECTORS.records) {
      names.add(`${v.name}:${v.python === null}`);
      const note = await checkReveal(v.record.fair, v.expected, v.record);
      if (v.python === null) {
        assert.equal(note.ok, true, `${v.name}: ${note.text}`);
        const n = v.record.deals.length;
        assert.ok(note.text.endsWith(`every deal was replayed from it (${n} `
          + `deal${n === 1 ? "" : "s"}): the first dealer and all hands follow.`), note.text);
      } else {
        assert.equal(note.ok, false, v.name);
        assert.equal(note.text, `${WARNING}${v.python}.`, v.name);
      }
    }
    // Genuine records, and each way of tampering caught (and one the talon share allows).
    for (const name of ["genuine:true", "swapped:false", "rotated:false", "forged:false",
      "dealer:false", "dealer_share:true", "left_share:true", "left_share_to_dealer:false",
      "dealer_share_to_left:false", "talon_opposite:false"]) {
      assert.ok(names.has(name), name);
    }
  });

test("the first dealer: the table's seat, R6's draw or R7's", FROM_PYTHON, async () => {
  for (const v of VECTORS.records.filter((r) => r.name === "genuine")) {
    const { options, deals, fair } = v.record;
    assert.equal(await firstDealer(options, fair.seed), deals[0].dealer, JSON.stringify(options));
  }
});
