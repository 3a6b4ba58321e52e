// R8a, provably fair deals, as a player's page can check them (protocol 1.3; the scheme is
// server/game/fair.py's, and client_cli/model.py makes the same checks for the terminal):
//
// - we send a fresh random contribution with join, start and rematch, once we have seen the
//   table's next_commitment, and remember both (TableModel.contributing);
// - deals_committed: the match's commitment is the one we saw, and our contribution is at
//   our seat (checkStart, synchronous);
// - match_over: the revealed record.fair hashes back to that commitment, its seed is
//   SHA-256 of the secret, the salt and the four contributions, and every deal of the record
//   follows from that seed: the first dealer (R6, or R7's partner draw) and each seat's hand
//   (R8, plus its talon share under R9) replayed as fair.check_record does, with
//   pyrandom.mjs, a port of CPython's random.Random (checkReveal, asynchronous:
//   crypto.subtle.digest). The tricks' legality (R18) is `aluette-record verify`'s.

import { CARD_CODES, isCard, leftOf } from "./cards.mjs";
import { PyRandom } from "./pyrandom.mjs";

/** fair.SCHEME */
export const SCHEME = "aluette-fair/1";

const HEX = /^[0-9a-f]+$/;
const isHex = (x, n) => typeof x === "string" && HEX.test(x) && (n === undefined || x.length === n);
const isContribution = (x) => x === null || (isHex(x) && x.length <= 64);

