// The table screen: four seats around the felt, the trick by seat, the hand, whose turn it
// is, and the panels for the chanter (R9), signals (R15), the partner draw (R7), the end of
// each deal (R11-R13a) and the match (R14, R17). Only public information is drawn for a
// spectator: the model of a spectator never holds a hand (the server never sends one).
//
// Pace (issue 31): a gathered trick stays on the felt a moment, a deal's result is shown
// over the table until the player moves on or a few seconds pass, the turn can ring and
// notify while the tab is hidden, and a card can be confirmed before it is played.

import {
  SIGNALS, cardLabel, cardName, cleanText, isCard, partnerOf, safeName, signalText,
  sortByStrength, teamName, teamOf,
} from "./cards.mjs";
import { CommandFailed } from "./connection.mjs";
import { cardFace, fill, h } from "./dom.mjs";
import { explainDeal, matchResultText } from "./explain.mjs";
import { t } from "./i18n.mjs";
import { MAX_CHAT_LEN } from "./model.mjs";
import { prefs, savePrefs, turnAlert } from "./prefs.mjs";
import { renderExtras, replayPart } from "./tablextra.mjs";

const $ = (id) => document.getElementById(id);
const SLOTS = ["bottom", "left", "top", "right"]; // clockwise from our own seat (R4)
const ACTING = new Set(["play", "chanter_vote", "chanter_discard"]);
/** How long a gathered trick stays on the felt, and a deal's result over the table (ms). */
export const TRICK_PAUSE_MS = 1200;
export const DEAL_PAUSE_MS = 8000;

/** The seat's display name: "you", or the cleaned name, or "seat N". */
function nameOf(model, seat) {
  if (model.seat === seat) return t("you");
  const info = model.seatInfo(seat);
  if (info?.kind === "bot" && !info.name) return t("seat.bot", { seat });
  return safeName(info?.name, t("seat.n", { seat }));
}

function relation(model, seat) {
  if (model.seat === null) return teamName(teamOf(seat));
  if (seat === model.seat) return t("you");
  return seat === partnerOf(model.seat) ? t("rel.partner") : t("rel.opponent");
}

const online = (app) => app.conn?.status === "online";

// ------------------------------------------------------------------ actions

function play(app, model, card) {
  const v = model.view;
  if (!v || model.seat === null) return;
  if (v.phase === "match_over") {
    app.setNotice(t("play.over"));
    return;
  }
  if (v.phase !== "play") {
    app.setNotice(v.phase === "chanter_vote" ? t("play.vote_first") : t("play.discard_first"));
    return;
  }
  if (v.to_act !== model.seat) {
    app.setNotice(v.to_act === null || v.to_act === undefined ? t("play.scoring")
      : t("play.not_your_turn", { name: nameOf(model, v.to_act) }));
    return;
  }
  if (!v.hand.includes(card)) {
    app.setNotice(t("error.card_not_in_hand.card", { name: cardName(card), card }));
    return;
  }
  if (prefs.confirm && app.armed !== card) {
    app.armed = card;   // the first tap chooses, the second (or the Play button) plays
    app.setNotice("");
    return;
  }
  app.armed = null;
  app.setNotice("");
  app.act("play", { table: model.table, card });
}

function toggleDiscard(app, model, card) {
  if (app.discard.has(card)) app.discard.delete(card);
  else if (app.discard.size < 6) app.discard.add(card);
  else {
    app.setNotice(t("discard.six_chosen"));
    return;
  }
  app.setNotice("");
}

function discard(app, model) {
  const cards = [...app.discard];
  if (cards.length !== 6) {
    app.setNotice(t("discard.choose", { n: cards.length }));
    return;
  }
  model.pendingDiscard = cards;
  app.act("discard", { table: model.table, cards });
}

function discarding(model) {
  const v = model.view;
  return Boolean(v && model.seat !== null && v.phase === "chanter_discard"
    && v.to_act === model.seat);
}

/** A card button in the hand: play it, or choose it for the discard. */
function onCard(app, model, card) {
  if (discarding(model)) toggleDiscard(app, model, card);
  else play(app, model, card);
  app.render();
}

/** The typed box: a card code or a position; six of them to discard. */
function typed(app, model, text) {
  const v = model.view;
  if (!v || model.seat === null) return;
  const hand = sortByStrength(v.hand);
  const words = text.trim().split(/[\s,]+/).filter(Boolean);
  const cards = [];
  for (const w of words) {
    if (/^\d{1,2}$/.test(w)) {
      const n = Number(w);
      if (n < 1 || n > hand.length) {
        app.setNotice(t("typed.no_number", { n, count: hand.length }));
        return;
      }
      cards.push(hand[n - 1]);
    } else if (isCard(w)) {
      cards.push(w);
    } else {
      app.setNotice(t("typed.not_a_card", { word: w.slice(0, 12) }));
      return;
    }
  }
  if (!cards.length) return;
  if (discarding(model)) {
    app.discard = new Set(cards);
    discard(app, model);
  } else if (cards.length > 1) {
    app.setNotice(t("typed.one_at_a_time"));
  } else {
    app.armed = cards[0];   // typed and entered: that is the confirmation
    play(app, model, cards[0]);
  }
}

