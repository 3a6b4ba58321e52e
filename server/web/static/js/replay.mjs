// The replay page (issue 28, Build 1): "/r/<table>/<match>" steps through a finished match
// trick by trick with every hand face up, forwards and backwards, by key, by tap or by
// itself (autoplay); the deal results are explained as the table explains them
// (explain.mjs), and the expert's review of a seat (protocol 1.5 `review`) marks its
// costly plays (?!, ?, ??) with what the expert preferred.
//
// The record comes from `get_record` on the page's own connection, so a private table's
// replay opens only for those the server lets read its record. main.mjs routes here
// (replayRoute, enterReplay, renderReplay); everything else is this module's, its steps
// are replaysteps.mjs's (pure, tested under node).

import { cardName, cleanText, errorSentence, safeName, signalText } from "./cards.mjs";
import { CommandFailed } from "./connection.mjs";
import { cardFace, fill, h } from "./dom.mjs";
import { explainDeal } from "./explain.mjs";
import { replaySteps, reviewMarks } from "./replaysteps.mjs";

/** "/r/<table>" (the latest match) or "/r/<table>/<match>". */
export const REPLAY_PATH = /^\/r\/([A-Za-z0-9_-]{1,64})(?:\/([1-9][0-9]{0,5}))?$/;
/** Autoplay: one step every this many ms. */
const AUTOPLAY_MS = 1800;
/** Polling a review while it is being made. */
const REVIEW_POLL_MS = 1500;

const state = {
  key: null, record: null, steps: [], at: 0, error: "", loading: false,
  autoplay: null, review: null, reviewSeat: null, reviewStatus: "", reviewTimer: null,
};

/** main.mjs: the route for a replay path, or null. */
export function replayRoute(path) {
  const m = REPLAY_PATH.exec(path);
  return m ? { view: "replay", table: m[1], match: m[2] ? Number(m[2]) : null, code: null }
    : null;
}

/** The link to a match's replay (the end screen, the history). */
export const replayLink = (table, match) =>
  `/r/${encodeURIComponent(table)}${match ? `/${match}` : ""}`;

function section() {
  let node = document.getElementById("replay-view");
  if (node) return node;
  const css = h("link", { rel: "stylesheet", href: new URL("../replay.css", import.meta.url).href });
  document.head.append(css);
  node = h("section", { id: "replay-view", class: "replay", "aria-labelledby": "replay-title" });
  document.getElementById("main").append(node);
  node.addEventListener("click", (ev) => {
    const key = ev.target.closest?.("[data-replay]")?.dataset.replay;
    if (key) act(key);
  });
  addEventListener("keydown", (ev) => {
    if (node.hidden || ev.target.closest?.("input, textarea, select")) return;
    const keys = { ArrowRight: "next", ArrowLeft: "back", ArrowDown: "next-deal",
      ArrowUp: "back-deal", PageDown: "next-deal", PageUp: "back-deal", Home: "first",
      End: "last", " ": "autoplay" };
    if (keys[ev.key]) {
      ev.preventDefault();
      act(keys[ev.key]);
    }
  });
  return node;
}

let app = null;

/** main.mjs, on entering the route and once online: fetch the record (once per match). */
export async function enterReplay(theApp) {
  app = theApp;
  const { table, match } = app.route;
  const key = `${table}/${match ?? ""}`;
  section().hidden = false;
  if (state.key === key && (state.record || state.loading)) return;
  stopAutoplay();
  clearTimeout(state.reviewTimer);
  Object.assign(state, { key, record: null, steps: [], at: 0, error: "", review: null,
    reviewSeat: null, reviewStatus: "" });
  if (app.conn.status !== "online") return;
  state.loading = true;
  try {
    const result = await app.conn.call("get_record", { table, match });
    state.record = result.record;
    state.match = result.match ?? match;
    state.steps = replaySteps(result.record);
  } catch (err) {
    state.error = err instanceof CommandFailed && err.reply ? errorSentence(err.reply)
      : "The record could not be read; try again.";
  }
  state.loading = false;
  app.render();
}

/** main.mjs, when another screen is shown. */
export function leaveReplay() {
  stopAutoplay();
  const node = document.getElementById("replay-view");
  if (node) node.hidden = true;
}

