// The game's words for the browser: card codes and names (R1-R3), teams (R5), signals
// (R15), error codes in plain sentences, and the cleaning of network text. Pure data and
// functions, no DOM: the node tests import this module as it is.

/** R2: ranks 1-9, Valet, Cavalière, Roi; suits oros, copas, bastos, espadas. */
export const RANKS = "123456789VCR";
export const SUITS = "ocbe";
/** The 48 codes in the pack's fixed order (suit-major, as docs/PROTOCOL.md lists them). */
export const CARD_CODES = Object.freeze(
  [...SUITS].flatMap((s) => [...RANKS].map((r) => r + s)));
const CARD_SET = new Set(CARD_CODES);

/** R3: the cartes majeures, strongest first, with their traditional names. */
export const MAJEURES = Object.freeze({
  "3o": [19, "Monsieur"],
  "3c": [18, "Madame"],
  "2o": [17, "Le Borgne"],
  "2c": [16, "La Vache"],
  "9c": [15, "Grand-neuf"],
  "9o": [14, "Petit-neuf"],
  "2b": [13, "Deux de chêne"],
  "2e": [12, "Deux d'écrit"],
});
const RANK_STRENGTH = { 1: 11, R: 10, C: 9, V: 8, 9: 7, 8: 6, 7: 5, 6: 4, 5: 3, 4: 2, 3: 1 };
const RANK_NAMES = {
  1: "Ace", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight",
  9: "Nine", V: "Valet", C: "Cavalière", R: "Roi",
};
/** Suit: English name, Spanish name, symbol shown on the face (colour comes from CSS). */
export const SUIT_INFO = Object.freeze({
  o: { name: "coins", spanish: "oros", symbol: "◆" },
  c: { name: "cups", spanish: "copas", symbol: "♥" },
  b: { name: "batons", spanish: "bastos", symbol: "♣" },
  e: { name: "swords", spanish: "espadas", symbol: "♠" },
});

export function isCard(code) {
  return typeof code === "string" && CARD_SET.has(code);
}

/** R3: higher wins; cards of equal strength tie (and may spoil a trick, R11). */
export function strength(code) {
  const m = MAJEURES[code];
  return m ? m[0] : RANK_STRENGTH[code[0]];
}

/** 'Monsieur', 'Roi of batons', 'Ace of swords' (as server/game/cards.py names them). */
export function cardName(code) {
  const m = MAJEURES[code];
  if (m) return m[1];
  return `${RANK_NAMES[code[0]]} of ${SUIT_INFO[code[1]].name}`;
}

/** What a screen reader says for a card: name, rank and suit, strength. */
export function cardLabel(code) {
  const suit = SUIT_INFO[code[1]];
  const plain = `${RANK_NAMES[code[0]]} of ${suit.name}`;
  const name = cardName(code);
  return name === plain ? `${plain}, strength ${strength(code)}`
    : `${name}, ${plain}, strength ${strength(code)}`;
}

/** The rank as printed on the face: 1..9, V, C, R. */
export function rankText(code) {
  return code[0];
}

const ORDER = new Map(CARD_CODES.map((c, i) => [c, i]));

/** Strongest first; ties in the pack's fixed order, so the order never jumps (R3). */
export function sortByStrength(cards) {
  return [...cards].sort((a, b) => (strength(b) - strength(a)) || (ORDER.get(a) - ORDER.get(b)));
}

/** R4/R5: left of a seat is the next one clockwise; partners sit opposite. */
export const leftOf = (seat) => (seat + 1) % 4;
export const partnerOf = (seat) => (seat + 2) % 4;
export const teamOf = (seat) => seat % 2;
export const TEAM_NAMES = ["Team A", "Team B"];