// ------------------------------------------------------------------ chat and rematch

/** A chat command's refusal in words; the typed text stays in the box to send again. */
function chatError(err) {
  const code = err instanceof CommandFailed ? err.reply?.code : null;
  if (code === "rate_limited") return t("chat.rate_limited");
  if (code === "invalid_field") return t("chat.invalid", { max: MAX_CHAT_LEN });
  return null;
}

/** Send the chat box's text: a seat's words reach everyone at the table, a spectator's the
 *  spectators only (the server decides; the line comes back as a chat event, as in
 *  client_cli/app.py). */
async function sendChat(app, model) {
  const input = $("chat-input");
  const typedText = input.value;
  const text = cleanText(typedText);
  if (!text) {
    app.chatNotice = t("chat.empty");
    app.render();
    return;
  }
  if ([...text].length > MAX_CHAT_LEN) {
    app.chatNotice = t("chat.too_long", { max: MAX_CHAT_LEN, n: [...text].length });
    app.render();
    return;
  }
  try {
    await app.conn.call("chat", { table: model.table, text });
    // The ok comes before the events it caused, each frame in a task of its own: a line
    // with these words that arrives from now on is ours (model.mjs, mySender).
    model.said(text);
    if (input.value === typedText) input.value = ""; // not what was typed since
    app.chatNotice = "";
  } catch (err) {
    app.chatNotice = chatError(err) ?? t("chat.kept", { why: app.describe(err) });
  }
  app.render();
}

async function toggleMute(app, model, sender) {
  const muted = !model.muted.has(sender);
  const ok = await app.act("mute", { table: model.table, sender, muted });
  if (ok === null) return;
  if (muted) model.muted.add(sender);
  else model.muted.delete(sender);
  const name = safeName(model.speakers.get(sender)?.name);
  app.chatNotice = "";
  app.setStatus(muted ? t("chat.muted", { name }) : t("chat.unmuted", { name }));
}

/** Unmute the senders we mute who have no line here (after a reload: protocol 1.4). */
async function unmuteAll(app, model, senders) {
  for (const sender of senders) {
    const ok = await app.act("mute", { table: model.table, sender, muted: false });
    if (ok === null) return;
    model.muted.delete(sender);
  }
  app.chatNotice = "";
  app.setStatus(t("chat.unmuted.all"));
}

export function setupTable(app) {
  $("play-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const model = app.models.get(app.route.table);
    const input = $("play-input");
    if (model) typed(app, model, input.value);
    input.value = "";
  });
  $("chat-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const model = app.models.get(app.route.table);
    if (model) sendChat(app, model);
  });
  $("share").addEventListener("click", async () => {
    const link = $("share-link");
    link.value = new URL(app.tableLink(app.route.table), location.href).href;
    link.dataset.table = app.route.table;
    link.hidden = false;
    link.select();
    try {
      await navigator.clipboard.writeText(link.value);
      app.setStatus(t("share.copied"));
    } catch {
      app.setStatus(t("share.copy_box"));
    }
  });
  const leave = $("leave");
  leave.addEventListener("click", async () => {
    const model = app.models.get(app.route.table);
    if (!model) return;
    const playing = model.status === "playing" && model.seat !== null;
    if (playing && leave.dataset.confirm !== "1") {
      leave.dataset.confirm = "1";
      leave.textContent = t("leave.confirm");
      return;
    }
    delete leave.dataset.confirm;
    const ok = await app.act("leave", { table: model.table });
    if (ok) {
      app.models.delete(model.table);
      app.conn.forget(model.table);
      app.navigate("/");
    }
  });
  for (const [id, key] of [["pref-confirm", "confirm"], ["pref-sound", "sound"],
    ["pref-notify", "notify"]]) {
    const box = $(id);
    box.checked = Boolean(prefs[key]);
    box.addEventListener("change", async () => {
      prefs[key] = box.checked;
      if (key === "notify" && box.checked && typeof Notification !== "undefined"
          && Notification.permission === "default") {
        await Notification.requestPermission().catch(() => null);
      }
      savePrefs();
      app.armed = null;
      app.render();
    });
  }
  // Keys anywhere but in a text field: 1-9 play (or choose) that card, y/n vote, "/" goes
  // to the box where a card code (or six, to discard) can be typed.
  document.addEventListener("keydown", (ev) => {
    if (app.route.view !== "table" || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const tag = ev.target?.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    const model = app.models.get(app.route.table);
    const v = model?.view;
    if (!v || model.seat === null) return;
    if (ev.key === "/" && !$("hand-section").hidden) {
      ev.preventDefault();
      $("play-input").focus();
    } else if (/^[1-9]$/.test(ev.key)) {
      const hand = sortByStrength(v.hand);
      const card = hand[Number(ev.key) - 1];
      if (card) {
        ev.preventDefault();
        onCard(app, model, card);
      }
    } else if ((ev.key === "y" || ev.key === "n") && v.phase === "chanter_vote"
      && v.to_act === model.seat) {
      ev.preventDefault();
      app.act("chanter_vote", { table: model.table, vote: ev.key === "y" });
    } else if (ev.key === "Escape" && app.armed) {
      app.armed = null;
      app.render();
    }
  });
  // The signals panel starts open where there is room for it (it stays as the user left it).
  $("signals").open = matchMedia("(min-width: 700px)").matches;
  // Clocks on screen: the turn timer, a dropped player's grace, the pauses' ends.
  setInterval(() => {
    const model = app.models.get(app.route.table);
    if (app.route.view !== "table" || !model) return;
    if (model.info?.options?.turn_timer_s || model.info?.seats?.some((s) => s?.grace_until)
        || model.gathered || model.dealAt || model.timedOut) {
      app.render();
    }
  }, 1000);
}

