// The page: one connection, one model per table followed, two screens (lobby and table),
// chosen by the URL: "/" is the lobby, "/t/<table-id>" a table (with "#code=..." for a
// private table's join code, which never leaves the browser).

import { renderAccount, setupAccount } from "./account.mjs";
import { cleanText, errorSentence, safeName } from "./cards.mjs";
import { installDefs } from "./cardsvg.mjs";
import { CommandFailed, Connection, socketUrl } from "./connection.mjs";
import { newContribution } from "./fair.mjs";
import { language, languages, setup as setupLanguages, t, use } from "./i18n.mjs";
import { renderLobby, setupLobby } from "./lobby.mjs";
import { TableModel } from "./model.mjs";
import { renderTable, setupTable } from "./table.mjs";
import { REPLAY_PATH, enterReplay, leaveReplay, renderReplay, replayRoute } from "./replay.mjs";
import { PROFILE_PATH, enterProfile, leaveProfile, onMatched, profileRoute, renderProfile,
  renderMyProfileLink, seatsRead, setupPlayNow } from "./players.mjs";

const $ = (id) => document.getElementById(id);

const app = {
  conn: null,
  /** table id -> TableModel */
  models: new Map(),
  route: { view: "lobby", table: null, code: null },
  lobby: { tables: [], seats: [], next: null, loaded: false, error: "" },
  /** cards chosen for the chanter discard (R9) */
  discard: new Set(),
  notice: "",
  /** good news (a link copied, a mute): a polite status line, not an alert */
  status: "",
  /** the card chosen and waiting for its confirmation (prefs.confirm) */
  armed: null,
  /** the chat box's own message (a refused chat), apart from the table's notice */
  chatNotice: "",
  renderQueued: false,
};

// ------------------------------------------------------------------ routing

const TABLE_PATH = /^\/t\/([A-Za-z0-9_-]{1,64})$/;

function parseRoute() {
  const replay = replayRoute(location.pathname);
  if (replay) return replay;
  const profile = profileRoute(location.pathname);
  if (profile) return profile;
  const m = TABLE_PATH.exec(location.pathname);
  if (!m) return { view: "lobby", table: null, code: null };
  const code = new URLSearchParams(location.hash.slice(1)).get("code");
  return { view: "table", table: m[1], code: code ? code.slice(0, 16) : null };
}

/** Go to a screen; `push` adds a history entry (links, buttons), not for popstate. */
function navigate(path, push = true) {
  if (push && path !== location.pathname + location.hash) history.pushState(null, "", path);
  const was = app.route;
  app.route = parseRoute();
  // A table we only watched and move away from: stop watching it, so the people there do
  // not count a spectator who is not looking (issue 31, item 8).
  if (was.view === "table" && was.table !== app.route.table) {
    const model = app.models.get(was.table);
    if (model && model.seat === null && app.conn.following(was.table)
        && !app.conn.session.tables.get(was.table)?.seat) {
      app.conn.call("leave", { table: was.table }).catch(() => {});
      app.conn.forget(was.table);
      app.models.delete(was.table);
    }
  }
  app.notice = "";
  app.status = "";
  app.armed = null;
  app.chatNotice = "";
  app.discard.clear();
  enterRoute();
  render();
  $("main").focus({ preventScroll: true });
}

/** A table link: the page for it, with the join code in the fragment if we know one. */
function tableLink(table) {
  const code = app.conn?.codes[table];
  return `/t/${encodeURIComponent(table)}${code ? `#code=${encodeURIComponent(code)}` : ""}`;
}

function enterRoute() {
  const { view, table, code } = app.route;
  if (view === "replay") return void enterReplay(app);
  leaveReplay();
  if (view === "profile") return void enterProfile(app);
  leaveProfile();
  if (view !== "table") {
    refreshLobby();
    return;
  }
  if (code) app.conn.codes[table] = code;
  if (!app.models.has(table)) app.models.set(table, new TableModel(table));
  if (app.conn.following(table)) return; // resumed by the connection (reload, reconnect)
  // A link to a table we do not follow yet: watch it (a seated player gets their seat's
  // view instead), then "Sit here" joins.
  if (app.conn.status === "online") watch(table);
}