/** R15: the signal vocabulary, each in plain words. */
export const SIGNALS = Object.freeze([
  ["monsieur", "I hold Monsieur (3o)"],
  ["madame", "I hold Madame (3c)"],
  ["borgne", "I hold Le Borgne (2o)"],
  ["vache", "I hold La Vache (2c)"],
  ["grand_neuf", "I hold Grand-neuf (9c)"],
  ["petit_neuf", "I hold Petit-neuf (9o)"],
  ["deux_de_chene", "I hold Deux de chêne (2b)"],
  ["deux_d_ecrit", "I hold Deux d'écrit (2e)"],
  ["aces", "I hold N aces"],
  ["useless_hand", "My hand is worthless"],
  ["going_mordienne", "I am going for mordienne"],
]);
const SIGNAL_WORDS = new Map(SIGNALS);

/** A signal in words: 'I hold 3 aces'. Unknown ids (a newer server) are named as sent. */
export function signalText(signal, n) {
  if (signal === "aces") return `I hold ${n} ace${n === 1 ? "" : "s"}`;
  return SIGNAL_WORDS.get(signal) ?? `signal “${cleanText(String(signal)).slice(0, 32)}”`;
}

/** Server error codes in plain words (docs/PROTOCOL.md, "Error codes"). */
export const ERROR_SENTENCES = Object.freeze({
  not_your_turn: "It is not your turn: wait for your turn to come round (R10).",
  card_not_in_hand: "You do not hold that card.",
  wrong_phase: "That cannot be done at this point of the deal.",
  match_over: "The match is over.",
  signals_off: "This table does not allow signals (R16).",
  bad_discard: "Discard exactly six different cards of your hand (R9).",
  unknown_card: "That is not a card: rank 1-9, V, C or R, then suit o, c, b or e (R2).",
  no_such_table: "There is no such table (it may have finished and been cleaned up).",
  bad_code: "That table is private: it needs the right join code.",
  seat_taken: "That seat is taken; pick another one.",
  table_full: "All four seats are taken; you can watch the table instead.",
  not_seated: "You have no seat at that table.",
  not_at_table: "You are not at that table.",
  not_creator: "Only the player who created the table can do that.",
  not_ready: "The table cannot start now (it has already started or finished).",
  too_many_tables: "No room for another table right now (you, or the server, have too many open).",
  too_many_reviews: "You have as many reviews waiting as allowed: ask again once one is done.",
  hints_off: "This table does not allow hints (a casual table may turn them on).",
  too_many_spectators: "That table has all the spectators it can take.",
  rate_limited: "Slow down: too many commands at once.",
  storage_unavailable: "The server could not save that, so nothing changed; try again.",
  internal_error: "The server hit an internal error; nothing changed.",
  shutting_down: "The server is restarting; nothing changed. It will be sent again.",
  server_busy: "The server is too busy for new tables or players right now; try again in a few seconds.",
  conflict: "The table changed while your move was being applied; nothing changed. Try again.",
  bad_token: "The server no longer knows this session.",
  invalid_field: "The server refused a value",
  unknown_type: "The server does not know that command.",
});

/** An error reply as one sentence; codes this client does not know read like internal_error. */
export function errorSentence(reply) {
  const code = String(reply?.code ?? "internal_error");
  const message = cleanText(String(reply?.message ?? "")).slice(0, 200);
  if (code === "card_not_in_hand") {
    const card = reply?.details?.card;
    return isCard(card) ? `You do not hold ${cardName(card)} (${card}).`
      : ERROR_SENTENCES.card_not_in_hand;
  }
  if (code === "invalid_field") return `${ERROR_SENTENCES.invalid_field}: ${message}`;
  return ERROR_SENTENCES[code] ?? `The server refused that: ${message || code}`;
}

// Cc (controls), Cf (format: bidi overrides, zero-width), Cs, Co, Cn, Zl, Zp.
const DROP = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/gu;

/** protocol.clean_text in JS: a client cleans names again before display (PROTOCOL.md). */
export function cleanText(s) {
  return String(s).replace(DROP, "").split(/\s+/u).filter(Boolean).join(" ");
}

/** A name from the network, cleaned and capped (names are at most 32 code points). */
export function safeName(s, fallback = "?") {
  const clean = [...cleanText(s ?? "")].slice(0, 32).join("");
  return clean || fallback;
}