// ------------------------------------------------------------------ seats

const clock = (ms) => {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
};

function seatBox(app, model, seat) {
  const info = model.seatInfo(seat) ?? { kind: "empty" };
  const v = model.view;
  const waiting = model.status === "waiting";
  const acting = v && v.to_act === seat && ACTING.has(v.phase) && model.status === "playing";
  const me = model.seat === seat;
  const name = info.kind === "empty" ? t("seat.empty")
    : me ? safeName(info.name, t("you")) : nameOf(model, seat);
  const tags = [teamName(teamOf(seat))];
  if (model.seat !== null && !me) tags.push(relation(model, seat));
  if (v && v.dealer === seat && model.status === "playing") tags.push(t("seat.dealer"));
  const state = [];
  let stateWord = t("seat.state.empty");
  if (info.kind === "bot") {
    state.push(h("span", { class: "bot-mark" }, t("seat.bot_mark")), " ",
      t(`level.${safeName(info.level, "normal")}`, {}));
    stateWord = t("seat.state.bot");
  } else if (info.kind === "human") {
    const live = me ? online(app) : info.connected;
    stateWord = live ? t("seat.state.connected") : me ? t("seat.state.reconnecting")
      : t("seat.state.away");
    // A client that said in its hello that it is a program (protocol 1.5).
    if (info.bot) state.push(h("span", { class: "bot-mark" }, t("seat.bot_mark")), " ",
      t("seat.program"), " · ");
    state.push(live ? h("span", { class: "online" }, `● ${stateWord}`)
      : h("span", { class: "offline" }, `○ ${stateWord}`));
    if (info.level) state.push(h("span", { class: "bot" }, " · ", t("seat.bot_plays")));
    if (!me && typeof info.grace_until === "number" && model.status === "playing") {
      const left = info.grace_until * 1000 - Date.now();
      state.push(h("div", { class: "grace" }, t("seat.grace", { time: clock(left) })));
    }
  }
  const stats = v && !waiting ? `${t("seat.tricks", { n: v.trick_counts[seat] })}`
    + ` · ${t("seat.cards", { n: v.hand_sizes[seat] })}` : "";
  const label = [t("seat.label", { seat }), me ? t("you") : name, ...tags, stats, stateWord,
    acting ? t(`acting.${v.phase}`) : ""].filter(Boolean).join(", ");
  const controls = [];
  const seated = model.seat !== null;
  const code = app.conn.codes[model.table] ?? null;
  if (waiting) {
    if (info.kind === "empty" && !seated) {
      controls.push(h("button", { type: "button", class: "small primary", dataset: { key: `sit-${seat}` },
        onclick: () => app.act("join", { table: model.table, seat, code }) }, t("seat.sit")));
    }
    if (info.kind === "empty" && seated) {
      const level = model.info?.options?.bot_level ?? "normal";
      controls.push(h("button", { type: "button", class: "small", dataset: { key: `bot-${seat}` },
        "aria-label": t("seat.add_bot.label", { seat }),
        onclick: () => app.act("add_bot", { table: model.table, seat, level }) }, t("seat.add_bot")));
    }
    if (info.kind === "bot" && seated) {
      controls.push(h("button", { type: "button", class: "small", dataset: { key: `unbot-${seat}` },
        "aria-label": t("seat.remove_bot.label", { seat }),
        onclick: () => app.act("remove_bot", { table: model.table, seat }) }, t("seat.remove_bot")));
    }
  } else if (!seated && (info.kind === "bot" || info.kind === "empty")
      && (model.status === "playing" || model.status === "finished")) {
    // Protocol 1.5: a friend who comes late takes a bot's seat, mid-match or for the rematch.
    controls.push(h("button", { type: "button", class: "small primary", dataset: { key: `take-${seat}` },
      onclick: () => app.act("join", { table: model.table, seat, code }) }, t("seat.take")));
  }
  if (seated && !me && info.kind === "human" && typeof info.grace_until === "number"
      && model.status === "playing") {
    const votes = (info.bot_votes ?? []).filter((s) => Number.isInteger(s));
    const mine = votes.includes(model.seat);
    if (votes.length) state.push(h("div", { class: "votes" }, t("seat.votes", { n: votes.length })));
    if (!mine) {
      controls.push(h("button", { type: "button", class: "small", dataset: { key: `letbot-${seat}` },
        onclick: () => app.act("let_bot_play", { table: model.table, seat }) }, t("seat.let_bot")));
    }
  }
  return h("div", {
    class: ["seat", `team-${teamOf(seat)}`, me && "me", acting && "to-act", info.kind],
    role: "group", "aria-label": label, dataset: { seat },
  },
  h("div", { class: "seat-name" }, name, me ? h("span", { class: "you" }, ` (${t("you")})`) : null),
  h("div", { class: "seat-tags" }, tags.join(" · ")),
  stats ? h("div", { class: "seat-stats" }, stats) : null,
  state.length ? h("div", { class: "seat-state" }, state) : null,
  acting ? h("div", { class: "act-badge" }, `▶ ${me ? t("turn.badge.you") : t(`acting.${v.phase}`)}`) : null,
  controls.length ? h("div", { class: "row" }, controls) : null);
}