async function watch(table) {
  const code = app.conn.codes[table] ?? null;
  try {
    await app.conn.call("spectate", { table, code });
  } catch (err) {
    showError(err, "table");
  }
}

// ------------------------------------------------------------------ connection hooks

function onEvent(table, seq, event) {
  let model = app.models.get(table);
  if (!model) {
    model = new TableModel(table);
    app.models.set(table, model);
  }
  if (event) model.apply(event);
  if (model.stale) {
    model.stale = false;
    app.conn.refresh(table);
  }
  // Before a match there is no view to say where we sit: the session knows it from the ok
  // of create_table, join or resume. Not at a rematch's deals_committed (which drops the
  // view): the model's seat is newer there, the session's is the seat we joined, before
  // any partner draw (R7) of the last match moved us.
  if (model.view === null && event?.type !== "deals_committed") {
    model.seat = app.conn.session.tables.get(table)?.seat ?? null;
  }
  if (event?.type === "table_changed" && oweContribution.has(table)) contributeNow(model);
  // R8a: the revealed record's check is asynchronous (crypto.subtle); draw its result.
  if (event?.type === "match_over") model.fairCheck?.then(() => render());
  if (event?.type === "deal_started" || event?.type === "snapshot") app.discard.clear();
  if (event?.type === "deals_committed") app.notice = ""; // a new match: old words are stale
  if (event?.type === "table_changed" && app.route.view === "lobby") refreshLobbySoon();
  render();
}

function onStatus(status, detail) {
  const node = $("status");
  const words = {
    connecting: t("conn.connecting"),
    online: detail === "reconnected" ? t("conn.online.again") : t("conn.online"),
    reconnecting: t("conn.reconnecting"),
    fatal: t("conn.fatal"),
  };
  node.textContent = words[status] ?? status;
  node.dataset.state = status;
  const banner = $("banner");
  banner.replaceChildren();
  if (status === "reconnecting") {
    banner.append(t("conn.banner.lost"));
    banner.dataset.kind = "warn";
    banner.hidden = false;
  } else if (status === "fatal") {
    banner.append(`${t("conn.banner.fatal", { why: cleanText(detail) })} `);
    const again = document.createElement("button");
    again.type = "button";
    again.textContent = t("conn.take_back");
    again.addEventListener("click", () => app.conn.restart());
    banner.append(again);
    banner.dataset.kind = "error";
    banner.hidden = false;
  } else {
    banner.hidden = true;
  }
  document.body.dataset.connection = status;
  render();
}

function onWelcome(welcome) {
  $("name-input").value = safeName(welcome.name, "");
  if (app.conn.renamed) {
    // Protocol 1.5: the session has its new name; the tables where we sit show it once we
    // join them again (the seat is ours already: join answers with it).
    app.conn.renamed = false;
    for (const [table, stream] of app.conn.session.tables) {
      if (stream.seat !== null && stream.seat !== undefined) {
        app.conn.call("join", { table, code: app.conn.codes[table] ?? null, contribution: null })
          .catch(() => {});
      }
    }
  }
  if (app.route.view === "replay") enterReplay(app);
  if (app.route.view === "profile") enterProfile(app);
  if (app.route.view === "table" && !app.conn.following(app.route.table)) {
    watch(app.route.table);
  }
  refreshLobby();
  render();
}

function onTableLost(table, code) {
  app.models.delete(table);
  if (app.route.view === "table" && app.route.table === table) {
    app.notice = t("table.lost", { why: errorSentence({ code }) });
    // Still worth a look as a spectator if it exists.
    watch(table);
  }
  render();
}

function onSessionLost() {
  app.models.clear();
  app.conn.account = null;   // a revoked or expired account session: a guest now (1.5)
  setLobbyNotice(t("session.lost"));
}

// ------------------------------------------------------------------ lobby data

let lobbyTimer = null;