/** R8a: this page's contribution to a match's seed, 16 random bytes in lowercase hex. */
export function newContribution() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** SHA-256 of an ASCII string, lowercase hex (fair._sha256). */
export async function sha256(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** fair.commitment */
export const commitmentOf = (secret, salt) => sha256(`aluette-commit/1:${secret}:${salt}`);

/** fair.derive_seed: four seats' contributions, null for none. */
export const seedOf = (secret, salt, contributions) =>
  sha256(`aluette-seed/1:${secret}:${salt}:${contributions.map((c) => c ?? "").join(",")}`);

const short = (hex) => `${String(hex).slice(0, 16)}…`;

// ---------------------------------------------------------------- the deals, replayed

/** rules.TOP_FOUR: R7 seats the players by these four cards, strongest first. */
const TOP_FOUR = ["3o", "3c", "2o", "2c"];
const isSeat = (x) => Number.isInteger(x) && x >= 0 && x <= 3;

/** rules.deal_rng: each deal's shuffle comes from the match seed and the deal number. */
export const dealRng = (seed, number) => PyRandom.fromString(`aluette:${seed}:deal:${number}`);

/** rules.deal (R8): shuffle the pack (R2's order, cards.mjs), deal three rounds of three
 *  clockwise from the dealer's left; the twelve left are the talon. */
export function deal(rng, dealer) {
  const pack = rng.shuffle([...CARD_CODES]);
  const hands = [[], [], [], []];
  let pos = 0;
  for (let round = 0; round < 3; round++) {
    for (let k = 1; k <= 4; k++) {
      hands[(dealer + k) % 4].push(...pack.slice(pos, pos + 3));
      pos += 3;
    }
  }
  return { hands, talon: pack.slice(pos) };
}

/** rules.partner_draw (R7): cards turned to seats 0, 1, 2, 3... skipping seats that hold a
 *  top card; Monsieur's holder stays, Madame's sits opposite, and deals first. */
export function partnerDraw(rng) {
  const pack = rng.shuffle([...CARD_CODES]);
  const holder = {};
  const cards = [];
  const done = new Set();
  let seat = 0;
  for (const card of pack) {
    while (done.has(seat)) seat = leftOf(seat);
    cards.push([seat, card]);
    if (TOP_FOUR.includes(card)) {
      holder[card] = seat;
      done.add(seat);
      if (done.size === 4) break;
    }
    seat = leftOf(seat);
  }
  const monsieur = holder["3o"];
  const seating = [0, 0, 0, 0];
  seating[monsieur] = monsieur;
  seating[holder["3c"]] = (monsieur + 2) % 4;
  const others = [1, 2, 3].map((k) => (monsieur + k) % 4)
    .filter((s) => s !== monsieur && s !== holder["3c"]);
  seating[others[0]] = (monsieur + 1) % 4;
  seating[others[1]] = (monsieur + 3) % 4;
  return { cards, seating, firstDealer: (monsieur + 2) % 4 };
}

/** Match.new's first dealer: R7's draw, R6's random seat, or the table's chosen seat. */
export async function firstDealer(options, seed) {
  if (options.partner_draw) {
    return partnerDraw(await PyRandom.fromString(`aluette:${seed}:partner_draw`)).firstDealer;
  }
  if (options.first_dealer === "random") {
    return (await PyRandom.fromString(`aluette:${seed}:first_dealer`)).randrange(4);
  }
  return options.first_dealer;
}

/** The record's options as Options.from_dict reads them (its defaults), or null. */
function dealOptions(raw) {
  const o = { chanter: false, partner_draw: false, first_dealer: "random", ...(raw ?? {}) };
  const ok = typeof o.chanter === "boolean" && typeof o.partner_draw === "boolean"
    && (o.first_dealer === "random" || isSeat(o.first_dealer));
  return ok ? o : null;
}

/** Every deal is a dealer's seat and four hands of nine distinct cards (R8; the rest of R18
 *  is `aluette-record verify`'s). */
function wellFormed(deals) {
  return Array.isArray(deals) && deals.length > 0 && deals.every((d) => {
    if (d === null || typeof d !== "object" || !isSeat(d.dealer)) return false;
    const hands = d.hands;
    if (!Array.isArray(hands) || hands.length !== 4) return false;
    const cards = hands.flat();
    return hands.every((h) => Array.isArray(h) && h.length === 9)
      && cards.every(isCard) && new Set(cards).size === cards.length;
  });
}

/**
 * fair.check_record's replay of `record` (options, deals [{dealer, hands}]) from `seed`:
 * null when the first dealer and every card of every hand follow from it, else what does
 * not, in check_record's words. Under R9 a hand may also hold its seat's talon share.
 */
export async function replayDeals(record, seed) {
  const options = dealOptions(record?.options);
  if (options === null) return "its options are not well formed";
  const deals = record.deals;
  if (!wellFormed(deals)) return "its deals are not four hands of nine cards each";
  const first = await firstDealer(options, seed);
  if (deals[0].dealer !== first) {
    const why = options.partner_draw ? "the partner draw (R7)" : "R6";
    return `deal 1: the first dealer is seat ${first} by the revealed seed and ${why}, `
      + `not seat ${deals[0].dealer}`;
  }
  for (const [i, d] of deals.entries()) {
    const number = i + 1;
    const { hands, talon } = deal(await dealRng(seed, number), d.dealer);
    const shares = options.chanter                                  // R9's exchange
      ? { [leftOf(d.dealer)]: talon.filter((_, k) => k % 2 === 0),
        [d.dealer]: talon.filter((_, k) => k % 2 === 1) }
      : {};
    for (const [seat, hand] of d.hands.entries()) {
      const allowed = new Set([...hands[seat], ...(shares[seat] ?? [])]);
      const card = hand.find((c) => !allowed.has(c));
      if (card !== undefined) {
        return `deal ${number}, seat ${seat}, card ${card}: this card was not dealt to this `
          + "seat: the hand does not follow from the revealed seed (R8)";
      }
    }
  }
  return null;
}

/**
 * deals_committed: {ok, text}. `sent` is [seen, mine] (the commitment shown when we
 * contributed, our contribution) or null; `seat` ours or null.
 */
export function checkStart(event, sent, seat) {
  const commitment = String(event.commitment ?? "");
  const words = `Fair deals: match ${event.match ?? "?"} is committed to ${short(commitment)}`;
  if (sent === null || seat === null) return { ok: true, text: `${words}.` };
  const [seen, mine] = sent;
  const problems = [];
  if (seen !== null && seen !== commitment) {
    problems.push("this commitment is not the one the table showed before you contributed "
      + "(the server could have chosen its secret after seeing your contribution)");
  }
  const contributions = Array.isArray(event.contributions) ? event.contributions : [];
  if (contributions[seat] !== mine) problems.push("your contribution is not in it");
  if (problems.length) return { ok: false, text: `Warning: ${words}, but ${problems.join(" and ")}.` };
  return { ok: true, text: `${words}; your contribution is in. The seed will be revealed at `
    + "the end." };
}

/**
 * match_over: the revealed `fair` (record.fair) against `expected`, the commitment the match
 * started with (null if we did not see it), and the deals of `record` (the match_over
 * event's) replayed from its seed; without a record, only the seed is checked. Resolves to
 * {ok, text}; never rejects.
 */
export async function checkReveal(fair, expected = null, record = null) {
  const fail = (why) => ({ ok: false, text: `Warning: the record does not prove fair deals `
    + `(R8a): ${why}.` });
  if (!globalThis.crypto?.subtle) {
    // Browsers offer SHA-256 only on https and localhost: a page served over plain http on
    // a network address cannot hash, which says nothing about the deals.
    return { ok: true, text: "Fair deals: this page cannot check the revealed seed here "
      + "(the browser hashes only on https or localhost); `aluette-record verify` on the "
      + "match record does." };
  }
  try {
    if (fair === null || typeof fair !== "object") return fail("it reveals no seed material");
    if (fair.scheme !== SCHEME) return fail(`unknown scheme ${String(fair.scheme).slice(0, 32)}`);
    const { commitment, secret, salt, contributions, seed } = fair;
    if (!isHex(commitment, 64) || !isHex(secret, 64) || !isHex(salt, 32)) {
      return fail("its commitment, secret or salt is not well formed");
    }
    if (!Array.isArray(contributions) || contributions.length !== 4
        || !contributions.every(isContribution)) {
      return fail("its contributions are not four seats' contributions");
    }
    if (await commitmentOf(secret, salt) !== commitment) {
      return fail(`the revealed secret and salt do not match the commitment ${short(commitment)}`);
    }
    if (expected !== null && expected !== commitment) {
      return fail(`its commitment ${short(commitment)} is not the one the match started with, `
        + short(expected));
    }
    if (!isHex(seed, 64)) return fail("it reveals no seed");
    if (await seedOf(secret, salt, contributions) !== seed) {
      return fail("the revealed seed does not follow from the secret, the salt and the "
        + "contributions");
    }
    const words = `Fair deals checked: the seed was committed before the first card `
      + `(${short(commitment)}) and follows from the server's secret and every player's `
      + "contribution";
    if (record === null) return { ok: true, text: `${words}.` };
    const wrong = await replayDeals(record, seed);
    if (wrong !== null) return fail(wrong);
    const n = record.deals.length;
    return { ok: true, text: `${words}, and every deal was replayed from it (${n} `
      + `deal${n === 1 ? "" : "s"}): the first dealer and all hands follow.` };
  } catch (err) {
    return fail(`the check could not run (${String(err?.message ?? err).slice(0, 80)})`);
  }
}