// ------------------------------------------------------------------ parts

// Each part is rebuilt only when what it shows changed: a card played by someone else
// redraws the trick and the seats, not the hand or the panels (issue 13: a card shows on
// the other pages as fast as in the terminal client).
const shown = new WeakMap();

/** True when `node` already shows `parts` (then it is left alone, focus and all). */
function unchanged(node, ...parts) {
  const key = JSON.stringify(parts);
  if (shown.get(node) === key) return true;
  shown.set(node, key);
  return false;
}

function optionWords(o, v, status) {
  const parts = [];
  if (v && status !== "waiting") {
    parts.push(o.target_points ? t("meta.deal.target", { n: v.deal_number, target: o.target_points })
      : t("meta.deal.of", { n: v.deal_number, deals: o.deals ?? 5 }));
  } else {
    parts.push(o.target_points ? t("meta.target", { target: o.target_points })
      : t("meta.deals", { n: o.deals ?? 5 }));
  }
  if (o.chanter) parts.push(t("meta.chanter"));
  if (o.partner_draw) parts.push(t("meta.partner_draw"));
  parts.push(t(`meta.signals.${["private", "risky", "off"].includes(o.signals) ? o.signals : "private"}`));
  if (o.turn_timer_s) parts.push(t("meta.timer", { n: o.turn_timer_s }));
  if (o.hints) parts.push(t("meta.hints"));
  return parts;
}

function renderHead(app, model) {
  const info = model.info;
  const name = safeName(info?.name, t("table.untitled", { id: model.table.slice(0, 8) }));
  $("table-title").textContent = name;
  const v = model.view;
  // The table's options (TableInfo) first: a snapshot's view.options carries the engine's
  // options only (the server's own, such as the turn timer, show their defaults there).
  const o = { ...(v?.options ?? {}), ...(info?.options ?? {}) };
  const parts = [v?.phase === "match_over" ? t("status.match_over")
    : t(`status.${["waiting", "playing", "finished", "abandoned"].includes(model.status) ? model.status : "waiting"}`)];
  // A rematch is the table's next match (TableInfo.match, protocol 1.3).
  const match = Math.max(info?.match ?? 0, model.match);
  if (match > 1) parts.push(t("meta.match", { n: match }));
  parts.push(...optionWords(o, v, model.status));
  if (info?.private) {
    const code = app.conn.codes[model.table];
    parts.push(code ? t("meta.private.code", { code: safeName(code) }) : t("meta.private"));
  }
  if (info?.spectators) parts.push(t("meta.watching", { n: info.spectators }));
  if (model.seat === null) parts.push(t("meta.you_watch"));
  $("table-meta").textContent = parts.join(" · ");
  const leave = $("leave");
  if (leave.dataset.confirm !== "1") {
    leave.textContent = model.seat === null ? t("leave.watching") : t("leave");
  }
  // The share box shows this table's link only (issue 31, item 3).
  const link = $("share-link");
  if (link.dataset.table !== model.table) {
    link.hidden = true;
    link.value = "";
  }
}

/** R8a: what the latest fair-deals check found, in one calm line (client_cli's fair_note);
 *  a failed check is a warning. */
function renderFairNote(model) {
  const node = $("fair-note");
  const note = model.fairNote;
  node.hidden = !note;
  node.textContent = note ? note.text : "";
  node.dataset.ok = note ? String(Boolean(note.ok)) : "";
  node.dataset.of = note ? note.of : "";
}

function renderScore(model) {
  const v = model.view;
  const node = $("score");
  if (!v || model.status === "waiting") {
    fill(node);
    return;
  }
  const team = (tm) => {
    const seats = tm === 0 ? [0, 2] : [1, 3];
    return h("span", { class: ["team", `team-${tm}`] },
      h("strong", {}, teamName(tm)), ` (${seats.map((s) => nameOf(model, s)).join(" & ")}): `,
      h("strong", { class: "points" }, String(v.points[tm])));
  };
  fill(node, team(0), " · ", team(1));
}

