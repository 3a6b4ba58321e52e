// The end of a deal in words (R11-R13a). Pure functions; the server's deal_scored stays the
// truth (who won, the points, mordienne): this module only says why, and the node tests
// check that its reading of the rules agrees with the engine's (server/game/rules.py).

import { TEAM_NAMES, teamOf } from "./cards.mjs";

/**
 * R12/R13/R13a from each trick's winner (null = spoiled, R11), in order.
 * @param {(number|null)[]} winners
 */
export function dealOutcome(winners, mordienneOn = true) {
  const counts = [0, 0, 0, 0];
  const reachedAt = [0, 0, 0, 0]; // 1-based trick where each seat won its last trick
  winners.forEach((w, i) => {
    if (w !== null) {
      counts[w] += 1;
      reachedAt[w] = i + 1;
    }
  });
  const spoiled = winners.flatMap((w, i) => (w === null ? [i + 1] : []));
  const top = Math.max(...counts);
  if (top === 0) return { counts, winner: null, tied: [], reachedAt, spoiled, mordienne: false, run: 0 };
  const tied = [0, 1, 2, 3].filter((s) => counts[s] === top);
  // R12: among the seats with the most tricks, the one that won its M-th trick earliest.
  const winner = tied.reduce((a, b) => (reachedAt[b] < reachedAt[a] ? b : a));
  let run = 0; // tricks the winner won in a row at the end of the deal
  for (let i = winners.length - 1; i >= 0 && winners[i] === winner; i -= 1) run += 1;
  // R13/R13a: the winner's tricks are exactly the last k >= 2, in a row up to trick 9.
  const mordienne = mordienneOn && top >= 2 && winners.length === 9 && run === top;
  return { counts, winner, tied, reachedAt, spoiled, mordienne, run };
}

const list = (xs) => (xs.length < 2 ? xs.join("")
  : `${xs.slice(0, -1).join(", ")} and ${xs[xs.length - 1]}`);
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * Sentences that explain a finished deal.
 * @param {object} deal  deal_scored's fields (winner, points, mordienne, trick_counts,
 *                       totals, deal_number) and `tricks` ([{leader, cards, winner}]) or null
 * @param {(seat: number) => string} nameOf  a seat's display name
 */
export function explainDeal(deal, nameOf) {
  const out = [];
  const counts = deal.trick_counts ?? [0, 0, 0, 0];
  const winner = deal.winner ?? null;
  const gained = deal.points ?? [0, 0];
  if (Array.isArray(deal.tricks) && deal.tricks.length === 9) {
    const o = dealOutcome(deal.tricks.map((t) => t.winner ?? null));
    if (o.spoiled.length) {
      out.push(o.spoiled.length === 9
        ? "All nine tricks were spoiled: each had two or more top cards of equal strength (R11)."
        : `${o.spoiled.length === 1 ? "Trick" : "Tricks"} ${list(o.spoiled.map(String))} `
          + `${o.spoiled.length === 1 ? "was" : "were"} spoiled (pourri): two or more top cards `
          + "tied, nobody won it, and the same seat led again (R11).");
    }
    if (winner === null) {
      out.push("Nobody won a trick, so nobody scores (R12).");
      return out;
    }
    const top = counts[winner];
    if (o.winner === winner && o.tied.length > 1) {
      const others = o.tied.filter((s) => s !== winner);
      out.push(`${list(o.tied.map(nameOf))} each won ${plural(top, "trick")}; `
        + `${nameOf(winner)} reached ${top} first (trick ${o.reachedAt[winner]}, `
        + `${list(others.map((s) => `${nameOf(s)} at trick ${o.reachedAt[s]}`))}), `
        + "so wins the deal (R12).");
    } else {
      out.push(`${nameOf(winner)} won the most tricks (${top}) and wins the deal (R12). `
        + "Partners' tricks are not added together.");
    }
    if (deal.mordienne) {
      out.push(top === 9 ? `${nameOf(winner)} won all nine tricks: mordienne (R13a).`
        : `Mordienne: ${nameOf(winner)}'s tricks are exactly the last ${top} of the deal, `
          + `won in a row (tricks ${10 - top} to 9) (R13).`);
    } else if (o.winner === winner && top >= 2 && o.run >= 1 && o.run < top) {
      const early = deal.tricks.flatMap((t, i) => (t.winner === winner && i < 9 - o.run
        ? [i + 1] : []));
      out.push(`No mordienne: ${nameOf(winner)} won the last ${plural(o.run, "trick")} but also `
        + `${early.length === 1 ? "trick" : "tricks"} ${list(early.map(String))} (R13).`);
    }
  } else {
    const spoiled = 9 - counts.reduce((a, b) => a + b, 0);
    if (spoiled > 0) out.push(`${plural(spoiled, "trick")} spoiled (R11).`);
    if (winner === null) {
      out.push("Nobody won a trick, so nobody scores (R12).");
      return out;
    }
    const top = counts[winner];
    const tied = [0, 1, 2, 3].filter((s) => counts[s] === top && s !== winner);
    out.push(tied.length
      ? `${nameOf(winner)} won ${plural(top, "trick")}, as many as ${list(tied.map(nameOf))}, `
        + `and reached ${top} first, so wins the deal (R12).`
      : `${nameOf(winner)} won the most tricks (${top}) and wins the deal (R12).`);
    if (deal.mordienne) {
      out.push(top === 9 ? "All nine tricks: mordienne (R13a)."
        : `Mordienne: those were the last ${top} tricks, won in a row (R13).`);
    }
  }
  const team = teamOf(winner);
  const pts = gained[team] ?? 0;
  let score = `${TEAM_NAMES[team]} scores ${plural(pts, "point")}`;
  if (Array.isArray(deal.totals)) {
    score += ` (match: ${TEAM_NAMES[0]} ${deal.totals[0]}, ${TEAM_NAMES[1]} ${deal.totals[1]})`;
  }
  out.push(`${score}.`);
  return out;
}

/** R14: the match's result in words, from our point of view when we sit at the table. */
export function matchResultText(result, points, seat) {
  const score = `${TEAM_NAMES[0]} ${points[0]}, ${TEAM_NAMES[1]} ${points[1]}`;
  if (result === "draw") return `The match is a draw (${score}).`;
  const team = result === "team0" ? 0 : 1;
  if (seat === null || seat === undefined) return `${TEAM_NAMES[team]} wins the match (${score}).`;
  return teamOf(seat) === team ? `Your team wins the match (${score})!`
    : `${TEAM_NAMES[team]} wins the match (${score}).`;
}
