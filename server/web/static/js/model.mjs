// One table as this browser knows it, kept in step with the event stream (pure: no DOM).
//
// The server sends a snapshot (the engine's view for this viewer) after a join, spectate or
// a resume without replay, then one event per sequence number; this model applies each
// event to the last view, so it holds the view the engine would build for our seat. It is
// the same logic as client_cli/model.py (the terminal client's model): both are held to
// one specification, tests/spec/model/*.json (docs/ARCHITECTURE.md), plus what the screen
// needs to explain a deal: the tricks of the last finished deal and the partner draw.
//
// Whose turn it is comes only from the server: a `turn` event or a snapshot's `to_act`.
// Every event that ends a turn clears it until the next `turn` (a guessed turn flashes
// "your turn" on a page whose turn it is not, and made the network bot play an empty hand).
//
// Protocol 1.3, as client_cli/model.py does it: a table may play several matches (a
// rematch), and deals_committed opens each one with a fresh view, so the screen resets to
// the new match exactly as at a first start. Chat is kept apart from the view (`chat`,
// `speakers`): a snapshot replaces the view, never the conversation; a head's
// `chat_history` (1.4) replaces the conversation with the table's latest lines. R8a (fair deals) as
// client_cli/model.py checks it: `contributing` remembers what we sent and the commitment we
// saw; deals_committed checks the match's start, match_over the revealed record (the hashes
// are asynchronous: `fairCheck` is the pending promise, `fairNote` its result).

import { cleanText, leftOf, sortByStrength } from "./cards.mjs";
import { checkReveal, checkStart } from "./fair.mjs";

/** Chat lines kept per table (the oldest go first): the page shows a bounded log. */
export const CHAT_KEPT = 100;
/** docs/PROTOCOL.md, Chat: 1 to 200 code points once cleaned. */
export const MAX_CHAT_LEN = 200;

let models = 0;
const now = () => (typeof performance !== "undefined" ? performance.now() : 0);
const clone = (x) => (x === undefined ? undefined : JSON.parse(JSON.stringify(x)));

export class TableModel {
  constructor(table) {
    this.table = table;
    this.uid = ++models;       // this model object (the screen's parts key on it)
    this.seat = null;          // our seat; null when watching
    this.info = null;          // the latest TableInfo (table_changed)
    this.view = null;          // the engine-shaped view, once a match is running
    this.pendingDiscard = [];  // the six cards we asked to discard (R9), until confirmed
    /** The last finished deal: deal_scored's fields plus its tricks when we saw them. */
    this.lastDeal = null;
    this.lastDraw = null;      // partner_draw's event (R7), if one was made
    this.matchOver = null;     // match_over's fields (record excluded)
    this.turnAt = 0;           // performance.now() of the last turn event (turn timer)
    /** The trick just gathered ({cards, leader, winner, at}), shown a moment (pace). */
    this.gathered = null;
    this.dealAt = 0;           // performance.now() of the last deal_scored (its result shown)
    this.dealSeen = 0;         // the deal whose result the player dismissed
    this.timedOut = null;      // {seat, at}: the turn timer played for that seat (1.5)
    /** Set when an event cannot be applied from what we know (ask for a snapshot). */
    this.stale = false;
    this.match = 0;            // this table's match number (deals_committed; a rematch: +1)
    /** The latest chat lines: {n, from_seat, name, text, sender, mine}, at most CHAT_KEPT. */
    this.chat = [];
    this.chatCount = 0;        // lines ever received (keys the log; the log itself is bounded)
    /** sender id -> {name, seat} of who said something here (what `mute` names). */
    this.speakers = new Map();
    this.muted = new Set();    // senders we muted at this table (the server stops them)
    /**
     * Our own sender id, once known. A seat's line is ours by its from_seat; a spectator's
     * carries none, and the id is opaque (the server derives it from secrets), so it is
     * learnt from the first spectator line whose text is one we just sent (`saying`).
     */
    this.mySender = null;
    this.saying = [];          // cleaned texts of our chat commands not echoed back yet
    this.commitment = null;    // R8a: the current match's commitment (deals_committed)
    /** R8a: [commitment seen, contribution] of our last contribution, until a match starts. */
    this.sent = null;
    /** R8a: what the latest check found, {ok, text, of: "deals_committed" | "match_over"}. */
    this.fairNote = null;
    this.fairCheck = null;     // the pending match_over check (a promise), if any
  }