function renderTurn(app, model) {
  const v = model.view;
  const node = $("turn");
  let text = "";
  let mine = false;
  if (!online(app) && model.status === "playing") {
    // An outage: nothing is anyone's turn to take until the page is back (item 9).
    text = t("turn.offline");
  } else if (model.status === "waiting") {
    const seated = (model.info?.seats ?? []).filter((s) => s?.kind !== "empty").length;
    text = t("turn.waiting", { n: seated });
  } else if (model.status === "abandoned") {
    text = t("turn.closed");
  } else if (v && v.phase === "match_over") {
    text = model.matchOver ? matchResultText(model.matchOver.result, model.matchOver.points, model.seat)
      : t("play.over");
  } else if (v && v.to_act !== null && v.to_act !== undefined && ACTING.has(v.phase)) {
    mine = v.to_act === model.seat;
    text = mine ? `▶ ${t(`turn.you.${v.phase}`)}` : t(`turn.other.${v.phase}`, { name: nameOf(model, v.to_act) });
    const timer = model.info?.options?.turn_timer_s;
    if (timer && model.turnAt) {
      const left = Math.max(0, Math.ceil(timer - (performance.now() - model.turnAt) / 1000));
      text += ` ${t("turn.left", { n: left })}`;
    }
    if (mine && prefs.confirm && app.armed && v.phase === "play") {
      text += ` ${t("turn.confirm", { name: cardName(app.armed) })}`;
    }
  } else if (v) {
    text = t("turn.scoring");
  }
  node.textContent = text;
  node.classList.toggle("mine", mine);
  document.body.classList.toggle("my-turn", mine);
  if (mine && model.turnAlerted !== model.turnAt) {
    model.turnAlerted = model.turnAt;
    turnAlert(t("notify.turn", { table: safeName(model.info?.name, "Aluette") }));
  }
  return mine;
}

function feltCards(model, base, trick, label) {
  return trick.map(([seat, card]) => {
    const slot = SLOTS[(seat - base + 4) % 4];
    return h("div", { class: ["played", slot, label && seat === label.winner && "winner"], dataset: { seat } },
      cardFace(card, { extra: { "aria-label": t("trick.card", { name: nameOf(model, seat), card: cardLabel(card) }) } }));
  });
}

function renderFelt(app, model) {
  const base = model.seat ?? 0;
  const v = model.view;
  const table = [model.uid, model.info, model.seat, model.status, online(app)];
  SLOTS.forEach((slot, i) => {
    const seat = (base + i) % 4;
    const node = $(`seat-${slot}`);
    const info = model.seatInfo(seat);
    const grace = info?.grace_until ? Math.ceil((info.grace_until * 1000 - Date.now()) / 1000) : null;
    if (unchanged(node, table, seat, v?.to_act, v?.phase, v?.dealer, v?.trick_counts?.[seat],
      v?.hand_sizes?.[seat], grace)) return;
    fill(node, seatBox(app, model, seat));
  });
  const trick = $("trick");
  // A gathered trick stays on the felt for a moment (unless the next card is already down).
  const gathered = model.gathered && v && !v.trick.length
    && performance.now() - model.gathered.at < TRICK_PAUSE_MS ? model.gathered : null;
  if (model.gathered && !gathered) model.gathered = null;
  if (unchanged(trick, table, v?.trick, v?.tricks?.length, v?.leader, v?.phase, Boolean(gathered))) return;
  if (!v || model.status === "waiting") {
    const creator = model.info?.creator;
    const canStart = model.seat !== null && (creator === model.seat || creator === null
      || creator === undefined);
    fill(trick, h("div", { class: "trick-info" },
      model.status === "waiting" ? t("trick.waiting") : ""),
    canStart && model.status === "waiting" ? h("button", { type: "button", class: "primary",
      dataset: { key: "start" }, onclick: () => app.act("start", { table: model.table }) },
    t("trick.start")) : null);
    return;
  }
  if (gathered) {
    const who = gathered.winner === null ? t("trick.spoiled.short")
      : t("trick.won_by", { name: nameOf(model, gathered.winner) });
    const cards = gathered.cards.map((card, i) => [(gathered.leader + i) % 4, card]);
    fill(trick, h("div", { class: "trick-info gathered" }, who),
      feltCards(model, base, cards, gathered));
    return;
  }
  let info = "";
  if (v.phase === "play" && v.tricks.length < 9) {
    info = t("trick.info", { n: v.tricks.length + 1, name: nameOf(model, v.leader) });
  } else if (v.phase === "chanter_vote" || v.phase === "chanter_discard") {
    info = t("trick.chanter");
  }
  fill(trick, h("div", { class: "trick-info" }, info), feltCards(model, base, v.trick, null));
}

function renderHand(app, model) {
  const section = $("hand-section");
  const v = model.view;
  const visible = Boolean(v && model.seat !== null && model.status === "playing"
    && v.phase !== "match_over");
  section.hidden = !visible;
  if (!visible) {
    fill($("hand"));
    return;
  }
  const hand = sortByStrength(v.hand);
  const choosing = discarding(model);
  const myTurn = model.myTurn && v.phase === "play";
  if (app.armed && (!myTurn || !hand.includes(app.armed))) app.armed = null;
  const armed = app.armed;
  if (unchanged($("hand"), model.uid, hand, choosing, [...app.discard], myTurn, armed,
    prefs.confirm)) return;
  $("hand-title").textContent = choosing ? t("hand.discard", { n: app.discard.size })
    : t("hand.title", { n: hand.length });
  fill($("hand"), hand.map((card, i) => cardFace(card, {
    tag: "button", number: i + 1,
    extra: {
      type: "button",
      class: ["card", `suit-${card[1]}`, myTurn && "playable", choosing && app.discard.has(card) && "chosen",
        armed === card && "armed"],
      "aria-label": `${i + 1}: ${cardLabel(card)}${choosing ? ""
        : myTurn ? `, ${armed === card ? t("hand.play_it.confirm") : t("hand.play_it")}` : ""}`,
      "aria-pressed": choosing ? String(app.discard.has(card)) : null,
      dataset: { key: `card-${card}` },
      onclick: () => onCard(app, model, card),
    },
  })));
  const confirmRow = $("confirm-row");
  confirmRow.hidden = !(armed && myTurn);
  if (armed && myTurn) {
    fill(confirmRow, h("button", { type: "button", class: "primary", dataset: { key: "confirm-play" },
      onclick: () => { play(app, model, armed); app.render(); } }, t("hand.confirm", { name: cardName(armed) })),
    h("button", { type: "button", dataset: { key: "confirm-cancel" },
      onclick: () => { app.armed = null; app.render(); } }, t("hand.cancel")));
  } else {
    fill(confirmRow);
  }
  $("play-input").disabled = false;
}