function act(key) {
  const last = state.steps.length - 1;
  const step = state.steps[state.at];
  if (key !== "autoplay") stopAutoplay();
  if (key === "next") state.at = Math.min(state.at + 1, last);
  else if (key === "back") state.at = Math.max(state.at - 1, 0);
  else if (key === "first") state.at = 0;
  else if (key === "last") state.at = last;
  else if (key === "next-deal" && step) {
    const i = state.steps.findIndex((s) => s.deal === step.deal + 1);
    if (i >= 0) state.at = i;
  } else if (key === "back-deal" && step) {
    const i = state.steps.findIndex((s) => s.deal === Math.max(step.deal - 1, 1));
    if (i >= 0) state.at = i;
  } else if (key === "autoplay") {
    if (state.autoplay) stopAutoplay();
    else {
      state.autoplay = setInterval(() => {
        if (state.at >= state.steps.length - 1) stopAutoplay();
        else state.at += 1;
        app.render();
      }, AUTOPLAY_MS);
    }
  } else if (key.startsWith("review-")) {
    askReview(Number(key.slice(7)));
  }
  app.render();
}

function stopAutoplay() {
  clearInterval(state.autoplay);
  state.autoplay = null;
}

async function askReview(seat) {
  clearTimeout(state.reviewTimer);
  state.reviewSeat = seat;
  state.review = null;
  state.reviewStatus = "Asking the expert…";
  app.render();
  const { table } = app.route;
  try {
    const r = await app.conn.call("review", { table, seat, match: state.match ?? null });
    if (r.status === "done") {
      state.review = r.review;
      const lost = Number(r.review?.points_lost ?? 0).toFixed(2);
      const share = Math.round(100 * Number(r.review?.share_matched ?? 0));
      state.reviewStatus = `The expert's review of ${nameOf(seat)}: ${share}% of the `
        + `decisions as the expert would have made them; ${lost} points lost to its choices.`;
    } else if (r.status === "failed") {
      state.reviewStatus = `The review could not be made: ${cleanText(r.error ?? "")}`;
    } else {
      state.reviewStatus = r.status === "queued"
        ? `Waiting for the expert (${r.ahead} review${r.ahead === 1 ? "" : "s"} before it)…`
        : `The expert is looking: ${r.done} of ${r.total} decisions…`;
      state.reviewTimer = setTimeout(() => askReview(seat), REVIEW_POLL_MS);
    }
  } catch (err) {
    state.reviewStatus = err instanceof CommandFailed && err.reply ? errorSentence(err.reply)
      : "The review could not be asked for; try again.";
  }
  app.render();
}

function nameOf(seat) {
  const names = state.record?.seats ?? [];
  return safeName(names[seat], `Seat ${seat}`);
}

// ------------------------------------------------------------------ drawing

function seatPanel(step, seat, marks) {
  const hand = step.hands[seat];
  const mark = step.trick > 0 && state.reviewSeat === seat && step.cards
    ? marks.get(`${step.deal}:${step.trick}`) : null;
  return h("div", { class: ["replay-seat", `at-${(seat - (state.reviewSeat ?? 0) + 4) % 4}`],
    dataset: { seat: String(seat) } },
  h("div", { class: "replay-name" }, `${nameOf(seat)} · ${step.counts[seat]} trick`
    + `${step.counts[seat] === 1 ? "" : "s"}`, seat === step.dealer ? " · dealer" : "",
  mark?.mark ? h("span", { class: "replay-mark", title: `The expert preferred `
    + `${cardName(mark.preferred)} (about ${mark.lost.toFixed(2)} points better)` },
  ` ${mark.mark}`) : null),
  h("div", { class: "replay-hand", "aria-label": `${nameOf(seat)}'s hand` },
    hand.length ? hand.map((c) => cardFace(c, { small: true })) : "—"));
}

function trickArea(step) {
  if (step.trick === 0) return h("div", { class: "replay-trick" }, "The deal as dealt.");
  const cards = step.cards.map((c, i) => {
    const seat = (step.leader + i) % 4;
    return h("figure", { class: ["replay-played", step.winner === seat && "winner"],
      dataset: { seat: String(seat) } },
    cardFace(c), h("figcaption", {}, nameOf(seat)));
  });
  const outcome = step.winner === null
    ? "Spoiled (R11): a tie for the top card; the same seat leads again."
    : `${nameOf(step.winner)} wins the trick.`;
  return h("div", { class: "replay-trick" }, h("div", { class: "replay-cards" }, ...cards),
    h("p", {}, `Trick ${step.trick}, led by ${nameOf(step.leader)}. ${outcome}`));
}