  /** R8a: we are sending `contribution` now, having seen `seen` (default: the table's
   *  next_commitment as we know it): remembered to check the match's start. */
  contributing(contribution, seen = null) {
    this.sent = [seen ?? this.info?.next_commitment ?? null, contribution];
  }

  get spectator() {
    return this.seat === null;
  }

  get status() {
    return this.info?.status ?? "waiting";
  }

  get myTurn() {
    const v = this.view;
    return v !== null && this.seat !== null && v.to_act === this.seat
      && ["play", "chanter_vote", "chanter_discard"].includes(v.phase);
  }

  seatInfo(seat) {
    return this.info?.seats?.[seat] ?? null;
  }

  /** Seats that asked for a rematch since the last match ended (TableInfo.rematch). */
  get rematch() {
    return (this.info?.rematch ?? []).filter((s) => Number.isInteger(s));
  }

  /** Seated humans the rematch still waits for (bots always agree; PROTOCOL.md, Rematch). */
  get rematchWaitingFor() {
    const agreed = new Set(this.rematch);
    return (this.info?.seats ?? []).flatMap((s, i) => (s?.kind === "human" && !agreed.has(i)
      ? [i] : []));
  }

  /** The server took our chat text (cleaned as the server cleans it; called on its ok,
   *  which comes before the line itself): recognise its echo. */
  said(text) {
    this.saying = [...this.saying, text].slice(-10);
  }

  /** Apply one event payload (already ordered by the session). */
  apply(event) {
    const kind = event?.type;
    if (kind === "chat") {
      this._on_chat(event);
      return;
    }
    if (kind === "chat_history") {
      this._on_chat_history(event);
      return;
    }
    if (kind === "deals_committed") {
      this._on_deals_committed(event);
      return;
    }
    if (kind === "turn_timed_out") {
      if (Number.isInteger(event.seat)) this.timedOut = { seat: event.seat, at: now() };
      return;
    }
    if (kind === "rematch_accepted") {
      // A table_changed follows with the whole list; the seat is added now for the screen.
      if (this.info && Number.isInteger(event.seat) && !this.rematch.includes(event.seat)) {
        this.info.rematch = [...this.rematch, event.seat];
      }
      return;
    }
    if (kind === "snapshot") {
      const view = clone(event.view);
      view.discarded ??= [];
      view.signals_sent ??= [];
      view.signals ??= [];
      view.trick = (view.trick ?? []).map((x) => [...x]);
      view.draw = (view.draw ?? []).map((x) => [...x]);
      this.view = view;
      this.seat = Number.isInteger(view.viewer) ? view.viewer : null;
      this.pendingDiscard = [];
      this.stale = false;
      if (view.draw.length && !this.lastDraw) this.lastDraw = { cards: view.draw, seating: null };
      const deals = view.deals ?? [];
      if (!deals.length) {
        this.lastDeal = null;
      } else if (this.lastDeal?.deal_number !== deals.length) {
        // After a reload: the summary only (a view keeps no finished deal's tricks).
        this.lastDeal = { ...clone(deals[deals.length - 1]), deal_number: deals.length,
          tricks: null, totals: [...view.points] };
      }
      if (view.phase === "match_over") {
        this.matchOver = { points: view.points, result: view.result };
      }
      return;
    }
    if (kind === "table_changed") {
      this.info = clone(event.table);
      return;
    }
    if (kind === "player_connected" || kind === "player_disconnected") {
      // A table_changed follows with the same news; the flag is set now for the screen.
      const seat = this.info?.seats?.[event.seat];
      if (seat) seat.connected = kind === "player_connected";
      return;
    }
    let v = this.view;
    if (v === null) {
      // Events of a match we have no view of (a snapshot always comes first; this is only
      // reached if a server skips it): start from an empty view.
      if (kind !== "partner_draw" && kind !== "deal_started") return;
      v = this.view = this._emptyView();
    }
    const handler = this[`_on_${kind}`];
    if (typeof handler === "function") handler.call(this, v, event);
  }

  /**
   * A match starts (the first, or a rematch): a fresh view, built from the events that
   * follow as at a first start (partner_draw or deal_started make it), and nothing left of
   * the last match's result panels. The table_changed that says "playing" comes after the
   * first deal's events, so the status is set now: otherwise the finished match's panel
   * would stay on screen over the new deal until then.
   */
  _on_deals_committed(e) {
    this.match = Number.isInteger(e.match) ? e.match : this.match + 1;
    this.commitment = typeof e.commitment === "string" ? e.commitment : null;
    this.fairNote = { ...checkStart(e, this.sent, this.seat), of: "deals_committed" };
    this.fairCheck = null;
    this.sent = null;
    this.view = null;
    this.pendingDiscard = [];
    this.lastDeal = null;
    this.lastDraw = null;
    this.matchOver = null;
    if (this.info) {
      this.info.status = "playing";
      this.info.match = this.match;
      this.info.rematch = [];
    }
  }