function renderActions(app, model) {
  const v = model.view;
  const node = $("actions");
  if (unchanged(node, model.uid, model.info, model.seat, model.status, v?.phase,
    v?.chanter_votes, v?.to_act, v?.discarded, [...app.discard])) return;
  const parts = [];
  if (v && v.phase === "chanter_vote" && model.status === "playing") {
    const votes = v.chanter_votes.map((vote, s) => `${nameOf(model, s)}: `
      + (vote === null ? "—" : vote ? t("yes") : t("no")));
    parts.push(h("p", {}, t("chanter.explain")));
    parts.push(h("p", { class: "muted" }, votes.join(" · ")));
    if (v.to_act === model.seat) {
      parts.push(h("div", { class: "row" },
        h("button", { type: "button", class: "primary", dataset: { key: "vote-yes" },
          onclick: () => app.act("chanter_vote", { table: model.table, vote: true }) }, t("chanter.yes")),
        h("button", { type: "button", dataset: { key: "vote-no" },
          onclick: () => app.act("chanter_vote", { table: model.table, vote: false }) }, t("no"))));
    }
  } else if (v && v.phase === "chanter_discard" && model.status === "playing") {
    if (discarding(model)) {
      parts.push(h("p", {}, t("chanter.discard.explain")));
      parts.push(h("button", { type: "button", class: "primary", dataset: { key: "discard" },
        disabled: app.discard.size !== 6, onclick: () => discard(app, model) },
      t("chanter.discard.button", { n: app.discard.size })));
    } else {
      parts.push(h("p", { class: "muted" }, t("chanter.discard.other", { name: nameOf(model, v.to_act) })));
    }
  }
  if (v && v.discarded?.length && model.seat !== null) {
    parts.push(h("p", { class: "muted" }, t("chanter.discarded", {
      cards: v.discarded.map((c) => `${cardName(c)} (${c})`).join(", ") })));
  }
  fill(node, parts);
}

function renderLastTrick(model) {
  const v = model.view;
  const node = $("last-trick");
  if (unchanged(node, model.uid, model.info, model.seat, model.status,
    v?.tricks?.[v.tricks.length - 1], v?.tricks?.length)) return;
  if (!v || !v.tricks.length || model.status === "waiting") {
    fill(node);
    return;
  }
  const last = v.tricks[v.tricks.length - 1];
  const n = v.tricks.length;
  const who = last.winner === null || last.winner === undefined ? t("trick.spoiled")
    : t("trick.won_by", { name: nameOf(model, last.winner) });
  fill(node, h("h2", {}, t("trick.last", { n, who })),
    h("div", { class: "mini-trick" }, last.cards.map((card, i) => {
      const seat = (last.leader + i) % 4;
      return h("div", { class: ["mini", seat === last.winner && "winner"] },
        h("span", { class: "who" }, nameOf(model, seat)),
        cardFace(card, { small: true, extra: { "aria-label": t("trick.card", { name: nameOf(model, seat), card: cardLabel(card) }) } }));
    })));
}

function renderSignals(app, model) {
  const node = $("signals");
  const v = model.view;
  if (unchanged(node, model.uid, model.info, model.seat, model.status, v?.phase,
    v?.signals, v?.signals_sent)) return;
  const mode = model.info?.options?.signals ?? v?.options?.signals ?? "private";
  // Signals we received (R16: from our partner, or noticed from an opponent when risky),
  // always in sight; spectators never receive any.
  const got = v && model.seat !== null ? v.signals ?? [] : [];
  fill($("signals-received"), got.length ? [h("strong", {}, t("signals.received")),
    h("ul", {}, got.map((s) => h("li", {},
      `${nameOf(model, s.from_seat)} (${relation(model, s.from_seat)}): `
      + `“${signalText(s.signal, s.n)}”`)))] : []);
  const active = v && model.seat !== null && model.status === "playing" && mode !== "off"
    && v.phase !== "match_over";
  node.hidden = !active;
  if (!active) {
    fill(node);
    return;
  }
  const send = (signal, n = null) => app.act("signal", { table: model.table, signal, n });
  const buttons = SIGNALS.filter((id) => id !== "aces").map((id) => h("button", {
    type: "button", class: "small", dataset: { key: `signal-${id}` }, onclick: () => send(id) },
  signalText(id)));
  const aces = [1, 2, 3, 4].map((n) => h("button", { type: "button", class: "small",
    dataset: { key: `signal-aces-${n}` }, onclick: () => send("aces", n) }, signalText("aces", n)));
  const sent = (v.signals_sent ?? []).map((s) => signalText(s.signal, s.n));
  fill(node,
    h("summary", {}, t("signals.title")),
    h("p", { class: "muted" }, mode === "risky" ? t("signals.risky") : t("signals.private")),
    h("div", { class: "signal-buttons" }, buttons, aces),
    sent.length ? h("p", { class: "muted" }, t("signals.sent", { list: sent.join("; ") }))
      : h("p", { class: "muted" }, t("signals.none")));
}