async function refreshLobby(more = false) {
  if (!app.conn || app.conn.status !== "online") return;
  try {
    const result = await app.conn.call("list_tables", {
      cursor: more ? app.lobby.next : null, limit: 20 });
    const tables = Array.isArray(result.tables) ? result.tables : [];
    app.lobby.tables = more ? [...app.lobby.tables, ...tables] : tables;
    app.lobby.seats = Array.isArray(result.seats) ? result.seats : [];
    app.lobby.next = typeof result.next === "string" ? result.next : null;
    if (!app.lobby.loaded) performance.mark("aluette:lobby-ready"); // first paint of the list
    app.lobby.loaded = true;
    app.lobby.error = "";
    seatsRead(app);     // play now: seated while the page was away?
  } catch (err) {
    app.lobby.error = describe(err);
  }
  render();
}

function refreshLobbySoon() {
  clearTimeout(lobbyTimer);
  lobbyTimer = setTimeout(() => refreshLobby(), 300);
}

// The protocol has no lobby events: the list is polled while the lobby is on screen.
setInterval(() => {
  if (app.route.view === "lobby" && document.visibilityState === "visible") refreshLobby();
}, 5000);

// ------------------------------------------------------------------ messages

function describe(err) {
  if (err instanceof CommandFailed) {
    return err.reply ? errorSentence(err.reply) : t("error.dropped");
  }
  return String(err?.message ?? err);
}

function showError(err, where) {
  if (where === "lobby") setLobbyNotice(describe(err));
  else {
    app.notice = describe(err);
    render();
  }
}

function setLobbyNotice(text) {
  $("lobby-notice").textContent = text;
}

function setNotice(text) {
  app.notice = text;
  if (text) app.status = "";
  render();
}

function setStatus(text) {
  app.status = text;
  app.notice = "";
  render();
}

// ------------------------------------------------------------------ R8a: fair deals

/** Commands that carry our contribution to the next match's seed (protocol 1.3). */
const CONTRIBUTES = new Set(["join", "start", "rematch"]);
/** Tables we sat at before seeing their commitment, or that start by themselves
 *  (auto_start: no `start` of ours will carry it): we contribute once the head shows it. */
const oweContribution = new Set();

function modelOf(table) {
  if (!app.models.has(table)) app.models.set(table, new TableModel(table));
  return app.models.get(table);
}

/** A fresh contribution (R8a), remembered with the commitment we saw, so that the match's
 *  start can be checked against both (client_cli/app.py's _contribution). */
function contribution(table, seen = null) {
  const mine = newContribution();
  modelOf(table).contributing(mine, seen);
  return mine;
}

/** `fields` with our contribution, for a command that carries one. A join gives it only if
 *  we have seen the table's commitment (its page or the lobby's list); otherwise we owe it. */
function withContribution(type, fields) {
  const table = fields?.table;
  if (!CONTRIBUTES.has(type) || typeof table !== "string" || "contribution" in fields) {
    return fields;
  }
  if (type !== "join") return { ...fields, contribution: contribution(table) };
  const seen = app.models.get(table)?.info?.next_commitment
    ?? app.lobby.tables.find((t) => t?.table === table)?.next_commitment ?? null;
  if (typeof seen !== "string") {
    oweContribution.add(table);
    return fields;
  }
  return { ...fields, contribution: contribution(table, seen) };
}

/** We sit at `model`'s table and now see its commitment: send our contribution (`join`
 *  again, as the protocol allows), once. */
function contributeNow(model) {
  const info = model.info ?? {};
  if (model.seat === null || typeof info.next_commitment !== "string"
      || !["waiting", "finished"].includes(info.status)) return;
  oweContribution.delete(model.table);
  app.conn.call("join", { table: model.table, code: app.conn.codes[model.table] ?? null,
    contribution: contribution(model.table) }).catch(() => {});
}

