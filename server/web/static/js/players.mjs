// Players in the browser (issue 27): "Play now" (the matchmaking queue, with a visible
// wait and a cancel button) and a registered player's profile page, "/u/<name>".

import { safeName } from "./cards.mjs";
import { fill, h } from "./dom.mjs";
import { t } from "./i18n.mjs";

const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------ play now

/** Where our request stands: not queued, or waiting since `since` (performance.now());
 *  `seatings` counts the `matched` that seated us, so an answer overtaken by one is seen. */
const queue = { waiting: false, rated: false, since: 0, timer: null, count: 0, known: [],
  seatings: 0 };

function waitedText() {
  const s = Math.floor((performance.now() - queue.since) / 1000);
  return t("playnow.waiting", { time: `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`,
    kind: queue.rated ? t("playnow.kind.rated") : t("playnow.kind.casual") });
}

/** The wait survives a reload of the page (the request stays queued on the server for
 *  the queue's grace while the page reconnects): this tab remembers it. */
const KEPT = "aluette.queue.v1";

function remember() {
  try {
    if (queue.waiting) {
      sessionStorage.setItem(KEPT, JSON.stringify({ rated: queue.rated,
        since: Date.now() - (performance.now() - queue.since), known: queue.known }));
    } else {
      sessionStorage.removeItem(KEPT);
    }
  } catch {
    // storage refused (private mode): the wait is only lost on a reload
  }
}

function startWaiting(rated, since) {
  queue.waiting = true;
  queue.rated = rated;
  queue.since = since;
  clearInterval(queue.timer);
  // The wait is visible: the time spent so far, every second.
  queue.timer = setInterval(() => renderPlayNow(), 1000);
  remember();
}

function stopWaiting() {
  queue.waiting = false;
  clearInterval(queue.timer);
  queue.timer = null;
  remember();
}

export function setupPlayNow(app) {
  try {
    const kept = JSON.parse(sessionStorage.getItem(KEPT) ?? "null");
    if (kept && Number.isFinite(kept.since)) {
      queue.known = Array.isArray(kept.known) ? kept.known.map(String) : [];
      startWaiting(kept.rated === true, performance.now() - Math.max(0, Date.now() - kept.since));
    }
  } catch {
    // nothing kept
  }
  $("play-now-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const rated = $("play-now-rated").checked;
    const seatedBefore = queue.seatings;
    const result = await app.act("queue", { rated, options: {} }, "lobby");
    // No wait if our request made a table at once and `matched` overtook the answer.
    if (!result || queue.seatings !== seatedBefore) return;
    queue.known = app.lobby.seats.map((seat) => String(seat?.table));
    queue.count = Number.isSafeInteger(result.waiting) ? result.waiting : 1;
    startWaiting(rated, performance.now());
    renderPlayNow();
    $("play-now-cancel").focus();
  });
  $("play-now-cancel").addEventListener("click", async () => {
    await app.act("unqueue", {}, "lobby");
    stopWaiting();
    renderPlayNow();
    $("play-now").focus();
  });
}

/** `matched`: the matchmaker seated us; the table is the page now. */
export function onMatched(app, matched) {
  queue.seatings += 1;
  stopWaiting();
  renderPlayNow();
  app.setStatus(t(matched.rated ? "playnow.seated.rated" : "playnow.seated",
    { seat: matched.seat }));
  app.navigate(app.tableLink(matched.table));
}

/** The lobby's seats, read after a reconnect: a seat we did not have when we queued is
 *  where the matchmaker put us while the page was away (no `matched` reached it). */
export function seatsRead(app) {
  if (!queue.waiting) return;
  const seat = app.lobby.seats.find((s) => typeof s?.table === "string"
    && s.status === "playing" && !queue.known.includes(s.table));
  if (seat) onMatched(app, { table: seat.table, seat: seat.seat, rated: queue.rated });
}

export function renderPlayNow() {
  const wait = $("play-now-wait");
  wait.hidden = !queue.waiting;
  wait.textContent = queue.waiting ? waitedText() : "";
  $("play-now-cancel").hidden = !queue.waiting;
  $("play-now").disabled = queue.waiting;
  $("play-now-rated").disabled = queue.waiting;
}

// ------------------------------------------------------------------ profiles

