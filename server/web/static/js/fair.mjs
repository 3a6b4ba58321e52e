// R8a, provably fair deals, as a player's page can check them (the scheme is
// server/game/fair.py's and docs/RULES.md's; client_cli/model.py makes the same checks for
// the terminal):
//
// - we send a fresh random contribution with join, start and rematch, once we have seen the
//   table's next_commitment, and remember both (TableModel.contributing);
// - deals_committed: the match's commitment is the one we saw, our contribution is at our
//   seat, and how many players contributed (none: the server alone chose the deals, and no
//   player checks them) (checkStart, synchronous);
// - match_over: the revealed record.fair hashes back to that commitment, its seed is
//   SHA-256 of the secret, the salt and the four contributions, and every draw of the
//   record follows from that seed by the SHA-256 streams of scheme aluette-fair/2: the
//   first dealer (R6, or R7's partner draw), each seat's hand exactly (R8, with R9's
//   exchange as the record tells it) and who noticed each risky signal (R16) (checkReveal,
//   asynchronous: crypto.subtle.digest). The tricks' legality (R18) is
//   `aluette-record verify`'s, and so are the deals of scheme 1 records (CPython's
//   Mersenne Twister, which this page no longer carries): for those the page checks the
//   hashes and says where the deals are checked.

import { CARD_CODES, isCard, leftOf } from "./cards.mjs";
import { t } from "./i18n.mjs";

/** fair.SCHEME, and the schemes a record may carry (name -> number). */
export const SCHEME = "aluette-fair/2";
const SCHEMES = { "aluette-fair/1": 1, "aluette-fair/2": 2 };

const HEX = /^[0-9a-f]+$/;
const isHex = (x, n) => typeof x === "string" && HEX.test(x) && (n === undefined || x.length === n);
const isContribution = (x) => x === null || (isHex(x) && x.length <= 64);
const hexOf = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

/** R8a: this page's contribution to a match's seed, 16 random bytes in lowercase hex. */
export function newContribution() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return hexOf(bytes);
}

const digest = async (text) =>
  new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));

/** SHA-256 of an ASCII string, lowercase hex (fair._sha256). */
export const sha256 = async (text) => hexOf(await digest(text));

/** fair.commitment */
export const commitmentOf = (secret, salt, scheme = 2) =>
  sha256(`aluette-commit/${scheme}:${secret}:${salt}`);

/** fair.derive_seed: four seats' contributions, null for none. */
export const seedOf = (secret, salt, contributions, scheme = 2) =>
  sha256(`aluette-seed/${scheme}:${secret}:${salt}:${contributions.map((c) => c ?? "").join(",")}`);

/** fair.contributors: how many seats contributed to the seed. */
export const contributors = (contributions) =>
  (Array.isArray(contributions) ? contributions.filter((c) => c).length : 0);

/** How many players the seed took a contribution from, flagging none (R8a). */
export function contributedWords(n) {
  return n === 0 ? t("fair.contributed.none") : t("fair.contributed", { n });
}

// ---------------------------------------------------------------- the streams (chance.py)

/** chance.Stream: block i = SHA-256(seed:label:i), read as 32-bit big-endian words. */
export class Stream {
  constructor(seed, label) {
    this.prefix = `${seed}:${label}:`;
    this.i = 0;
    this.words = [];
  }

  async word() {
    if (this.words.length === 0) {
      const block = await digest(`${this.prefix}${this.i++}`);
      const view = new DataView(block.buffer);
      for (let k = 28; k >= 0; k -= 4) this.words.push(view.getUint32(k));
    }
    return this.words.pop();
  }

  /** Unbiased: words at or above the largest multiple of n are drawn again. */
  async below(n) {
    const limit = 2 ** 32 - (2 ** 32 % n);
    let w;
    do w = await this.word(); while (w >= limit);
    return w % n;
  }