function renderDraw(model) {
  const node = $("draw");
  if (unchanged(node, model.uid, model.info, model.seat, model.lastDraw, model.view?.draw,
    model.view?.deal_number, model.view?.tricks?.length)) return;
  const draw = model.lastDraw ?? (model.view?.draw?.length ? { cards: model.view.draw, seating: null } : null);
  const v = model.view;
  const show = Boolean(draw && v && v.deal_number <= 1 && v.tricks.length === 0);
  node.hidden = !show;
  if (!show) {
    fill(node);
    return;
  }
  const items = draw.cards.map(([seat, card]) => h("li", {},
    t("draw.item", { seat, name: cardName(card), card })));
  // R7: the four top cards decide; each went to one seat (numbered as before the draw).
  const tops = ["3o", "3c", "2o", "2c"].map((top) => {
    const at = draw.cards.findIndex(([, card]) => card === top);
    return at < 0 ? null : h("li", {}, t("draw.top", { name: cardName(top), seat: draw.cards[at][0], n: at + 1 }));
  });
  const lines = [h("h2", {}, t("draw.title")),
    h("p", { class: "muted" }, t("draw.explain")),
    h("ul", {}, tops),
    h("details", {}, h("summary", {}, t("draw.all", { n: draw.cards.length })),
      h("ol", { class: "draw-list" }, items))];
  if (model.seat !== null) {
    lines.push(h("p", {}, t("draw.you", { seat: model.seat, name: nameOf(model, partnerOf(model.seat)) })));
  }
  fill(node, lines);
}

/** The end of a deal: shown over the table until the player moves on or a few seconds
 *  pass (issue 31, item 5), then as a panel below. */
function renderDealResult(app, model) {
  const node = $("deal-result");
  const deal = model.lastDeal;
  const v = model.view;
  const fresh = Boolean(deal && model.dealAt && performance.now() - model.dealAt < DEAL_PAUSE_MS
    && model.dealSeen !== deal.deal_number);
  if (!fresh && model.dealAt) model.dealAt = 0;
  if (unchanged(node, model.uid, model.info, model.seat, deal, model.view === null, fresh)) return;
  node.hidden = !deal || !v;
  node.classList.toggle("overlay", fresh);
  if (!deal || !v) {
    fill(node);
    return;
  }
  const sentences = explainDeal(deal, (s) => nameOf(model, s), model.seat);
  fill(node, h("h2", {}, t("deal.title", { n: deal.deal_number })),
    h("ul", { class: "explain" }, sentences.map((s) => h("li", {}, s))),
    h("p", { class: "muted" }, t("deal.tricks", {
      list: [0, 1, 2, 3].map((s) => `${nameOf(model, s)} ${deal.trick_counts[s]}`).join(", ") })),
    fresh ? h("button", { type: "button", class: "primary", dataset: { key: "deal-continue" },
      onclick: () => { model.dealSeen = deal.deal_number; model.dealAt = 0; app.render(); } },
    t("deal.continue")) : null);
}

function renderMatchResult(app, model) {
  const node = $("match-result");
  const v = model.view;
  if (unchanged(node, model.uid, model.info, model.seat, model.status, model.matchOver,
    v?.phase, v?.deals, v?.result, v?.points)) return;
  const over = Boolean(v && (v.phase === "match_over" || model.status === "finished"));
  node.hidden = !over;
  if (!over) {
    fill(node);
    return;
  }
  const result = model.matchOver ?? { result: v.result, points: v.points };
  const rows = (v.deals ?? []).map((d, i) => h("tr", {},
    h("td", {}, String(i + 1)),
    h("td", {}, d.winner === null || d.winner === undefined ? t("match.nobody") : nameOf(model, d.winner)),
    h("td", {}, `${d.points[0]}–${d.points[1]}`),
    h("td", {}, d.mordienne ? t("yes") : "")));
  fill(node, h("h2", {}, t("match.title")),
    h("p", { class: "result" }, matchResultText(result.result, result.points, model.seat)),
    h("table", { class: "deals" },
      h("thead", {}, h("tr", {}, h("th", {}, t("match.col.deal")), h("th", {}, t("match.col.winner")),
        h("th", {}, `${teamName(0)}–${teamName(1)}`), h("th", {}, t("match.col.mordienne")))),
      h("tbody", {}, rows)),
    h("button", { type: "button", class: "primary", dataset: { key: "record" },
      onclick: () => downloadRecord(app, model) }, t("match.record")),
    replayPart(app, model),
    rematchPart(app, model));
}