  /** A chat line (PROTOCOL.md, Chat): name and text cleaned again before they are kept. */
  _on_chat(e) {
    const seat = Number.isInteger(e.from_seat) ? e.from_seat : null;
    const sender = typeof e.sender === "string" ? e.sender : "";
    const text = [...cleanText(e.text ?? "")].slice(0, MAX_CHAT_LEN).join("");
    const name = [...cleanText(e.name ?? "")].slice(0, 32).join("");
    // Our own id, once known, says it best (a seat's earlier line may be someone else's).
    let mine = this.mySender !== null && sender !== "" ? sender === this.mySender
      : seat !== null && seat === this.seat;
    if (!mine && seat === null && this.seat === null && this.mySender === null) {
      const at = this.saying.indexOf(text);
      if (at >= 0) {
        mine = true;
        this.mySender = sender;
        this.saying.splice(at, 1);
      }
    }
    if (mine && seat !== null) this.mySender = sender;
    this.chatCount += 1;
    this.chat = [...this.chat, { n: this.chatCount, from_seat: seat, name, text, sender, mine }]
      .slice(-CHAT_KEPT);
    if (sender) this.speakers.set(sender, { name, seat });
  }

  /** A head's chat so far (protocol 1.4): it replaces the log, names our sender id and
   *  whom we mute. */
  _on_chat_history(e) {
    if (typeof e.sender === "string" && /^[0-9a-f]{16}$/.test(e.sender)) {
      this.mySender = e.sender;
    }
    this.chat = [];
    for (const line of Array.isArray(e.lines) ? e.lines : []) {
      if (line && typeof line === "object") this._on_chat(line);
    }
    // Whom we mute here (their lines are left out): the page offers to unmute them.
    this.muted = new Set((Array.isArray(e.muted) ? e.muted : [])
      .filter((x) => typeof x === "string" && /^[0-9a-f]{16}$/.test(x)));
  }

  /** Senders we mute who have no line in the log (so no Unmute button of their own). */
  get mutedUnseen() {
    const seen = new Set(this.chat.map((l) => l.sender));
    return [...this.muted].filter((x) => !seen.has(x));
  }

  _emptyView() {
    return {
      viewer: this.seat, phase: "play", options: clone(this.info?.options ?? {}),
      deal_number: 0, dealer: 0, to_act: null, hand: [], hand_sizes: [0, 0, 0, 0], leader: 0,
      trick: [], tricks: [], trick_counts: [0, 0, 0, 0], points: [0, 0], deals: [],
      chanter_votes: [null, null, null, null], signals: [], draw: [], result: null,
      discarded: [], signals_sent: [],
    };
  }

  /** R7: seats move; seating[s] is where the player of seat s now sits. */
  _on_partner_draw(v, e) {
    v.draw = e.cards.map((x) => [...x]);
    v.dealer = e.dealer;
    this.lastDraw = { cards: v.draw, seating: [...e.seating] };
    if (this.seat !== null) {
      this.seat = e.seating[this.seat];
      v.viewer = this.seat;
    }
  }

  /** R8: a fresh deal; R9: with chanter the deal opens with the vote. */
  _on_deal_started(v, e) {
    const dealer = e.dealer;
    const chanter = Boolean(v.options?.chanter);
    Object.assign(v, {
      deal_number: e.deal_number, dealer, phase: chanter ? "chanter_vote" : "play",
      to_act: null, hand: [], hand_sizes: [9, 9, 9, 9], leader: leftOf(dealer),
      trick: [], tricks: [], trick_counts: [0, 0, 0, 0], chanter_votes: [null, null, null, null],
      signals: [], discarded: [], signals_sent: [],
    });
    this.pendingDiscard = [];
  }

  _on_hand_dealt(v, e) {
    if (e.seat === this.seat) v.hand = sortByStrength(e.cards);
  }

  _on_chanter_vote(v, e) {
    v.chanter_votes[e.seat] = e.vote;
    v.to_act = null;
  }