export const PROFILE_PATH = /^\/u\/([^/?#]{1,200})$/;

/** "/u/<name>" -> the route of a profile page, or null. */
export function profileRoute(path) {
  const m = PROFILE_PATH.exec(path);
  if (!m) return null;
  let name;
  try {
    name = decodeURIComponent(m[1]);
  } catch {
    return null;
  }
  return { view: "profile", table: null, code: null, name: safeName(name, "").slice(0, 32) };
}

export const profileLink = (name) => `/u/${encodeURIComponent(String(name))}`;

const profile = { name: null, data: null, error: "", loading: false };

export async function enterProfile(app) {
  const name = app.route.name;
  Object.assign(profile, { name, data: null, error: "", loading: true });
  if (!name) {
    Object.assign(profile, { loading: false, error: t("profile.none") });
    return;
  }
  if (app.conn.status !== "online") return; // onWelcome comes back here
  try {
    profile.data = await app.conn.call("profile", { name });
  } catch (err) {
    profile.error = app.describe(err);
  }
  profile.loading = false;
  app.render();
}

function section() {
  let node = $("profile-view");
  if (!node) {
    node = h("section", { id: "profile-view", class: "profile", "aria-labelledby": "profile-title" });
    $("main").append(node);
  }
  return node;
}

export function leaveProfile() {
  const node = $("profile-view");
  if (node) node.hidden = true;
}

function ratingText(r) {
  if (!r || typeof r !== "object") return t("profile.unrated");
  return t("profile.rating", { display: r.display, mu: Number(r.mu).toFixed(1),
    sigma: Number(r.sigma).toFixed(1) });
}

function matchItem(app, m) {
  const seat = Number.isSafeInteger(m.seat) ? m.seat : null;
  const pts = Array.isArray(m.points) ? m.points : [0, 0];
  const when = new Date(Number(m.finished_at) * 1000).toLocaleString();
  let outcome = `${pts[0]}–${pts[1]}`;
  if (seat !== null) {
    const team = seat % 2;
    const won = m.result === `team${team}`;
    outcome = `${t(won ? "profile.won" : m.result === "draw" ? "profile.draw" : "profile.lost")} ${pts[team]}–${pts[1 - team]}`;
  }
  const who = (Array.isArray(m.players) ? m.players : []).map((p) => safeName(p.name, "?")
    + (p.bot ? ` ${t("lobby.seat.program")}` : "")).join(", ");
  const table = String(m.table);
  return h("li", {},
    h("span", {}, `${when} · `),
    h("a", { href: `/r/${encodeURIComponent(table)}/${Number(m.match) || 1}` },
      t("profile.match", { table: table.slice(0, 10), n: Number(m.match) || 1 })),
    ` · ${outcome}`,
    m.rated ? h("span", { class: "badge rated" }, t("badge.rated")) : null,
    h("span", { class: "muted" }, ` · ${who}`));
}

/** Draw the profile page; returns the document title. */
export function renderProfile(app) {
  const node = section();
  node.hidden = false;
  const p = profile.data;
  const title = h("h1", { id: "profile-title" },
    t("profile.title", { name: safeName(p?.name ?? profile.name, "?") }));
  if (!p) {
    fill(node, title, h("p", { class: profile.error ? "notice" : "muted", role: "status" },
      profile.error || t("profile.loading")), h("a", { href: "/", class: "button" }, t("table.lobby")));
    return t("profile.title", { name: safeName(profile.name, "?") });
  }
  const ladder = (Array.isArray(p.ladder) ? p.ladder : []).map((s) =>
    h("li", {}, `${t(`level.${safeName(s.level, "normal")}`)}: ${Number(s.display)}`));
  const partners = (Array.isArray(p.partners) ? p.partners : []).map((x) =>
    h("li", {}, h("a", { href: profileLink(x.name) }, safeName(x.name, "?")),
      ` (${t("profile.partner", { won: Number(x.won), n: Number(x.matches) })})`));
  const recent = (Array.isArray(p.recent) ? p.recent : []).map((m) => matchItem(app, m));
  fill(node, title,
    h("p", { class: "lead", id: "profile-rating" }, ratingText(p.rating)),
    h("p", { id: "profile-counts" }, t("profile.counts", { played: Number(p.played),
      won: Number(p.won), rated: Number(p.rated_played) })),
    h("h2", {}, t("profile.ladder")), h("ul", { class: "plain", id: "profile-ladder" }, ladder),
    h("h2", {}, t("profile.partners")),
    partners.length ? h("ul", { class: "plain" }, partners) : h("p", { class: "muted" }, t("profile.no_partners")),
    h("h2", {}, t("profile.recent")),
    recent.length ? h("ul", { class: "plain", id: "profile-recent" }, recent)
      : h("p", { class: "muted" }, t("profile.no_recent")),
    h("a", { href: "/", class: "button" }, t("table.lobby")));
  return t("profile.title", { name: safeName(p.name, "?") });
}

/** The top bar's link to your own profile, once the session speaks for an account. */
export function renderMyProfileLink(app) {
  const link = $("my-profile");
  const account = app.conn?.account ?? null;
  link.hidden = account === null;
  if (account !== null) link.href = profileLink(app.conn.session.name ?? app.conn.name ?? "");
}