/**
 * PROTOCOL.md, Rematch: any seated player proposes it, the others accept with the same
 * command; it starts once every seated human has agreed (bots always agree). Who agreed
 * comes from rematch_accepted and TableInfo.rematch; the words follow
 * client_cli/render.py's rematch_text. Spectators see who agreed, but get no button.
 */
function rematchPart(app, model) {
  if (model.status !== "finished") return null;
  const agreed = model.rematch;
  // Our own seat is not named: the button is what asks us.
  const waiting = model.rematchWaitingFor.filter((s) => s !== model.seat);
  const names = (seats) => seats.map((s) => nameOf(model, s)).join(", ");
  const lines = [];
  const iAgreed = model.seat !== null && agreed.includes(model.seat);
  const others = agreed.filter((s) => s !== model.seat);
  if (iAgreed) lines.push(t("rematch.you"));
  if (others.length) {
    lines.push(t(iAgreed ? "rematch.others.too" : "rematch.others", { names: names(others), n: others.length }));
  }
  if (agreed.length && waiting.length) lines.push(t("rematch.waiting", { names: names(waiting) }));
  if (!agreed.length) lines.push(model.seat === null ? t("rematch.may") : t("rematch.offer"));
  const button = model.seat !== null && !iAgreed ? h("button", {
    type: "button", class: "primary", dataset: { key: "rematch" },
    onclick: () => app.act("rematch", { table: model.table }),
  }, others.length ? t("rematch.accept") : t("rematch.button")) : null;
  return h("div", { class: "rematch", role: "status", dataset: { key: "rematch-status" } },
    button, h("span", { class: "rematch-text" }, lines.join(" ")));
}

function renderChat(app, model) {
  $("chat-hint").textContent = model.seat === null ? t("chat.hint.spectator") : t("chat.hint.seat");
  $("chat-notice").textContent = app.chatNotice ?? "";
  const log = $("chat-log");
  const last = model.chat[model.chat.length - 1];
  if (unchanged(log, model.uid, model.seat, last?.n, model.chat.length, [...model.muted])) return;
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 24;
  const hidden = model.mutedUnseen;
  const mutedNote = hidden.length ? h("li", { class: ["chat-note", "muted"],
    dataset: { key: "muted-unseen" } }, t("chat.muted_unseen", { n: hidden.length }), " ",
  h("button", { type: "button", class: "small", dataset: { key: "unmute-all" },
    onclick: () => unmuteAll(app, model, hidden) }, t("chat.unmute"))) : null;
  fill(log, [mutedNote, ...model.chat.map((line) => {
    const spectator = line.from_seat === null;
    const silenced = model.muted.has(line.sender);
    const who = line.mine ? t("chat.you") : safeName(line.name);
    const tag = spectator ? ` ${line.mine ? t("chat.tag.mine") : t("chat.tag.spectator")}` : "";
    return h("li", {
      class: ["chat-line", line.mine && "mine", spectator && "spectator", silenced && "silenced"],
      dataset: { from: spectator ? "spectator" : "seat", sender: line.sender },
    },
    h("span", { class: "who" }, who), h("span", { class: "tag" }, tag), ": ",
    h("span", { class: "text" }, line.text),
    !line.mine && line.sender ? h("button", { type: "button", class: "small",
      "aria-label": t(silenced ? "chat.unmute.label" : "chat.mute.label", { name: who }),
      dataset: { key: `mute-${line.n}`, mute: line.sender },
      onclick: () => toggleMute(app, model, line.sender) }, silenced ? t("chat.unmute") : t("chat.mute")) : null);
  })].filter(Boolean));
  if (atBottom) log.scrollTop = log.scrollHeight;
}

async function downloadRecord(app, model) {
  const result = await app.act("get_record", { table: model.table });
  if (!result || typeof result.record !== "object") return;
  const blob = new Blob([JSON.stringify(result.record, null, 2)], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: `aluette-${model.table}.json` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A turn the timer played for someone: said for a few seconds (issue 31, item 5). */
function renderTimedOut(model) {
  const node = $("table-timer");
  const out = model.timedOut && performance.now() - model.timedOut.at < 6000 ? model.timedOut : null;
  if (!out) model.timedOut = null;
  node.textContent = out ? (out.seat === model.seat ? t("timer.played.you")
    : t("timer.played", { name: nameOf(model, out.seat) })) : "";
}

/** Draw the whole table; returns the page title. */
export function renderTable(app, model) {
  renderHead(app, model);
  renderFairNote(model);
  renderScore(model);
  const mine = renderTurn(app, model);
  $("table-notice").textContent = app.notice;
  $("table-status").textContent = app.status;
  renderTimedOut(model);
  renderFelt(app, model);
  renderActions(app, model);
  renderHand(app, model);
  renderLastTrick(model);
  renderSignals(app, model);
  renderDraw(model);
  renderDealResult(app, model);
  renderMatchResult(app, model);
  renderChat(app, model);
  renderExtras(app, model);
  const name = safeName(model.info?.name, t("table.title"));
  return `${mine ? `▶ ${t("title.your_turn")} · ` : ""}${name} · Aluette Online`;
}
