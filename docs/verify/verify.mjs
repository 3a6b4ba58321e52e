// Check that an Aluette match record was dealt fairly (docs/RULES.md, R8a, aluette-fair/2).
//
//     node verify.mjs RECORD.json [COMMITMENT]     exit 0: proven; 1: not (the reason)
//
// Written from the rule book alone, with node's own modules only: the commitment, the
// seed, the first dealer (R6, R7), every hand of every deal (R8, R9's exchange) and who
// noticed each risky signal (R16). The tricks' legality (R18) is `aluette-record verify`'s.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { argv, exit } from "node:process";
import { pathToFileURL } from "node:url";

const PACK = [..."ocbe"].flatMap((suit) => [..."123456789VCR"].map((rank) => rank + suit));
const TOP = ["3o", "3c", "2o", "2c"];                                // R7's four cards
const sha256 = (text) => createHash("sha256").update(text, "ascii").digest();
const hex = (text) => sha256(text).toString("hex");
const check = (ok, what) => { if (!ok) throw new Error(what); };

/** Block i = SHA-256(seed:label:i), read as 32-bit big-endian words, first to last. */
export class Stream {
  constructor(seed, label) { this.prefix = `${seed}:${label}:`; this.i = 0; this.words = []; }
  word() {
    if (this.words.length === 0) {
      const block = sha256(`${this.prefix}${this.i++}`);
      for (let k = 28; k >= 0; k -= 4) this.words.push(block.readUInt32BE(k));
    }
    return this.words.pop();
  }
  below(n) {                                // unbiased: redraw at or above the limit
    const limit = 2 ** 32 - (2 ** 32 % n);
    let w;
    do w = this.word(); while (w >= limit);
    return w % n;
  }
  shuffle(items) {                          // Fisher-Yates, from the last index down
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.below(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }
}

export function firstDealer(seed, options) {
  if (options.partner_draw) {               // R7: Madame's holder sits opposite Monsieur's
    const holder = new Map();
    let seat = 0;
    for (const card of new Stream(seed, "partner_draw").shuffle([...PACK])) {
      while ([...holder.values()].includes(seat)) seat = (seat + 1) % 4;
      if (TOP.includes(card)) {
        holder.set(card, seat);
        if (holder.size === 4) break;
      }
      seat = (seat + 1) % 4;
    }
    return (holder.get("3o") + 2) % 4;
  }
  if (options.first_dealer === "random") return new Stream(seed, "first_dealer").below(4);
  return options.first_dealer;              // R6
}

/** Throws, saying what, unless the record's deals follow from its seed; returns the seed. */
export function verify(record, commitment) {
  const f = record.fair;
  const options = record.options;
  check(f.scheme === "aluette-fair/2", `scheme ${f.scheme}: use aluette-record verify`);
  check(commitment === f.commitment
    && f.commitment === hex(`aluette-commit/2:${f.secret}:${f.salt}`), "the commitment");
  const seed = hex(`aluette-seed/2:${f.secret}:${f.salt}:`
    + f.contributions.map((c) => c ?? "").join(","));
  check(record.deals[0].dealer === firstDealer(seed, options), "the first dealer");
  let k = 0;                                // the match's signals, counted from 0
  record.deals.forEach((deal, index) => {
    const n = index + 1;
    const d = deal.dealer;
    const pack = new Stream(seed, `deal:${n}`).shuffle([...PACK]);
    const hands = [];                       // R8: three rounds of three from the left
    for (let i = 0; i < 4; i++) {
      hands[(d + 1 + i) % 4] = new Set([0, 1, 2].flatMap((r) => pack.slice(12 * r + 3 * i,
        12 * r + 3 * i + 3)));
    }
    const chanter = deal.chanter ?? { exchange: false };
    if (chanter.exchange) {                 // R9: talon alternately to left and dealer
      for (const [seat, first] of [[(d + 1) % 4, 36], [d, 37]]) {
        const share = pack.filter((_, i) => i >= first && (i - first) % 2 === 0);
        const out = new Set(chanter.discards[seat]);
        hands[seat] = new Set([...hands[seat], ...share].filter((c) => !out.has(c)));
      }
    }
    for (let seat = 0; seat < 4; seat++) {
      const got = deal.hands[seat];
      check(got.length === hands[seat].size && got.every((c) => hands[seat].has(c)),
        `deal ${n}, seat ${seat}'s hand`);
    }
    for (const signal of deal.signals ?? []) {   // R16: left opponent, then right
      const s = new Stream(seed, `signal:${k}`);
      const me = signal.from_seat;
      const to = [(me + 2) % 4];
      if (options.signals === "risky") {
        for (const o of [(me + 1) % 4, (me + 3) % 4]) {
          if (s.word() < options.signal_risk * 2 ** 32) to.push(o);
        }
      }
      check(JSON.stringify(to.sort()) === JSON.stringify([...signal.to].sort()),
        `deal ${n}, signal ${k + 1}: who noticed it`);
      k += 1;
    }
  });
  return seed;
}

if (import.meta.url === pathToFileURL(argv[1] ?? "").href) {
  const record = JSON.parse(readFileSync(argv[2], "utf8"));
  try {
    verify(record, argv[3] ?? record.fair?.commitment);
  } catch (err) {
    console.error(`NOT PROVEN: ${err.message}`);
    exit(1);
  }
  console.log(`proven: ${record.deals.length} deals follow from commitment ${record.fair.commitment}`);
}
