// The table screen: four seats around the felt, the trick by seat, the hand, whose turn it
// is, and the panels for the chanter (R9), signals (R15), the partner draw (R7), the end of
// each deal (R11-R13a) and the match (R14, R17). Only public information is drawn for a
// spectator: the model of a spectator never holds a hand (the server never sends one).

import {
  SIGNALS, TEAM_NAMES, cardLabel, cardName, cleanText, isCard, partnerOf, safeName,
  signalText, sortByStrength, teamOf,
} from "./cards.mjs";
import { CommandFailed } from "./connection.mjs";
import { cardFace, fill, h } from "./dom.mjs";
import { explainDeal, matchResultText } from "./explain.mjs";
import { MAX_CHAT_LEN } from "./model.mjs";

const $ = (id) => document.getElementById(id);
const SLOTS = ["bottom", "left", "top", "right"]; // clockwise from our own seat (R4)
const ACTING = { play: "to play", chanter_vote: "to vote", chanter_discard: "to discard" };

/** The seat's display name: "you", or the cleaned name, or "seat N". */
function nameOf(model, seat) {
  if (model.seat === seat) return "you";
  const info = model.seatInfo(seat);
  if (info?.kind === "bot" && !info.name) return `bot ${seat}`;
  return safeName(info?.name, `seat ${seat}`);
}

function relation(model, seat) {
  if (model.seat === null) return TEAM_NAMES[teamOf(seat)];
  if (seat === model.seat) return "you";
  return seat === partnerOf(model.seat) ? "partner" : "opponent";
}

// ------------------------------------------------------------------ actions

function play(app, model, card) {
  const v = model.view;
  if (!v || model.seat === null) return;
  if (v.phase === "match_over") {
    app.setNotice("The match is over.");
    return;
  }
  if (v.phase !== "play") {
    app.setNotice(v.phase === "chanter_vote" ? "First the chanter vote (R9): no card is played yet."
      : "First the chanter discard (R9): no card is played yet.");
    return;
  }
  if (v.to_act !== model.seat) {
    app.setNotice(v.to_act === null || v.to_act === undefined
      ? "Nobody plays now: the deal is being scored."
      : `It is not your turn: ${nameOf(model, v.to_act)} plays now (R10: play goes clockwise).`);
    return;
  }
  if (!v.hand.includes(card)) {
    app.setNotice(`You do not hold ${cardName(card)} (${card}).`);
    return;
  }
  app.setNotice("");
  app.act("play", { table: model.table, card });
}

function toggleDiscard(app, model, card) {
  if (app.discard.has(card)) app.discard.delete(card);
  else if (app.discard.size < 6) app.discard.add(card);
  else {
    app.setNotice("Six cards are chosen already: unselect one first (R9).");
    return;
  }
  app.setNotice("");
}

function discard(app, model) {
  const cards = [...app.discard];
  if (cards.length !== 6) {
    app.setNotice(`Choose exactly six cards to discard (R9): ${cards.length} chosen.`);
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
        app.setNotice(`There is no card number ${n}: your hand has ${hand.length} cards.`);
        return;
      }
      cards.push(hand[n - 1]);
    } else if (isCard(w)) {
      cards.push(w);
    } else {
      app.setNotice(`“${w.slice(0, 12)}” is not a card: type a code such as 3o (rank 1-9, V, C `
        + "or R, then suit o, c, b or e; R2) or a card's number in your hand.");
      return;
    }
  }
  if (!cards.length) return;
  if (discarding(model)) {
    app.discard = new Set(cards);
    discard(app, model);
  } else if (cards.length > 1) {
    app.setNotice("Play one card at a time.");
  } else {
    play(app, model, cards[0]);
  }
}

// ------------------------------------------------------------------ chat and rematch

