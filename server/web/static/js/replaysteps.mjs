// A finished match as replay steps (issue 28, Build 1): pure functions, no DOM, so the
// node tests hold them to the server's own replay of the same records (R18,
// server/game/record.py) and to client_cli/replay.py's steps.
//
// Step 0 of a deal is the deal as dealt (its chanter vote and exchange, R9, and the
// signals sent before the first card); step t (1-9) is the deal after trick t: its four
// cards from the leader, the winner or a spoiled trick (R11), the signals sent during it
// and who received them (R15, R16), the hands left. Leaders and winners are derived from
// the cards, never read from the record (R10, R11).

import { dealOutcome } from "./explain.mjs";
import { leftOf, sortByStrength, strength } from "./cards.mjs";

/** R11: the single strongest card wins; a tie for the top spoils the trick (null). */
export function trickWinner(leader, cards) {
  const s = cards.map(strength);
  const top = Math.max(...s);
  const at = s.indexOf(top);
  return s.filter((x) => x === top).length > 1 ? null : (leader + at) % 4;
}

/** One deal of the record replayed: each trick's leader and winner (R10, R11). */
export function replayDeal(deal) {
  let leader = leftOf(deal.dealer);
  return deal.tricks.map((cards) => {
    const winner = trickWinner(leader, cards);
    const trick = { leader, cards, winner };
    if (winner !== null) leader = winner;
    return trick;
  });
}

/** Turn actions before the first card: chanter votes, then the two discards (R9). */
function actionsBeforePlay(deal) {
  const c = deal.chanter;
  if (!c) return 0;
  return c.votes.filter((v) => v !== null).length + (c.exchange ? 2 : 0);
}

/**
 * Every step of the match: [{deal, trick, dealer, leader?, cards?, winner?, hands,
 * counts, signals, chanter (step 0), result (after trick 9)}].
 */
export function replaySteps(record) {
  const steps = [];
  const totals = [0, 0];
  const mordienneOn = record.options?.mordienne ?? true;
  record.deals.forEach((deal, index) => {
    const number = index + 1;
    const tricks = replayDeal(deal);
    const before = actionsBeforePlay(deal);
    const signals = Array.isArray(deal.signals) ? deal.signals : [];
    const during = (lo, hi) => signals.filter((s) => (s.at ?? 0) >= lo && (s.at ?? 0) < hi);
    for (let t = 0; t <= tricks.length; t++) {
      const played = new Set(tricks.slice(0, t).flatMap((x) => x.cards));
      const counts = [0, 1, 2, 3].map((s) => tricks.slice(0, t)
        .filter((x) => x.winner === s).length);
      const step = {
        deal: number, trick: t, dealer: deal.dealer,
        hands: deal.hands.map((h) => sortByStrength(h).filter((c) => !played.has(c))),
        counts,
        signals: t === 0 ? during(0, before) : during(before + 4 * (t - 1), before + 4 * t),
        chanter: t === 0 ? (deal.chanter ?? null) : null,
      };
      if (t > 0) Object.assign(step, tricks[t - 1]);
      if (t === 9) {
        const o = dealOutcome(tricks.map((x) => x.winner), mordienneOn);
        const points = [0, 0];
        if (o.winner !== null) points[o.winner % 2] = o.mordienne ? 2 : 1;
        totals[0] += points[0];
        totals[1] += points[1];
        step.result = { deal_number: number, winner: o.winner, points, mordienne: o.mordienne,
          trick_counts: o.counts, totals: [...totals], tricks };
      }
      steps.push(step);
    }
  });
  return steps;
}

/** A review's cost mark for a play that lost `lost` expected points (chess's ?!, ?, ??). */
export function markOf(lost) {
  if (lost >= 0.5) return "??";
  if (lost >= 0.25) return "?";
  if (lost >= 0.1) return "?!";
  return "";
}

/** The reviewed seat's card decisions: "deal:trick" -> {lost, preferred, actual, mark}. */
export function reviewMarks(review) {
  const out = new Map();
  for (const d of review?.decisions ?? []) {
    if (d.kind !== "card") continue;
    out.set(`${d.deal}:${d.trick}`, { lost: d.lost, preferred: d.preferred, actual: d.actual,
      mark: markOf(d.lost) });
  }
  return out;
}
