// The page's R8a checks (server/web/static/js/fair.mjs) against the server's own
// server/game/fair.py and chance.py: tests/records/test_fair_js.py writes the JSON file
// named by FAIR_VECTORS: {vectors: docs/RULES.md's test vectors, all_cards, reveals: [fair...],
// records: [{name, record, expected, python}]: real records, genuine and tampered, of
// scheme 2 and 1, with what fair.check_record says of each (null: proven)}.
// Run: FAIR_VECTORS=... node --test tests/records/js/fair.test.mjs

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { CARD_CODES } from "../../../server/web/static/js/cards.mjs";
import { Stream, checkReveal, checkStart, commitmentOf, dealOf, firstDealer, newContribution,
  partnerDraw, seedOf } from "../../../server/web/static/js/fair.mjs";

import { install } from "../../../server/web/static/js/i18n.mjs";

// The words are the catalogue's (locales/en.json), as the page has them.
install("en", JSON.parse(readFileSync(new URL("../../../locales/en.json", import.meta.url), "utf8")));
const VECTORS = JSON.parse(readFileSync(process.env.FAIR_VECTORS, "utf8"));
const WARNING = "Warning: the record does not prove fair deals (R8a): ";
const V = VECTORS.vectors;

test("the streams are chance.py's: docs/RULES.md's test vectors", async () => {
  assert.deepEqual([...CARD_CODES], VECTORS.all_cards);
  assert.equal(await commitmentOf(V.secret, V.salt), V.commitment);
  assert.equal(await seedOf(V.secret, V.salt, V.contributions), V.seed);
  const s = new Stream(V.seed, "deal:1");
  const words = [];
  for (let i = 0; i < V["deal:1 words"].length; i++) words.push(await s.word());
  assert.deepEqual(words, V["deal:1 words"]);
  const pack = await new Stream(V.seed, "deal:1").shuffle([...CARD_CODES]);
  assert.equal(pack.join(" "), V["deal:1 pack"]);
  const dealt = await dealOf(V.seed, 1, 2);
  assert.deepEqual(dealt.hands[3], pack.slice(0, 3).concat(pack.slice(12, 15), pack.slice(24, 27)));
  assert.deepEqual(dealt.talon, pack.slice(36));
  assert.equal(await firstDealer({ partner_draw: false, first_dealer: "random" }, V.seed),
    V.first_dealer);
  const draw = partnerDraw(await new Stream(V.seed, "partner_draw").shuffle([...CARD_CODES]));
  assert.equal(draw.cards.map(([seat, c]) => `${seat}:${c}`).join(" "), V.partner_draw.turned);
  assert.deepEqual(draw.seating, V.partner_draw.seating);
  assert.equal(draw.firstDealer, V.partner_draw.first_dealer);
  for (const sig of V.signals) {
    const t = new Stream(V.seed, sig.label);
    assert.deepEqual([await t.notices(0.25), await t.notices(0.25)], sig["noticed_at_0.25"]);
  }
});

test("a true reveal is checked; every tampered one is a warning", async () => {
  for (const fair of VECTORS.reveals) {
    const good = await checkReveal(fair, fair.commitment);
    assert.equal(good.ok, true, good.text);
    assert.match(good.text, /^Fair deals checked/);
    assert.ok(good.text.includes(fair.commitment), good.text);       // all 64 digits
    const flip = (hex) => (hex[0] === "0" ? "1" : "0") + hex.slice(1);
    const tampered = [
      [{ ...fair, seed: flip(fair.seed) }, /seed does not follow/],
      [{ ...fair, secret: flip(fair.secret) }, /do not match the commitment/],
      [{ ...fair, salt: flip(fair.salt) }, /do not match the commitment/],
      [{ ...fair, contributions: [flip(fair.contributions[0] ?? "0"), ...fair.contributions.slice(1)] },
        /seed does not follow/],
      [{ ...fair, scheme: "aluette-fair/0" }, /unknown scheme/],
      [{ ...fair, scheme: fair.scheme === "aluette-fair/2" ? "aluette-fair/1" : "aluette-fair/2" },
        /do not match the commitment/],
      [{ ...fair, secret: "xyz" }, /not well formed/],
      [(({ seed, ...rest }) => rest)(fair), /reveals no seed/],
    ];
    for (const [bad, why] of tampered) {
      const note = await checkReveal(bad, fair.commitment);
      assert.equal(note.ok, false, JSON.stringify(bad));
      assert.ok(note.text.startsWith(WARNING), note.text);
      assert.match(note.text, why);
    }
    const other = await checkReveal(fair, flip(fair.commitment));
    assert.equal(other.ok, false);
    assert.match(other.text, /not the one the match started with/);
    assert.equal((await checkReveal(null, null)).ok, false);
  }
});

