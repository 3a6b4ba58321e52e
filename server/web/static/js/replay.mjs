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
import { language, t } from "./i18n.mjs";
import { markOf, replaySteps, reviewMarks } from "./replaysteps.mjs";

/** "/r/<table>" (the latest match), "/r/<table>/<match>", or "/r/" (a downloaded record,
 *  opened from a file on this computer: nothing is sent to the server). */
export const REPLAY_PATH = /^\/r(?:\/(?:([A-Za-z0-9_-]{1,64})(?:\/([1-9][0-9]{0,5}))?)?)?$/;
/** Autoplay: one step every this many ms. */
const AUTOPLAY_MS = 1800;
/** Polling a review while it is being made. */
const REVIEW_POLL_MS = 1500;

const state = {
  key: null, record: null, steps: [], at: 0, error: "", loading: false,
  autoplay: null, review: null, reviewSeat: null, reviewStatus: "", reviewTimer: null,
};

/** main.mjs: the route for a replay path, or null; a private table's replay link carries
 *  its join code in the fragment (never sent to the server by the browser). */
export function replayRoute(path, hash = location.hash) {
  const m = REPLAY_PATH.exec(path);
  const code = new URLSearchParams(String(hash).slice(1)).get("code");
  return m ? { view: "replay", table: m[1] ?? null, match: m[2] ? Number(m[2]) : null,
    code: code ? code.slice(0, 16) : null } : null;
}

/** The link to a match's replay (the end screen, the history, the share button); with a
 *  private table's `code`, anyone given the link may open it. */
export const replayLink = (table, match, code = null) =>
  `/r/${encodeURIComponent(table)}${match ? `/${match}` : ""}`
  + (code ? `#code=${encodeURIComponent(code)}` : "");

/** The code that opens this replay: the link's, else the one we joined the table with. */
const codeOf = () => app.route.code ?? app.conn.codes?.[app.route.table] ?? null;

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
  const key = table === null ? "file" : `${table}/${match ?? ""}/${app.route.code ?? ""}`;
  section().hidden = false;
  if (state.key === key && (state.record || state.loading || table === null)) return;
  stopAutoplay();
  clearTimeout(state.reviewTimer);
  Object.assign(state, { key, record: null, steps: [], at: 0, error: "", review: null,
    reviewSeat: null, reviewStatus: "", reviewProgress: null, shared: "", match: null });
  if (table === null || app.conn.status !== "online") return;
  state.loading = true;
  try {
    const result = await app.conn.call("get_record", { table, match, code: codeOf() });
    state.record = result.record;
    state.match = result.match ?? match;
    state.steps = replaySteps(result.record);
  } catch (err) {
    state.error = err instanceof CommandFailed && err.reply ? errorSentence(err.reply)
      : t("replay.error");
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
  } else if (key === "share") {
    share();
  }
  app.render();
}

/** A record file chosen on this computer (the end screen's download, `aluette-record`'s
 *  input): read here, never sent anywhere. */
async function openFile(file) {
  stopAutoplay();
  Object.assign(state, { record: null, steps: [], at: 0, error: "", review: null,
    reviewSeat: null, reviewStatus: "", reviewProgress: null });
  try {
    if (file.size > 2_000_000) throw new Error(t("replay.file.big"));
    const record = JSON.parse(await file.text());
    const steps = replaySteps(record);
    if (!steps.length) throw new Error(t("replay.file.empty"));
    Object.assign(state, { record, steps, match: Number.isSafeInteger(record.match) ? record.match : null });
  } catch (err) {
    state.error = t("replay.file.bad", { why: cleanText(String(err?.message ?? err)).slice(0, 120) });
  }
  app.render();
}

function filePicker() {
  return h("label", { class: "replay-file" }, t("replay.file.label"), " ",
    h("input", { type: "file", accept: "application/json,.json", dataset: { key: "record-file" },
      onchange: (ev) => { const f = ev.target.files?.[0]; if (f) openFile(f); } }));
}