/** A chat command's refusal in words; the typed text stays in the box to send again. */
function chatError(err) {
  const code = err instanceof CommandFailed ? err.reply?.code : null;
  if (code === "rate_limited") {
    return "Too many messages at once (5 in a row, then one every 2 seconds): wait a "
      + "moment and send it again; your message is still in the box.";
  }
  if (code === "invalid_field") {
    return `The server refused this message: it must hold 1 to ${MAX_CHAT_LEN} characters `
      + "(spaces and control characters aside). It is still in the box.";
  }
  return null;
}

/** Send the chat box's text: a seat's words reach everyone at the table, a spectator's the
 *  spectators only (the server decides; the line comes back as a chat event, as in
 *  client_cli/app.py). */
async function sendChat(app, model) {
  const input = $("chat-input");
  const typed = input.value;
  const text = cleanText(typed);
  if (!text) {
    app.chatNotice = "Type a message first.";
    app.render();
    return;
  }
  if ([...text].length > MAX_CHAT_LEN) {
    app.chatNotice = `A chat message holds at most ${MAX_CHAT_LEN} characters; this one has `
      + `${[...text].length}. Shorten it and send it again.`;
    app.render();
    return;
  }
  try {
    await app.conn.call("chat", { table: model.table, text });
    // The ok comes before the events it caused, each frame in a task of its own: a line
    // with these words that arrives from now on is ours (model.mjs, mySender).
    model.said(text);
    if (input.value === typed) input.value = ""; // not what was typed since
    app.chatNotice = "";
  } catch (err) {
    app.chatNotice = chatError(err) ?? `${app.describe(err)} Your message is still in the box.`;
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
  app.setNotice(muted ? `You will no longer see ${name}'s chat at this table (Unmute to undo).`
    : `You will see ${name}'s chat again.`);
}

/** Unmute the senders we mute who have no line here (after a reload: protocol 1.4). */
async function unmuteAll(app, model, senders) {
  for (const sender of senders) {
    const ok = await app.act("mute", { table: model.table, sender, muted: false });
    if (ok === null) return;
    model.muted.delete(sender);
  }
  app.chatNotice = "";
  app.setNotice("You will see their chat again.");
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
    link.hidden = false;
    link.select();
    try {
      await navigator.clipboard.writeText(link.value);
      app.setNotice("Link copied: send it to your friends.");
    } catch {
      app.setNotice("Copy the link from the box.");
    }
  });
  const leave = $("leave");
  leave.addEventListener("click", async () => {
    const model = app.models.get(app.route.table);
    if (!model) return;
    const playing = model.status === "playing" && model.seat !== null;
    if (playing && leave.dataset.confirm !== "1") {
      leave.dataset.confirm = "1";
      leave.textContent = "Leave for good? A bot takes your seat";
      return;
    }
    delete leave.dataset.confirm;
    leave.textContent = "Leave";
    const ok = await app.act("leave", { table: model.table });
    if (ok) {
      app.models.delete(model.table);
      app.conn.forget(model.table);
      app.navigate("/");
    }
  });
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
    }
  });
  // The signals panel starts open where there is room for it (it stays as the user left it).
  $("signals").open = matchMedia("(min-width: 700px)").matches;
  setInterval(() => {
    const model = app.models.get(app.route.table);
    if (app.route.view === "table" && model?.info?.options?.turn_timer_s && model.view
      && model.view.to_act !== null) {
      renderTurn(app, model);
    }
  }, 1000);
}

// ------------------------------------------------------------------ seats

