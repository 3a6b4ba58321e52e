// The game's words for the browser: card codes and names (R1-R3), teams (R5), signals
// (R15), error codes in plain sentences, and the cleaning of network text. Pure data and
// functions, no DOM: the node tests import this module as it is. The words themselves are
// in the message catalogues (i18n.mjs).

import { t } from "./i18n.mjs";

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
/** Suit: its colour class and name key (the face's sign is drawn by cardsvg.mjs). */
export const SUIT_INFO = Object.freeze({
  o: { key: "suit.o", spanish: "oros" },
  c: { key: "suit.c", spanish: "copas" },
  b: { key: "suit.b", spanish: "bastos" },
  e: { key: "suit.e", spanish: "espadas" },
});

export function isCard(code) {
  return typeof code === "string" && CARD_SET.has(code);
}

/** R3: higher wins; cards of equal strength tie (and may spoil a trick, R11). */
export function strength(code) {
  const m = MAJEURES[code];
  return m ? m[0] : RANK_STRENGTH[code[0]];
}

/** The card without its R3 name: 'Roi of batons', 'Roi de bâtons'. */
export function plainName(code) {
  return t(`card.of.${code[1]}`, { rank: t(`rank.${code[0]}`) });
}

/** 'Monsieur', 'Roi of batons', 'Ace of swords' (as server/game/cards.py names them). */
export function cardName(code) {
  const m = MAJEURES[code];
  return m ? m[1] : plainName(code);
}

/** What a screen reader says for a card: its name, rank and suit, strength. */
export function cardLabel(code) {
  const plain = plainName(code);
  const name = cardName(code);
  const n = strength(code);
  return name === plain ? t("card.label", { name: plain, n })
    : t("card.label.named", { name, plain, n });
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
export const teamName = (team) => t(`team.${team}`);

/** R15: the signal vocabulary (ids; the words are in the catalogues). */
export const SIGNALS = Object.freeze(["monsieur", "madame", "borgne", "vache", "grand_neuf",
  "petit_neuf", "deux_de_chene", "deux_d_ecrit", "aces", "useless_hand", "going_mordienne"]);

/** A signal in words: 'I hold 3 aces'. Unknown ids (a newer server) are named as sent. */
export function signalText(signal, n) {
  if (signal === "aces") return t("signal.aces", { n });
  if (SIGNALS.includes(signal)) return t(`signal.${signal}`);
  return t("signal.unknown", { id: cleanText(String(signal)).slice(0, 32) });
}

/** Server error codes this client explains (docs/PROTOCOL.md, "Error codes"). */
export const ERROR_CODES = Object.freeze(["not_your_turn", "card_not_in_hand", "wrong_phase",
  "match_over", "signals_off", "bad_discard", "unknown_card", "no_such_table", "bad_code",
  "seat_taken", "table_full", "not_seated", "not_at_table", "not_creator", "not_ready",
  "too_many_tables", "too_many_reviews", "hints_off", "too_many_marks", "too_many_spectators", "rate_limited", "storage_unavailable",
  "internal_error", "shutting_down", "server_busy", "conflict", "bad_token", "unknown_type",
  "name_taken", "name_refused", "bad_credentials", "login_throttled", "already_registered",
  "not_registered", "no_such_player", "being_matched"]);

/** An error reply as one sentence; codes this client does not know read like internal_error. */
export function errorSentence(reply) {
  const code = String(reply?.code ?? "internal_error");
  const message = cleanText(String(reply?.message ?? "")).slice(0, 200);
  if (code === "card_not_in_hand") {
    const card = reply?.details?.card;
    return isCard(card) ? t("error.card_not_in_hand.card", { name: cardName(card), card })
      : t("error.card_not_in_hand");
  }
  if (code === "invalid_field") return t("error.invalid_field", { message });
  return ERROR_CODES.includes(code) ? t(`error.${code}`)
    : t("error.other", { message: message || code });
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