  /** Fisher-Yates, from the last index down; returns `items`, shuffled in place. */
  async shuffle(items) {
    for (let i = items.length - 1; i > 0; i--) {
      const j = await this.below(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }

  /** R16: one word; noticed when it is below risk × 2^32. */
  async notices(risk) {
    return (await this.word()) < risk * 2 ** 32;
  }
}

// ---------------------------------------------------------------- the deals, replayed

/** rules.TOP_FOUR: R7 seats the players by these four cards, strongest first. */
const TOP_FOUR = ["3o", "3c", "2o", "2c"];
const isSeat = (x) => Number.isInteger(x) && x >= 0 && x <= 3;

/** rules.deal (R8): from the shuffled pack, three rounds of three clockwise from the
 *  dealer's left; the twelve left are the talon. */
export function deal(pack, dealer) {
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

/** Deal `number` of the match dealt from `seed` (stream deal:N). */
export async function dealOf(seed, number, dealer) {
  return deal(await new Stream(seed, `deal:${number}`).shuffle([...CARD_CODES]), dealer);
}

/** rules.partner_draw (R7): from the shuffled pack, cards turned to seats 0, 1, 2, 3...
 *  skipping seats that hold a top card; Monsieur's holder stays, Madame's sits opposite,
 *  and deals first. */
export function partnerDraw(pack) {
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
    return partnerDraw(await new Stream(seed, "partner_draw").shuffle([...CARD_CODES]))
      .firstDealer;
  }
  if (options.first_dealer === "random") return new Stream(seed, "first_dealer").below(4);
  return options.first_dealer;
}

/** The record's options as Options.from_dict reads them (its defaults), or null. */
function dealOptions(raw) {
  const o = { chanter: false, partner_draw: false, first_dealer: "random",
    signals: "private", signal_risk: 0.25, ...(raw ?? {}) };
  const ok = typeof o.chanter === "boolean" && typeof o.partner_draw === "boolean"
    && (o.first_dealer === "random" || isSeat(o.first_dealer))
    && typeof o.signal_risk === "number";
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

/** R9 as the record tells it: the hands each seat should hold, exactly. */
function expectedHands({ hands, talon }, d, chanter) {
  const expected = hands.map((h) => new Set(h));
  if (chanter?.exchange !== true) return expected;
  const discards = Array.isArray(chanter.discards) ? chanter.discards : [];
  for (const [seat, first] of [[leftOf(d), 0], [d, 1]]) {
    const out = new Set(Array.isArray(discards[seat]) ? discards[seat] : []);
    const share = talon.filter((_, k) => k % 2 === first);
    expected[seat] = new Set([...expected[seat], ...share].filter((c) => !out.has(c)));
  }
  return expected;
}

/**
 * fair.check_record's replay of `record` from `seed` (scheme 2): null when the first
 * dealer, every hand and every risky signal's audience follow from it, else what does not,
 * in check_record's words.
 */
export async function replayDeals(record, seed) {
  const options = dealOptions(record?.options);
  if (options === null) return t("fair.bad.options");
  const deals = record.deals;
  if (!wellFormed(deals)) return t("fair.bad.deals");
  const first = await firstDealer(options, seed);
  if (deals[0].dealer !== first) {
    return t(options.partner_draw ? "fair.bad.dealer.draw" : "fair.bad.dealer",
      { seat: first, dealer: deals[0].dealer });
  }
  let signal = 0;
  for (const [i, d] of deals.entries()) {
    const number = i + 1;
    if (options.chanter && !d.chanter && d.tricks?.length === 9) {
      return t("fair.bad.chanter", { deal: number });
    }
    const expected = expectedHands(await dealOf(seed, number, d.dealer), d.dealer, d.chanter);
    for (const [seat, hand] of d.hands.entries()) {
      const card = hand.find((c) => !expected[seat].has(c));
      if (card !== undefined) {
        return t("fair.bad.card", { deal: number, seat, card });
      }
    }
    for (const s of Array.isArray(d.signals) ? d.signals : []) {
      if (options.signals === "risky" && isSeat(s?.from_seat)) {      // R16
        const stream = new Stream(seed, `signal:${signal}`);
        const me = s.from_seat;
        const to = [(me + 2) % 4];
        for (const opp of [leftOf(me), (me + 3) % 4]) {
          if (await stream.notices(options.signal_risk)) to.push(opp);
        }
        const given = Array.isArray(s.to) ? [...s.to].sort() : [];
        if (JSON.stringify(to.sort()) !== JSON.stringify(given)) {
          return t("fair.bad.signal", { deal: number, n: signal + 1, given: given.join(", "),
            to: to.join(", ") });
        }
      }
      signal += 1;
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
  const words = t("fair.start", { match: event.match ?? "?", commitment,
    contributed: contributedWords(contributors(event.contributions)) });
  if (sent === null || seat === null) return { ok: true, text: t("fair.sentence", { words }) };
  const [seen, mine] = sent;
  const problems = [];
  if (seen !== null && seen !== commitment) {
    problems.push(t("fair.start.not_seen"));
  }
  const contributions = Array.isArray(event.contributions) ? event.contributions : [];
  if (contributions[seat] !== mine) problems.push(t("fair.start.not_in"));
  if (problems.length) {
    return { ok: false, text: t("fair.start.warning", { words, problems: problems.join(t("fair.and")) }) };
  }
  return { ok: true, text: t("fair.start.in", { words }) };
}

/**
 * match_over: the revealed `fair` (record.fair) against `expected`, the commitment the match
 * started with (null if we did not see it), and the draws of `record` (the match_over
 * event's) replayed from its seed; without a record, only the seed is checked. Resolves to
 * {ok, text}; never rejects.
 */
export async function checkReveal(fair, expected = null, record = null) {
  const fail = (why) => ({ ok: false, text: t("fair.fail", { why }) });
  if (!globalThis.crypto?.subtle) {
    // Browsers offer SHA-256 only on https and localhost: a page served over plain http on
    // a network address cannot hash, which says nothing about the deals.
    return { ok: true, text: t("fair.no_hash") };
  }
  try {
    if (fair === null || typeof fair !== "object") return fail(t("fair.bad.no_material"));
    const scheme = SCHEMES[fair.scheme];
    if (scheme === undefined) return fail(t("fair.bad.scheme", { scheme: String(fair.scheme).slice(0, 32) }));
    const { commitment, secret, salt, contributions, seed } = fair;
    if (!isHex(commitment, 64) || !isHex(secret, 64) || !isHex(salt, 32)) {
      return fail(t("fair.bad.material"));
    }
    if (!Array.isArray(contributions) || contributions.length !== 4
        || !contributions.every(isContribution)) {
      return fail(t("fair.bad.contributions"));
    }
    if (await commitmentOf(secret, salt, scheme) !== commitment) {
      return fail(t("fair.bad.commitment", { commitment }));
    }
    if (expected !== null && expected !== commitment) {
      return fail(t("fair.bad.expected", { commitment, expected }));
    }
    if (!isHex(seed, 64)) return fail(t("fair.bad.no_seed"));
    if (await seedOf(secret, salt, contributions, scheme) !== seed) {
      return fail(t("fair.bad.seed"));
    }
    const words = t("fair.checked", { commitment,
      contributed: contributedWords(contributors(contributions)) });
    if (scheme === 1) return { ok: true, text: t("fair.checked.v1", { words }) };
    if (record === null) return { ok: true, text: t("fair.sentence", { words }) };
    const wrong = await replayDeals(record, seed);
    if (wrong !== null) return fail(wrong);
    const n = record.deals.length;
    return { ok: true, text: t("fair.checked.replayed", { words, n }) };
  } catch (err) {
    return fail(t("fair.bad.error", { error: String(err?.message ?? err).slice(0, 80) }));
  }
}