function seatBox(app, model, seat) {
  const info = model.seatInfo(seat) ?? { kind: "empty" };
  const v = model.view;
  const waiting = model.status === "waiting";
  const acting = v && v.to_act === seat && ACTING[v.phase] && model.status === "playing";
  const me = model.seat === seat;
  const name = info.kind === "empty" ? "Empty seat"
    : me ? safeName(info.name, "you") : nameOf(model, seat);
  const tags = [TEAM_NAMES[teamOf(seat)]];
  if (model.seat !== null && !me) tags.push(relation(model, seat));
  if (v && v.dealer === seat && model.status === "playing") tags.push("dealer");
  const state = [];
  if (info.kind === "bot") {
    state.push(h("span", { class: "bot-mark" }, "BOT"), ` ${safeName(info.level, "normal")} bot`);
  }
  else if (info.kind === "human") {
    if (info.bot) state.push(h("span", { class: "bot-mark" }, "BOT"), " a program · "); // said so in its hello (1.5)
    state.push(info.connected ? h("span", { class: "online" }, "● connected")
      : h("span", { class: "offline" }, "○ disconnected"));
    if (info.level) state.push(h("span", { class: "bot" }, ` · a ${safeName(info.level)} bot plays for them`));
  }
  const stats = v && !waiting ? `${v.trick_counts[seat]} trick${v.trick_counts[seat] === 1 ? "" : "s"}`
    + ` · ${v.hand_sizes[seat]} card${v.hand_sizes[seat] === 1 ? "" : "s"}` : "";
  const label = [`Seat ${seat}`, me ? "you" : name, ...tags, stats,
    info.kind === "bot" ? "bot" : info.kind === "human" ? (info.connected ? "connected" : "disconnected") : "empty",
    acting ? ACTING[v.phase] : ""].filter(Boolean).join(", ");
  const controls = [];
  if (waiting) {
    const seated = model.seat !== null;
    if (info.kind === "empty" && !seated) {
      controls.push(h("button", { type: "button", class: "small primary", dataset: { key: `sit-${seat}` },
        onclick: () => app.act("join", { table: model.table, seat, code: app.conn.codes[model.table] ?? null }),
      }, "Sit here"));
    }
    if (info.kind === "empty" && seated) {
      const level = model.info?.options?.bot_level ?? "normal";
      controls.push(h("button", { type: "button", class: "small", dataset: { key: `bot-${seat}` },
        "aria-label": `Add a bot in seat ${seat}`,
        onclick: () => app.act("add_bot", { table: model.table, seat, level }) }, "Add bot"));
    }
    if (info.kind === "bot" && seated) {
      controls.push(h("button", { type: "button", class: "small", dataset: { key: `unbot-${seat}` },
        "aria-label": `Remove the bot from seat ${seat}`,
        onclick: () => app.act("remove_bot", { table: model.table, seat }) }, "Remove bot"));
    }
  }
  return h("div", {
    class: ["seat", `team-${teamOf(seat)}`, me && "me", acting && "to-act", info.kind],
    role: "group", "aria-label": label, dataset: { seat },
  },
  h("div", { class: "seat-name" }, name, me ? h("span", { class: "you" }, " (you)") : null),
  h("div", { class: "seat-tags" }, tags.join(" · ")),
  stats ? h("div", { class: "seat-stats" }, stats) : null,
  state.length ? h("div", { class: "seat-state" }, state) : null,
  acting ? h("div", { class: "act-badge" }, `▶ ${me ? "your turn" : ACTING[v.phase]}`) : null,
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

function renderHead(app, model) {
  const info = model.info;
  const name = safeName(info?.name, `Table ${model.table.slice(0, 8)}`);
  $("table-title").textContent = name;
  const v = model.view;
  // The table's options (TableInfo) first: a snapshot's view.options carries the engine's
  // options only (the server's own, such as the turn timer, show their defaults there).
  const o = { ...(v?.options ?? {}), ...(info?.options ?? {}) };
  const parts = [];
  parts.push(v?.phase === "match_over" ? "match over" : model.status);
  // A rematch is the table's next match (TableInfo.match, protocol 1.3).
  const match = Math.max(info?.match ?? 0, model.match);
  if (match > 1) parts.push(`match ${match}`);
  if (v && model.status !== "waiting") {
    parts.push(o.target_points ? `deal ${v.deal_number} (first to ${o.target_points} points)`
      : `deal ${v.deal_number} of ${o.deals ?? 5}`);
  } else {
    const deals = o.deals ?? 5;
    parts.push(o.target_points ? `first to ${o.target_points} points`
      : `${deals} deal${deals === 1 ? "" : "s"}`);
  }
  if (o.chanter) parts.push("chanter");
  if (o.partner_draw) parts.push("partner draw");
  parts.push(`signals ${safeName(o.signals, "private")}`);
  if (o.turn_timer_s) parts.push(`${o.turn_timer_s} s per turn`);
  if (info?.private) {
    const code = app.conn.codes[model.table];
    parts.push(code ? `private, join code ${safeName(code)}` : "private");
  }
  if (info?.spectators) parts.push(`${info.spectators} watching`);
  if (model.seat === null) parts.push("you are watching: you see only what is public");
  $("table-meta").textContent = parts.join(" · ");
  $("leave").textContent = $("leave").dataset.confirm === "1" ? $("leave").textContent
    : (model.seat === null ? "Stop watching" : "Leave");
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
  const team = (t) => {
    const seats = t === 0 ? [0, 2] : [1, 3];
    return h("span", { class: ["team", `team-${t}`] },
      h("strong", {}, TEAM_NAMES[t]), ` (${seats.map((s) => nameOf(model, s)).join(" & ")}): `,
      h("strong", { class: "points" }, String(v.points[t])));
  };
  fill(node, team(0), " · ", team(1));
}

function renderTurn(app, model) {
  const v = model.view;
  const node = $("turn");
  let text = "";
  let mine = false;
  if (model.status === "waiting") {
    const seated = (model.info?.seats ?? []).filter((s) => s?.kind !== "empty").length;
    text = `Waiting for players: ${seated} of 4 seats taken.`;
  } else if (model.status === "abandoned") {
    text = "This table was closed.";
  } else if (v && v.phase === "match_over") {
    text = model.matchOver ? matchResultText(model.matchOver.result, model.matchOver.points, model.seat)
      : "The match is over.";
  } else if (v && v.to_act !== null && v.to_act !== undefined && ACTING[v.phase]) {
    mine = v.to_act === model.seat;
    const what = { play: "play a card", chanter_vote: "vote: chanter or not (R9)",
      chanter_discard: "discard six cards (R9)" }[v.phase];
    text = mine ? `▶ Your turn: ${what}.` : `${nameOf(model, v.to_act)} to ${what.replace(/^vote:.*/, "vote on the chanter")}…`;
    const timer = model.info?.options?.turn_timer_s;
    if (timer && model.turnAt) {
      const left = Math.max(0, Math.ceil(timer - (performance.now() - model.turnAt) / 1000));
      text += ` ${left} s left.`;
    }
  } else if (v) {
    text = "The deal is being scored…";
  }
  node.textContent = text;
  node.classList.toggle("mine", mine);
  document.body.classList.toggle("my-turn", mine);
  return mine;
}

function renderFelt(app, model) {
  const base = model.seat ?? 0;
  const v = model.view;
  const table = [model.uid, model.info, model.seat, model.status];
  SLOTS.forEach((slot, i) => {
    const seat = (base + i) % 4;
    const node = $(`seat-${slot}`);
    if (unchanged(node, table, seat, v?.to_act, v?.phase, v?.dealer, v?.trick_counts?.[seat],
      v?.hand_sizes?.[seat])) return;
    fill(node, seatBox(app, model, seat));
  });
  const trick = $("trick");
  if (unchanged(trick, table, v?.trick, v?.tricks?.length, v?.leader, v?.phase)) return;
  if (!v || model.status === "waiting") {
    const creator = model.info?.creator;
    const canStart = model.seat !== null && (creator === model.seat || creator === null
      || creator === undefined);
    fill(trick, h("div", { class: "trick-info" },
      model.status === "waiting" ? "The match starts when the table is started; "
        + "empty seats are then filled with bots." : ""),
    canStart && model.status === "waiting" ? h("button", { type: "button", class: "primary",
      dataset: { key: "start" }, onclick: () => app.act("start", { table: model.table }) },
    "Start the match") : null);
    return;
  }
  const cards = v.trick.map(([seat, card]) => {
    const slot = SLOTS[(seat - base + 4) % 4];
    return h("div", { class: ["played", slot], dataset: { seat } },
      cardFace(card, { extra: { "aria-label": `${nameOf(model, seat)}: ${cardLabel(card)}` } }));
  });
  let info;
  if (v.phase === "play" && v.tricks.length < 9) {
    info = `Trick ${v.tricks.length + 1} of 9 · led by ${nameOf(model, v.leader)}`;
  } else if (v.phase === "chanter_vote" || v.phase === "chanter_discard") {
    info = "Chanter (R9)";
  } else {
    info = "";
  }
  fill(trick, h("div", { class: "trick-info" }, info), cards);
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
  if (unchanged($("hand"), model.uid, hand, choosing, [...app.discard], myTurn)) return;
  $("hand-title").textContent = choosing
    ? `Your hand: choose six cards to discard (${app.discard.size} of 6)`
    : `Your hand (${hand.length} cards, strongest first)`;
  fill($("hand"), hand.map((card, i) => cardFace(card, {
    tag: "button", number: i + 1,
    extra: {
      type: "button",
      class: ["card", `suit-${card[1]}`, myTurn && "playable", choosing && app.discard.has(card) && "chosen"],
      "aria-label": `${i + 1}: ${cardLabel(card)}${choosing ? "" : myTurn ? ", play it" : ""}`,
      "aria-pressed": choosing ? String(app.discard.has(card)) : null,
      dataset: { key: `card-${card}` },
      onclick: () => onCard(app, model, card),
    },
  })));
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
      + (vote === null ? "—" : vote ? "yes" : "no"));
    parts.push(h("p", {}, "Chanter vote (R9): only if all four say yes, the twelve talon cards "
      + "are dealt six each to the seat left of the dealer and to the dealer, who each discard six."));
    parts.push(h("p", { class: "muted" }, votes.join(" · ")));
    if (v.to_act === model.seat) {
      parts.push(h("div", { class: "row" },
        h("button", { type: "button", class: "primary", dataset: { key: "vote-yes" },
          onclick: () => app.act("chanter_vote", { table: model.table, vote: true }) }, "Yes, chanter"),
        h("button", { type: "button", dataset: { key: "vote-no" },
          onclick: () => app.act("chanter_vote", { table: model.table, vote: false }) }, "No")));
    }
  } else if (v && v.phase === "chanter_discard" && model.status === "playing") {
    if (discarding(model)) {
      parts.push(h("p", {}, "You received six talon cards. Choose the six cards to discard "
        + "(face down, nobody sees them), then confirm."));
      parts.push(h("button", { type: "button", class: "primary", dataset: { key: "discard" },
        disabled: app.discard.size !== 6, onclick: () => discard(app, model) },
      `Discard these ${app.discard.size === 6 ? "six" : `(${app.discard.size} of 6)`}`));
    } else {
      parts.push(h("p", { class: "muted" }, `${nameOf(model, v.to_act)} is choosing six cards to discard (R9).`));
    }
  }
  if (v && v.discarded?.length && model.seat !== null) {
    parts.push(h("p", { class: "muted" }, "You discarded: ",
      v.discarded.map((c) => `${cardName(c)} (${c})`).join(", ")));
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
  const who = last.winner === null || last.winner === undefined
    ? "spoiled: two or more top cards tied, nobody won it (R11)"
    : `won by ${nameOf(model, last.winner)}`;
  fill(node, h("h2", {}, `Last trick (${n} of 9): ${who}`),
    h("div", { class: "mini-trick" }, last.cards.map((card, i) => {
      const seat = (last.leader + i) % 4;
      return h("div", { class: ["mini", seat === last.winner && "winner"] },
        h("span", { class: "who" }, nameOf(model, seat)),
        cardFace(card, { small: true, extra: { "aria-label": `${nameOf(model, seat)}: ${cardLabel(card)}` } }));
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
  fill($("signals-received"), got.length ? [h("strong", {}, "Signals received this deal:"),
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
  const buttons = SIGNALS.filter(([id]) => id !== "aces").map(([id, words]) => h("button", {
    type: "button", class: "small", dataset: { key: `signal-${id}` }, onclick: () => send(id) }, words));
  const aces = [1, 2, 3, 4].map((n) => h("button", { type: "button", class: "small",
    dataset: { key: `signal-aces-${n}` }, onclick: () => send("aces", n) },
  `I hold ${n} ace${n === 1 ? "" : "s"}`));
  const sent = (v.signals_sent ?? []).map((s) => signalText(s.signal, s.n));
  fill(node,
    h("summary", {}, "Signal your partner (R15)"),
    h("p", { class: "muted" }, mode === "risky"
      ? "Risky table: each opponent may also notice a signal (R16). Signals are not checked: they are gestures."
      : "Only your partner receives them (R16). Signals are not checked: they are gestures."),
    h("div", { class: "signal-buttons" }, buttons, aces),
    sent.length ? h("p", { class: "muted" }, `You signalled: ${sent.join("; ")}.`)
      : h("p", { class: "muted" }, "You have sent no signal this deal."));
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
  const items = draw.cards.map(([seat, card]) => h("li", {}, `seat ${seat}: `,
    `${cardName(card)} (${card})`));
  // R7: the four top cards decide; each went to one seat (numbered as before the draw).
  const tops = ["3o", "3c", "2o", "2c"].map((top) => {
    const at = draw.cards.findIndex(([, card]) => card === top);
    return at < 0 ? null : h("li", {}, `${cardName(top)}: seat ${draw.cards[at][0]} `
      + `(card ${at + 1} turned up)`);
  });
  const lines = [h("h2", {}, "Partner draw (R7)"),
    h("p", { class: "muted" }, "Cards were turned up to each seat in turn until each held one of "
      + "Monsieur, Madame, Le Borgne, La Vache. Monsieur's and Madame's holders are partners, "
      + "and so are Le Borgne's and La Vache's; Madame's holder deals first."),
    h("ul", {}, tops),
    h("details", {}, h("summary", {}, `All ${draw.cards.length} cards turned up, in order `
      + "(seats numbered as before the draw)"), h("ol", { class: "draw-list" }, items))];
  if (model.seat !== null) lines.push(h("p", {}, `You now sit in seat ${model.seat}; your partner is ${nameOf(model, partnerOf(model.seat))}.`));
  fill(node, lines);
}

function renderDealResult(model) {
  const node = $("deal-result");
  if (unchanged(node, model.uid, model.info, model.seat, model.lastDeal,
    model.view === null)) return;
  const deal = model.lastDeal;
  const v = model.view;
  node.hidden = !deal || !v;
  if (!deal || !v) {
    fill(node);
    return;
  }
  const sentences = explainDeal(deal, (s) => nameOf(model, s));
  fill(node, h("h2", {}, `Deal ${deal.deal_number}: result`),
    h("ul", { class: "explain" }, sentences.map((s) => h("li", {}, s))),
    h("p", { class: "muted" }, `Tricks: ${[0, 1, 2, 3].map((s) => `${nameOf(model, s)} ${deal.trick_counts[s]}`).join(", ")}.`));
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
    h("td", {}, d.winner === null || d.winner === undefined ? "nobody" : nameOf(model, d.winner)),
    h("td", {}, `${d.points[0]}–${d.points[1]}`),
    h("td", {}, d.mordienne ? "yes" : "")));
  fill(node, h("h2", {}, "Match over"),
    h("p", { class: "result" }, matchResultText(result.result, result.points, model.seat)),
    h("table", { class: "deals" },
      h("thead", {}, h("tr", {}, h("th", {}, "Deal"), h("th", {}, "Won by"),
        h("th", {}, `${TEAM_NAMES[0]}–${TEAM_NAMES[1]}`), h("th", {}, "Mordienne"))),
      h("tbody", {}, rows)),
    h("button", { type: "button", class: "primary", dataset: { key: "record" },
      onclick: () => downloadRecord(app, model) }, "Download the match record (R17)"),
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
  if (iAgreed) lines.push("You asked for a rematch.");
  if (others.length) lines.push(`${names(others)} ${others.length === 1 ? "wants" : "want"} `
    + `a rematch${iAgreed ? " too" : ""}.`);
  if (agreed.length && waiting.length) lines.push(`Waiting for ${names(waiting)}.`);
  if (!agreed.length) {
    lines.push(model.seat === null ? "The players may play again at this table."
      : "Play again at this table: same seats, same options, a new match.");
  }
  const button = model.seat !== null && !iAgreed ? h("button", {
    type: "button", class: "primary", dataset: { key: "rematch" },
    onclick: () => app.act("rematch", { table: model.table }),
  }, others.length ? "Play again (accept the rematch)" : "Play again") : null;
  return h("div", { class: "rematch", role: "status", dataset: { key: "rematch-status" } },
    button, h("span", { class: "rematch-text" }, lines.join(" ")));
}

function renderChat(app, model) {
  $("chat-hint").textContent = model.seat === null
    ? "You are watching: your messages reach the other spectators only, never the players."
    : "Everyone at the table reads this, spectators too. Signals go through the signal "
      + "panel (R15), not the chat.";
  $("chat-notice").textContent = app.chatNotice ?? "";
  const log = $("chat-log");
  const last = model.chat[model.chat.length - 1];
  if (unchanged(log, model.uid, model.seat, last?.n, model.chat.length, [...model.muted])) return;
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 24;
  const hidden = model.mutedUnseen;
  const mutedNote = hidden.length ? h("li", { class: ["chat-note", "muted"],
    dataset: { key: "muted-unseen" } },
  `You mute ${hidden.length === 1 ? "someone" : `${hidden.length} people`} at this table; `
    + "their lines are hidden. ",
  h("button", { type: "button", class: "small", dataset: { key: "unmute-all" },
    onclick: () => unmuteAll(app, model, hidden) }, "Unmute")) : null;
  fill(log, [mutedNote, ...model.chat.map((line) => {
    const spectator = line.from_seat === null;
    const silenced = model.muted.has(line.sender);
    const who = line.mine ? "You" : safeName(line.name);
    const tag = spectator ? (line.mine ? " (to the spectators only)"
      : " (watching; spectators only)") : "";
    return h("li", {
      class: ["chat-line", line.mine && "mine", spectator && "spectator", silenced && "silenced"],
      dataset: { from: spectator ? "spectator" : "seat", sender: line.sender },
    },
    h("span", { class: "who" }, who), h("span", { class: "tag" }, tag), ": ",
    h("span", { class: "text" }, line.text),
    !line.mine && line.sender ? h("button", { type: "button", class: "small",
      "aria-label": `${silenced ? "Unmute" : "Mute"} ${who}`,
      dataset: { key: `mute-${line.n}`, mute: line.sender },
      onclick: () => toggleMute(app, model, line.sender) }, silenced ? "Unmute" : "Mute") : null);
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

/** Draw the whole table; returns the page title. */
export function renderTable(app, model) {
  renderHead(app, model);
  renderFairNote(model);
  renderScore(model);
  const mine = renderTurn(app, model);
  $("table-notice").textContent = app.notice;
  renderFelt(app, model);
  renderActions(app, model);
  renderHand(app, model);
  renderLastTrick(model);
  renderSignals(app, model);
  renderDraw(model);
  renderDealResult(model);
  renderMatchResult(app, model);
  renderChat(app, model);
  const name = safeName(model.info?.name, "Table");
  return `${mine ? "▶ Your turn · " : ""}${name} · Aluette Online`;
}