/** Run a command from a button; errors are explained in words where the user looks. */
async function act(type, fields, where = "table") {
  try {
    const result = await app.conn.call(type, withContribution(type, fields));
    if (type === "create_table" && fields?.options?.auto_start
        && typeof result?.table === "string") {
      oweContribution.add(result.table);
      const model = app.models.get(result.table);
      if (model) contributeNow(model);
    }
    return result;
  } catch (err) {
    if (type === "join") oweContribution.delete(fields?.table);
    showError(err, where);
    return null;
  }
}

// ------------------------------------------------------------------ rendering

/** Render on the next microtask: every frame of a burst, but one DOM update. */
function render() {
  if (app.renderQueued) return;
  app.renderQueued = true;
  queueMicrotask(() => {
    app.renderQueued = false;
    const onTable = app.route.view === "table";
    const onReplay = app.route.view === "replay";
    const onProfile = app.route.view === "profile";
    document.body.dataset.view = onTable ? "table" : onReplay ? "replay"
      : onProfile ? "profile" : "lobby";
    renderAccount(app);
    renderMyProfileLink(app);
    $("lobby").hidden = onTable || onReplay || onProfile;
    $("table-view").hidden = !onTable;
    let title = "Aluette Online";
    if (onReplay) title = renderReplay(app);
    else if (onProfile) title = renderProfile(app);
    else if (onTable) {
      const model = app.models.get(app.route.table);
      if (model) title = renderTable(app, model);
    } else {
      renderLobby(app);
    }
    if (document.title !== title) document.title = title;
  });
}

// ------------------------------------------------------------------ start

function setupName(conn) {
  const form = $("name-form");
  const input = $("name-input");
  input.value = conn.name;
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const name = cleanText(input.value).slice(0, 32);
    if (!name) {
      input.setCustomValidity(t("name.invalid"));
      input.reportValidity();
      return;
    }
    input.setCustomValidity("");
    conn.rename(name);
  });
}

function defaultName() {
  const n = new Uint16Array(1);
  crypto.getRandomValues(n);
  return t("name.guest", { n: 1000 + (n[0] % 9000) });
}

function setupLanguage() {
  const select = $("lang-select");
  select.replaceChildren(...Object.entries(languages).map(([code, name]) => {
    const option = document.createElement("option");
    option.value = code;
    option.textContent = safeName(name, code);
    return option;
  }));
  select.value = language();
  select.addEventListener("change", async () => {
    await use(select.value, true);
    onStatus(app.conn.status, "");
    render();
  });
}

async function start() {
  await setupLanguages(new URL("..", import.meta.url).href.replace(/\/$/, ""));
  installDefs();
  setupLanguage();
  const conn = new Connection({ url: socketUrl(), onEvent, onStatus, onTableLost,
    onSessionLost, onWelcome });
  app.conn = conn;
  if (!conn.name) {
    conn.name = defaultName();
    conn.session.name = conn.name;
  }
  setupName(conn);
  setupAccount(app);
  setupLobby(app);
  setupTable(app);
  setupPlayNow(app);
  conn.onMatched = (matched) => onMatched(app, matched);   // play now (issue 27)
  document.addEventListener("click", (ev) => {
    // Same-page links (lobby, tables) without reloading the page.
    const a = ev.target.closest?.("a[href]");
    if (!a || a.target || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !(url.pathname === "/" || TABLE_PATH.test(url.pathname)
      || REPLAY_PATH.test(url.pathname) || PROFILE_PATH.test(url.pathname))) return;
    ev.preventDefault();
    navigate(url.pathname + url.hash);
  });
  addEventListener("popstate", () => navigate(location.pathname + location.hash, false));
  app.route = parseRoute();
  if (app.route.view === "replay") enterReplay(app);
  if (app.route.view === "profile") enterProfile(app);
  if (app.route.view === "table") {
    if (app.route.code) conn.codes[app.route.table] = app.route.code;
    app.models.set(app.route.table, new TableModel(app.route.table));
  }
  render();
  conn.start();
}

Object.assign(app, { act, describe, guestName: defaultName, navigate, refreshLobby, render, setLobbyNotice, setNotice,
  setStatus, showError, tableLink, watch });
start();