  /** R9: all four agreed: the talon goes to the dealer's left and the dealer. */
  _on_chanter_result(v, e) {
    const first = leftOf(v.dealer);
    const dealer = v.dealer;
    if (e.accepted) {
      v.phase = "chanter_discard";
      v.hand_sizes[first] += 6;
      v.hand_sizes[dealer] += 6;
    } else {
      v.phase = "play";
      v.leader = first;
    }
    v.to_act = null;
  }

  _on_talon_dealt(v, e) {
    if (e.seat === this.seat) v.hand = sortByStrength([...v.hand, ...e.cards]);
  }

  _on_chanter_discarded(v, e) {
    const seat = e.seat;
    const dealer = v.dealer;
    v.hand_sizes[seat] -= 6;
    if (seat === this.seat) {
      if (this.pendingDiscard.length) {
        const gone = new Set(this.pendingDiscard);
        v.hand = v.hand.filter((c) => !gone.has(c));
        v.discarded = [...this.pendingDiscard];
        this.pendingDiscard = [];
      } else {
        this.stale = true; // discarded from another page (or before a reload): which six?
      }
    }
    if (seat !== leftOf(dealer)) {
      v.phase = "play";
      v.leader = leftOf(dealer);
    }
    v.to_act = null;
  }

  /** R10: any card; the turn passes clockwise, as the server's next turn will say. */
  _on_card_played(v, e) {
    this.gathered = null;
    v.trick.push([e.seat, e.card]);
    v.hand_sizes[e.seat] = Math.max(0, v.hand_sizes[e.seat] - 1);
    if (e.seat === this.seat) v.hand = v.hand.filter((c) => c !== e.card);
    v.to_act = null;
  }

  /** R11: the winner leads next; after a spoiled trick the same leader leads again. */
  _on_trick_done(v, e) {
    const winner = e.winner ?? null;
    v.tricks.push({ leader: e.leader, cards: [...e.cards], winner });
    this.gathered = { cards: [...e.cards], leader: e.leader, winner, at: now() };
    v.trick = [];
    if (winner !== null) {
      v.trick_counts[winner] += 1;
      v.leader = winner;
    } else {
      v.leader = e.leader;
    }
    v.to_act = null; // the next turn says who leads (none after the ninth trick)
  }

  /** R12/R13: the deal's result joins the match history. */
  _on_deal_scored(v, e) {
    v.points = [...e.totals];
    const deal = { dealer: e.dealer, winner: e.winner ?? null, points: [...e.points],
      mordienne: e.mordienne, trick_counts: [...e.trick_counts] };
    v.deals.push(deal);
    v.to_act = null;
    this.lastDeal = { ...deal, deal_number: e.deal_number, totals: [...e.totals],
      tricks: v.tricks.length === 9 ? clone(v.tricks) : null };
    this.dealAt = now();
  }

  _on_match_over(v, e) {
    v.phase = "match_over";
    v.to_act = null;
    v.points = [...e.points];
    v.result = e.result;
    this.matchOver = { points: [...e.points], result: e.result };
    this._checkRecord(e.record);
    // The server marks the table finished as it stores match_over, and the table_changed
    // saying so follows at once (server/table.py); the status is set here already, so the
    // screen drawn between the two events offers the rematch and the Leave button.
    if (this.info?.status === "playing") this.info.status = "finished";
  }

  /** R8a at the end: the revealed record against the commitment this match started with,
   *  and its deals replayed from the seed. The check is asynchronous; `fairCheck` resolves
   *  once `fairNote` holds its result. */
  _checkRecord(record) {
    const fair = record?.fair;
    if (fair === null || fair === undefined) return;
    const expected = this.commitment;
    const match = this.match;
    this.fairCheck = checkReveal(fair, expected, record).then((note) => {
      if (this.match === match) this.fairNote = { ...note, of: "match_over" };
      return this.fairNote;
    });
  }

  /** R16: a signal sent to us (by our partner, or noticed from an opponent under risky). */
  _on_signal(v, e) {
    v.signals.push({ from_seat: e.from_seat, signal: e.signal, n: e.n ?? null });
  }

  /** Protocol 1.2: what we signalled, never who noticed it (R16). */
  _on_signal_sent(v, e) {
    v.signals_sent.push({ signal: e.signal, n: e.n ?? null });
  }

  _on_turn(v, e) {
    v.to_act = e.seat;
    if (e.phase) v.phase = e.phase;
    this.turnAt = typeof performance !== "undefined" ? performance.now() : 0;
  }
}
