// Checks the browser's reading of the rules and of text cleaning against vectors the
// Python side computed (tests/web/test_js.py): card strength and names (R3), deal outcomes
// (R11-R13a, server/game/rules.py), and protocol.clean_text.
//
// Usage: node vectors.mjs VECTORS.json

import { readFileSync } from "node:fs";
import { CARD_CODES, cardName, cleanText, sortByStrength, strength } from "../../../server/web/static/js/cards.mjs";
import { dealOutcome, explainDeal } from "../../../server/web/static/js/explain.mjs";
import { install } from "../../../server/web/static/js/i18n.mjs";

// The English catalogue, as the page loads it (names must match server/game/cards.py's).
install("en", JSON.parse(readFileSync(new URL("../../../locales/en.json", import.meta.url), "utf8")));

const vec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const failures = [];

if (JSON.stringify([...CARD_CODES]) !== JSON.stringify(vec.codes)) failures.push("card codes differ");
for (const [code, s, name] of vec.cards) {
  if (strength(code) !== s) failures.push(`strength ${code}: ${strength(code)} != ${s}`);
  if (cardName(code) !== name) failures.push(`name ${code}: ${cardName(code)} != ${name}`);
}
if (JSON.stringify(sortByStrength(vec.sort.input)) !== JSON.stringify(vec.sort.output)) {
  failures.push("sortByStrength differs from server.game.cards.sort_by_strength");
}
for (const [raw, clean] of vec.clean) {
  if (cleanText(raw) !== clean) failures.push(`clean ${JSON.stringify(raw)}: ${JSON.stringify(cleanText(raw))} != ${JSON.stringify(clean)}`);
}
let explained = 0;
for (const { winners, winner, points, counts, mordienne } of vec.outcomes) {
  const o = dealOutcome(winners);
  const got = { winner: o.winner, counts: o.counts, mordienne: o.mordienne };
  const want = { winner, counts, mordienne };
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    failures.push(`outcome ${JSON.stringify(winners)}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
    continue;
  }
  // The explanation must name the engine's winner, and say "mordienne" exactly when it was.
  const tricks = winners.map((w, i) => ({ leader: 0, cards: [], winner: w, i }));
  const text = explainDeal({ winner, points, mordienne, trick_counts: counts, tricks,
    totals: points, deal_number: 1 }, (s) => `S${s}`).join(" ");
  if (winner !== null && !text.includes(`S${winner} `)) failures.push(`explain omits the winner: ${text}`);
  if (/Mordienne/.test(text) !== mordienne) failures.push(`explain mordienne: ${text}`);
  explained += 1;
}
console.log(JSON.stringify({ outcomes: vec.outcomes.length, explained, failures: failures.slice(0, 20) }));
process.exit(failures.length ? 1 : 0);