/** Copy the replay's link (with a private table's code: whoever gets it may open it). */
async function share() {
  const link = new URL(replayLink(app.route.table, state.match, codeOf()), location.href).href;
  try {
    await navigator.clipboard.writeText(link);
    state.shared = t("replay.shared");
  } catch {
    state.shared = t("replay.shared.box", { link });
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
  state.reviewProgress = null;
  state.reviewStatus = t("replay.review.asking");
  app.render();
  const { table } = app.route;
  try {
    const r = await app.conn.call("review", { table, seat, match: state.match ?? null,
      code: codeOf() });
    state.reviewProgress = null;
    if (r.status === "done") {
      state.review = r.review;
      const lost = Number(r.review?.points_lost ?? 0).toFixed(2);
      const share = Math.round(100 * Number(r.review?.share_matched ?? 0));
      state.reviewStatus = t("replay.review.done", { name: nameOf(seat), share, lost });
    } else if (r.status === "failed") {
      state.reviewStatus = t("replay.review.failed", { error: cleanText(r.error ?? "") });
    } else {
      // Queued: a bar that moves without a value; running: decisions valued of all.
      state.reviewProgress = r.status === "queued" ? { done: null, total: null }
        : { done: Number(r.done) || 0, total: Number(r.total) || 0 };
      state.reviewStatus = r.status === "queued"
        ? t("replay.review.queued", { n: Number(r.ahead) || 0 })
        : t("replay.review.running", { done: Number(r.done) || 0, total: Number(r.total) || 0 });
      state.reviewTimer = setTimeout(() => askReview(seat), REVIEW_POLL_MS);
    }
  } catch (err) {
    state.reviewStatus = err instanceof CommandFailed && err.reply ? errorSentence(err.reply)
      : t("replay.review.error");
  }
  app.render();
}

function nameOf(seat) {
  const names = state.record?.seats ?? [];
  return safeName(names[seat], t("seat.n", { seat }));
}

// ------------------------------------------------------------------ drawing

function seatPanel(step, seat, marks) {
  const hand = step.hands[seat];
  const mark = step.trick > 0 && state.reviewSeat === seat && step.cards
    ? marks.get(`${step.deal}:${step.trick}`) : null;
  return h("div", { class: ["replay-seat", `at-${(seat - (state.reviewSeat ?? 0) + 4) % 4}`],
    dataset: { seat: String(seat) } },
  h("div", { class: "replay-name" }, t("replay.seat.tricks", { name: nameOf(seat),
    n: step.counts[seat] }), seat === step.dealer ? ` · ${t("replay.dealer")}` : "",
  mark?.mark ? h("span", { class: "replay-mark", title: t("replay.mark.title", {
    card: cardName(mark.preferred), lost: mark.lost.toFixed(2) }) }, ` ${mark.mark}`) : null),
  h("div", { class: "replay-hand", "aria-label": t("replay.hand.label", { name: nameOf(seat) }) },
    hand.length ? hand.map((c) => cardFace(c, { small: true })) : "—"));
}

function trickArea(step) {
  if (step.trick === 0) return h("div", { class: "replay-trick" }, t("replay.dealt"));
  const cards = step.cards.map((c, i) => {
    const seat = (step.leader + i) % 4;
    return h("figure", { class: ["replay-played", step.winner === seat && "winner"],
      dataset: { seat: String(seat) } },
    cardFace(c), h("figcaption", {}, nameOf(seat)));
  });
  const outcome = step.winner === null ? t("replay.spoiled")
    : t("replay.wins", { name: nameOf(step.winner) });
  return h("div", { class: "replay-trick" }, h("div", { class: "replay-cards" }, ...cards),
    h("p", {}, t("replay.trick", { n: step.trick, name: nameOf(step.leader), outcome })));
}

function notes(step) {
  const out = [];
  if (step.chanter) {
    const c = step.chanter;
    const votes = [1, 2, 3, 4].map((k) => (step.dealer + k) % 4)
      .filter((s) => c.votes[s] !== null).map((s) => `${nameOf(s)} ${c.votes[s] ? t("yes") : t("no")}`);
    out.push(t("replay.chanter", { votes: votes.join(", "),
      exchange: c.exchange ? [1, 0].map((k) => (step.dealer + k) % 4).map((s) =>
        t("replay.chanter.took", { name: nameOf(s), cards: c.discards[s].join(" ") })).join("; ")
        : t("replay.chanter.none") }));
  }
  for (const s of step.signals) {
    const noticed = s.to.filter((x) => x !== (s.from_seat + 2) % 4);
    const said = { name: nameOf(s.from_seat), signal: signalText(s.signal, s.n) };
    out.push(noticed.length ? t("replay.signal.noticed", { ...said, others: names(noticed) })
      : t("replay.signal", said));
  }
  if (step.result) out.push(...explainDeal(step.result, nameOf));
  return out.map((t) => h("p", {}, t));
}

/** Names in a list, as the language writes one ("A, B and C"). */
const names = (seats) => new Intl.ListFormat(language(), { type: "conjunction" })
  .format(seats.map(nameOf));

function controls() {
  // The visible words are the button's name (WCAG 2.5.3, axe's label-content-name-mismatch);
  // the longer description is its title.
  const b = (key, word) => h("button", { type: "button", dataset: { replay: key },
    title: t(`replay.key.${word}.label`) }, t(`replay.key.${word}`));
  return h("div", { class: "replay-controls" },
    b("back-deal", "back_deal"), b("back", "back"),
    b("autoplay", state.autoplay ? "stop" : "play"),
    b("next", "next"), b("next-deal", "next_deal"),
    app.route.table !== null ? b("share", "share") : null);
}

function reviewBox() {
  const p = state.reviewProgress;
  return h("div", { class: "replay-review" },
    h("span", {}, t("replay.review.of")),
    ...[0, 1, 2, 3].map((s) => h("button", { type: "button", dataset: { replay: `review-${s}` },
      "aria-pressed": String(state.reviewSeat === s) }, nameOf(s))),
    p ? h("progress", { class: "replay-progress", "aria-label": t("replay.review.progress"),
      max: p.total ? String(p.total) : null, value: p.total ? String(p.done) : null }) : null,
    h("p", { role: "status", "aria-live": "polite" }, state.reviewStatus),
    state.review ? dealSummaries(state.review) : null);
}

/** The review's summary of each deal: decisions as the expert's, points lost. */
function dealSummaries(review) {
  const deals = Array.isArray(review.deals) ? review.deals : [];
  return h("ul", { class: "replay-deals" }, deals.map((d) => h("li", {}, t("replay.review.deal", {
    deal: d.deal, matched: d.matched, n: d.decisions, lost: Number(d.points_lost ?? 0).toFixed(2) }))));
}

/** The reviewed seat's decisions at this step, each with the expert's view of it: a card
 *  of this trick; the chanter vote and discard on the deal's first step. */
export function verdicts(review, step, seat) {
  const out = [];
  for (const d of review?.decisions ?? []) {
    if (d.deal !== step.deal) continue;
    const here = d.kind === "card" ? step.trick > 0 && d.trick === step.trick : step.trick === 0;
    if (!here) continue;
    const mark = markOf(Number(d.lost) || 0);
    const what = (c) => (d.kind === "card" ? `${cardName(c)} (${c})`
      : d.kind === "chanter_vote" ? t(c === "yes" ? "yes" : "no") : String(c));
    const said = { name: nameOf(seat), actual: what(d.actual), preferred: what(d.preferred),
      lost: Number(d.lost ?? 0).toFixed(2) };
    const kind = d.kind === "card" ? "card" : d.kind === "discard" ? "discard" : "vote";
    out.push({ mark, text: t(d.matched || !mark ? `replay.verdict.${kind}.good`
      : `replay.verdict.${kind}`, said), good: Boolean(d.matched) });
  }
  return out;
}

function verdictLines(step) {
  if (!state.review || state.reviewSeat === null) return null;
  const lines = verdicts(state.review, step, state.reviewSeat);
  if (!lines.length) return null;
  return h("div", { class: "replay-verdicts", "aria-live": "polite" }, lines.map((v) =>
    h("p", { class: ["replay-verdict", v.good && "good"] },
      v.mark ? h("strong", { class: "replay-mark" }, `${v.mark} `) : null, v.text)));
}

/** main.mjs: draw the replay; returns the page title. */
export function renderReplay(theApp) {
  app = theApp;
  const node = section();
  node.hidden = false;
  const { table } = app.route;
  const fromFile = table === null;
  const title = h("h1", { id: "replay-title" }, fromFile ? t("replay.file.title")
    : state.match ? t("replay.title.match", { table: cleanText(table), n: state.match })
      : t("replay.title", { table: cleanText(table) }));
  if (state.error || !state.record) {
    fill(node, title, fromFile && !state.error ? null : h("p", { class: "notice", role: "alert" },
      state.error || (app.conn.status === "online" ? t("replay.loading")
        : t("conn.connecting"))), fromFile ? filePicker() : null,
    h("a", { href: "/" }, t("replay.back_lobby")));
    return t("replay.page");
  }
  const step = state.steps[state.at];
  const marks = reviewMarks(state.review);
  const meta = t("replay.meta", { deal: step.deal, deals: state.record.deals.length,
    name: nameOf(step.dealer), step: state.at + 1, steps: state.steps.length,
    where: step.trick === 0 ? t("replay.as_dealt") : t("replay.trick_of", { n: step.trick }) });
  fill(node, title,
    h("p", { class: "replay-meta", role: "status", "aria-live": "polite" }, meta),
    h("div", { class: "replay-board" }, ...[0, 1, 2, 3].map((s) => seatPanel(step, s, marks)),
      trickArea(step)),
    verdictLines(step),
    h("div", { class: "replay-notes" }, ...notes(step)),
    controls(),
    fromFile ? filePicker() : reviewBox(),
    state.shared ? h("p", { role: "status" }, state.shared) : null,
    h("p", { class: "replay-keys" }, t("replay.keys")),
    fromFile ? h("a", { href: "/" }, t("replay.back_lobby"))
      : h("a", { href: `/t/${encodeURIComponent(table)}` }, t("replay.back_table")));
  return t("replay.page.deal", { n: step.deal });
}