function notes(step) {
  const out = [];
  if (step.chanter) {
    const c = step.chanter;
    const votes = [1, 2, 3, 4].map((k) => (step.dealer + k) % 4)
      .filter((s) => c.votes[s] !== null).map((s) => `${nameOf(s)} ${c.votes[s] ? "yes" : "no"}`);
    out.push(`Chanter (R9): ${votes.join(", ")}. `
      + (c.exchange ? [1, 0].map((k) => (step.dealer + k) % 4).map((s) =>
        `${nameOf(s)} took six talon cards and discarded ${c.discards[s].join(" ")}`).join("; ")
        : "Not everyone said yes: the hands are played as dealt."));
  }
  for (const s of step.signals) {
    const noticed = s.to.filter((x) => x !== (s.from_seat + 2) % 4);
    out.push(`Signal (R15): ${nameOf(s.from_seat)} to their partner: “${signalText(s.signal, s.n)}”`
      + (noticed.length ? `, noticed by ${noticed.map(nameOf).join(" and ")} (R16).` : "."));
  }
  if (step.result) out.push(...explainDeal(step.result, nameOf));
  return out.map((t) => h("p", {}, t));
}

function controls() {
  const b = (key, label, text) => h("button", { type: "button", dataset: { replay: key },
    "aria-label": label }, text);
  return h("div", { class: "replay-controls" },
    b("back-deal", "Previous deal", "⏮ Deal"), b("back", "Previous trick", "◀ Back"),
    b("autoplay", state.autoplay ? "Stop autoplay" : "Autoplay",
      state.autoplay ? "⏸ Stop" : "▶ Play"),
    b("next", "Next trick", "Next ▶"), b("next-deal", "Next deal", "Deal ⏭"));
}

function reviewBox() {
  return h("div", { class: "replay-review" },
    h("span", {}, "The expert's review of: "),
    ...[0, 1, 2, 3].map((s) => h("button", { type: "button", dataset: { replay: `review-${s}` },
      "aria-pressed": String(state.reviewSeat === s) }, nameOf(s))),
    h("p", { role: "status", "aria-live": "polite" }, state.reviewStatus));
}

/** main.mjs: draw the replay; returns the page title. */
export function renderReplay(theApp) {
  app = theApp;
  const node = section();
  node.hidden = false;
  const { table } = app.route;
  const title = h("h1", { id: "replay-title" }, `Replay of table ${cleanText(table)}`
    + (state.match ? `, match ${state.match}` : ""));
  if (state.error || !state.record) {
    fill(node, title, h("p", { class: "notice", role: "alert" },
      state.error || (app.conn.status === "online" ? "Loading the record…"
        : "Connecting…")), h("a", { href: "/" }, "Back to the lobby"));
    return "Replay · Aluette Online";
  }
  const step = state.steps[state.at];
  const marks = reviewMarks(state.review);
  const meta = `Deal ${step.deal} of ${state.record.deals.length} · dealt by `
    + `${nameOf(step.dealer)} · ${step.trick === 0 ? "as dealt" : `trick ${step.trick} of 9`}`
    + ` · step ${state.at + 1} of ${state.steps.length}`;
  fill(node, title,
    h("p", { class: "replay-meta", role: "status", "aria-live": "polite" }, meta),
    h("div", { class: "replay-board" }, ...[0, 1, 2, 3].map((s) => seatPanel(step, s, marks)),
      trickArea(step)),
    h("div", { class: "replay-notes" }, ...notes(step)),
    controls(),
    reviewBox(),
    h("p", { class: "replay-keys" }, "Keys: ← → trick by trick, ↑ ↓ deal by deal, space "
      + "plays by itself, Home and End. Every hand is face up: the match is over."),
    h("a", { href: `/t/${encodeURIComponent(table)}` }, "Back to the table"));
  return `Replay · deal ${step.deal} · Aluette Online`;
}