test("the start: the commitment we saw, our contribution at our seat, how many contributed",
  () => {
    const seen = "5b".repeat(32);
    const e = { type: "deals_committed", match: 1, commitment: seen,
      contributions: [null, "9f2c41d0", null, null] };
    const ok = checkStart(e, [seen, "9f2c41d0"], 1);
    assert.equal(ok.ok, true);
    assert.equal(ok.text, `Fair deals: match 1 is committed to ${seen}; 1 of 4 seats `
      + "contributed to the seed; your contribution is in. The seed will be revealed at the end.");
    const swapped = checkStart({ ...e, commitment: "6c".repeat(32) }, [seen, "9f2c41d0"], 1);
    assert.equal(swapped.ok, false);
    assert.match(swapped.text, /not the one the table showed before you contributed/);
    const dropped = checkStart({ ...e, contributions: [null, "00", null, null] }, [seen, "9f2c41d0"], 1);
    assert.equal(dropped.ok, false);
    assert.match(dropped.text, /your contribution is not in it/);
    // A spectator: nothing of ours to check; a match nobody contributed to is flagged.
    assert.equal(checkStart(e, null, null).ok, true);
    const none = checkStart({ ...e, contributions: [null, null, null, null] }, null, null);
    assert.match(none.text, /no player contributed to the seed: the server alone chose it, so the deals are not checked by any player\.$/);
  });

test("a contribution is 16 random bytes in lowercase hex", () => {
  const a = newContribution();
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.notEqual(a, newContribution());
});

test("real records replay from their seed; tampered ones fail, as check_record says",
  async () => {
    const names = new Set();
    for (const v of VECTORS.records) {
      names.add(`${v.name}:${v.python === null}`);
      const note = await checkReveal(v.record.fair, v.expected, v.record);
      if (v.python === null) {
        assert.equal(note.ok, true, `${v.name}: ${note.text}`);
        const n = v.record.deals.length;
        if (v.record.fair.scheme === "aluette-fair/1") {
          assert.match(note.text, /earlier scheme \(aluette-fair\/1\).*`aluette-record verify`/);
        } else {
          assert.ok(note.text.endsWith(`every deal was replayed from it (${n} `
            + `deal${n === 1 ? "" : "s"}): the first dealer and all hands follow.`), note.text);
        }
      } else {
        assert.equal(note.ok, false, `${v.name}: ${note.text}`);
        assert.ok(note.text.startsWith(WARNING), note.text);
      }
    }
    for (const name of ["genuine:true", "swapped hands:false", "rotated table:false",
      "changed contribution:false", "a card of the other taker kept:false",
      "the exchange left out:false", "who noticed a signal:false", "scheme 1:true"]) {
      assert.ok(names.has(name), name);
    }
  });

test("the model: deals_committed then match_over, a true record and tampered ones", async () => {
  const { TableModel } = await import("../../../server/web/static/js/model.mjs");
  const { record } = VECTORS.records.find((v) => v.name === "genuine" && v.expected !== null);
  const { fair } = record;
  const lie = VECTORS.records.find((v) => v.name === "swapped hands").record;
  for (const [tampered, ok] of [[record, true], [{ ...record, fair: { ...fair,
    seed: "0".repeat(64) } }, false], [lie, false]]) {
    const m = new TableModel("t1");
    m.apply({ type: "table_changed", table: { table: "t1", status: "waiting",
      next_commitment: tampered.fair.commitment, seats: [] } });
    m.seat = 0;
    m.contributing(tampered.fair.contributions[0]);
    m.apply({ type: "deals_committed", match: 1, commitment: tampered.fair.commitment,
      contributions: tampered.fair.contributions });
    assert.equal(m.fairNote.ok, true, m.fairNote.text);
    m.apply({ type: "deal_started", deal_number: 1, dealer: tampered.deals[0].dealer });
    m.apply({ type: "match_over", points: [1, 0], result: "team0", record: tampered });
    await m.fairCheck;
    assert.equal(m.fairNote.of, "match_over");
    assert.equal(m.fairNote.ok, ok, m.fairNote.text);
  }
});

test("without crypto.subtle (plain http on a network address) the page says it cannot check", async () => {
  const { record, expected } = VECTORS.records.find((v) => v.name === "genuine");
  Object.defineProperty(globalThis.crypto, "subtle", { value: undefined, configurable: true });
  try {
    const note = await checkReveal(record.fair, expected, record);
    assert.equal(note.ok, true);
    assert.match(note.text, /cannot check the revealed seed here/);
  } finally {
    delete globalThis.crypto.subtle;
    assert.ok(globalThis.crypto.subtle);
  }
});
