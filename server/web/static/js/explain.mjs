// The end of a deal in words (R11-R13a). Pure functions; the server's deal_scored stays the
// truth (who won, the points, mordienne): this module only says why, and the node tests
// check that its reading of the rules agrees with the engine's (server/game/rules.py). The
// words are the catalogues' (i18n.mjs); a sentence whose subject is the reader has its own
// key ("...you"), so that no language has to say "you wins".

import { teamName, teamOf } from "./cards.mjs";
import { t } from "./i18n.mjs";

/**
 * R12/R13/R13a from each trick's winner (null = spoiled, R11), in order: the deal's winner,
 * its team's points, and what the reasons need (who tied, when each reached its count).
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
  if (top === 0) {
    return { counts, winner: null, tied: [], reachedAt, spoiled, mordienne: false, run: 0,
      points: [0, 0] };
  }
  const tied = [0, 1, 2, 3].filter((s) => counts[s] === top);
  // R12: among the seats with the most tricks, the one that won its M-th trick earliest.
  const winner = tied.reduce((a, b) => (reachedAt[b] < reachedAt[a] ? b : a));
  let run = 0; // tricks the winner won in a row at the end of the deal
  for (let i = winners.length - 1; i >= 0 && winners[i] === winner; i -= 1) run += 1;
  // R13/R13a: the winner's tricks are exactly the last k >= 2, in a row up to trick 9.
  const mordienne = mordienneOn && top >= 2 && winners.length === 9 && run === top;
  const points = [0, 0];
  points[teamOf(winner)] = mordienne ? 2 : 1;
  return { counts, winner, tied, reachedAt, spoiled, mordienne, run, points };
}

/**
 * Why a deal went where it did (R11-R13a), apart from the words: the facts
 * client_cli/explain.py finds too; both are held to tests/spec/explain/*.json.
 * @param {object} deal  deal_scored's fields (winner, points, mordienne, trick_counts) and
 *                       `tricks` ([{winner}], the nine tricks) or null when not seen
 * @returns {{winner: number|null, most: number, tied: number[], spoiled: number,
 *   spoiledTricks: number[]|null, reachedAt: Object<number, number>|null,
 *   mordienne: "run"|"all"|null, early: number[]|null, team: number|null, points: number}}
 */
export function dealFacts(deal) {
  const counts = deal.trick_counts ?? [0, 0, 0, 0];
  const winner = deal.winner ?? null;
  const spoiled = 9 - counts.reduce((a, b) => a + b, 0);
  const winners = Array.isArray(deal.tricks) && deal.tricks.length === 9
    ? deal.tricks.map((tr) => tr.winner ?? null) : null;
  if (winner === null) {
    return { winner, most: 0, tied: [], spoiled,
      spoiledTricks: winners ? dealOutcome(winners).spoiled : null, reachedAt: null,
      mordienne: null, early: null, team: null, points: 0 };
  }
  const top = counts[winner];
  const tied = [0, 1, 2, 3].filter((s) => s !== winner && counts[s] === top);
  const mordienne = deal.mordienne ? (top === 9 ? "all" : "run") : null;
  const team = teamOf(winner);
  const points = (deal.points ?? [0, 0])[team] ?? 0;
  if (winners === null) {
    return { winner, most: top, tied, spoiled, spoiledTricks: null, reachedAt: null,
      mordienne, early: null, team, points };
  }
  const o = dealOutcome(winners);
  let run = 0;
  for (let i = 8; i >= 0 && winners[i] === winner; i -= 1) run += 1;
  const reachedAt = Object.fromEntries([winner, ...tied].map((s) => [s, o.reachedAt[s]]));
  const early = mordienne === null && top >= 2 && run >= 1 && run < top
    ? winners.flatMap((w, i) => (w === winner && i < 9 - run ? [i + 1] : [])) : [];
  return { winner, most: top, tied, spoiled, spoiledTricks: o.spoiled, reachedAt, mordienne,
    early, team, points };
}

/** "a, b and c" in the current language. */
export function list(xs) {
  if (xs.length < 2) return xs.join("");
  return t("list.and", { items: xs.slice(0, -1).join(", "), last: xs[xs.length - 1] });
}

/**
 * Sentences that explain a finished deal.
 * @param {object} deal  deal_scored's fields (winner, points, mordienne, trick_counts,
 *                       totals, deal_number) and `tricks` ([{leader, cards, winner}]) or null
 * @param {(seat: number) => string} nameOf  a seat's display name
 * @param {number|null} me  our seat (sentences about us say "you")
 */
export function explainDeal(deal, nameOf, me = null) {
  const out = [];
  const f = dealFacts(deal);
  const winner = f.winner;
  const you = winner !== null && winner === me ? ".you" : "";
  const who = winner !== null ? nameOf(winner) : "";
  if (f.spoiledTricks !== null) {
    if (f.spoiledTricks.length === 9) out.push(t("deal.all_spoiled"));
    else if (f.spoiledTricks.length) {
      out.push(t("deal.spoiled", { n: f.spoiledTricks.length, tricks: list(f.spoiledTricks.map(String)) }));
    }
  } else if (f.spoiled > 0) {
    out.push(t("deal.spoiled.count", { n: f.spoiled }));
  }
  if (winner === null) {
    out.push(t("deal.nobody"));
    return out;
  }
  const top = f.most;
  if (f.reachedAt !== null) {
    if (f.tied.length) {
      const all = [winner, ...f.tied].sort((a, b) => a - b);
      out.push(t(`deal.tie${you}`, { names: list(all.map(nameOf)), n: top, who,
        at: f.reachedAt[winner],
        others: list(f.tied.map((s) => t("deal.tie.other", { name: nameOf(s), at: f.reachedAt[s] }))) }));
    } else {
      out.push(t(`deal.most${you}`, { who, n: top }));
    }
    if (f.mordienne) {
      out.push(f.mordienne === "all" ? t(`deal.mordienne.all${you}`, { who })
        : t(`deal.mordienne${you}`, { who, n: top, from: 10 - top }));
    } else if (f.early.length) {
      out.push(t(`deal.no_mordienne${you}`, { who, n: top - f.early.length, k: f.early.length,
        tricks: list(f.early.map(String)) }));
    }
  } else {
    out.push(f.tied.length
      ? t(`deal.tie.short${you}`, { who, n: top, names: list(f.tied.map(nameOf)) })
      : t(`deal.most${you}`, { who, n: top }));
    if (f.mordienne) {
      out.push(f.mordienne === "all" ? t("deal.mordienne.all.short") : t("deal.mordienne.short", { n: top }));
    }
  }
  const pts = f.points;
  out.push(Array.isArray(deal.totals)
    ? t("deal.score.totals", { team: teamName(f.team), n: pts, a: teamName(0), b: teamName(1),
      pa: deal.totals[0], pb: deal.totals[1] })
    : t("deal.score", { team: teamName(f.team), n: pts }));
  return out;
}

/** R14: the match's result in words, from our point of view when we sit at the table. */
export function matchResultText(result, points, seat) {
  const score = t("score.line", { a: teamName(0), pa: points[0], b: teamName(1), pb: points[1] });
  if (result === "draw") return t("match.draw", { score });
  const team = result === "team0" ? 0 : 1;
  if (seat !== null && seat !== undefined && teamOf(seat) === team) {
    return t("match.won.you", { score });
  }
  return t("match.won", { team: teamName(team), score });
}
