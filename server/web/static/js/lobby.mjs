// The lobby: the tables (paginated list_tables), your tables, create, join with a code.

import { safeName } from "./cards.mjs";
import { fill, h } from "./dom.mjs";
import { t } from "./i18n.mjs";
import { replayLink } from "./replay.mjs";

const $ = (id) => document.getElementById(id);

/** TableOptions from the create form (docs/PROTOCOL.md, "Shared structures"). */
export function optionsFromForm(form) {
  const f = new FormData(form);
  const options = {
    chanter: f.get("chanter") === "on",
    partner_draw: f.get("partner_draw") === "on",
    mordienne: f.get("mordienne") === "on",
    signals: String(f.get("signals") ?? "private"),
    bot_level: String(f.get("bot_level") ?? "normal"),
    auto_start: f.get("auto_start") === "on",
    rated: f.get("rated") === "on",
  };
  if (f.get("hints") === "on") options.hints = true;
  const dealer = String(f.get("first_dealer") ?? "random");
  options.first_dealer = /^[0-3]$/.test(dealer) ? Number(dealer) : "random";
  const int = (name) => {
    const n = Number.parseInt(String(f.get(name) ?? ""), 10);
    return Number.isSafeInteger(n) ? n : null;
  };
  if (f.get("length") === "target") options.target_points = int("target_points") ?? 5;
  else options.deals = int("deals") ?? 5;
  const timer = int("turn_timer_s");
  if (timer !== null) options.turn_timer_s = timer;
  const grace = int("grace_s");
  if (grace !== null) options.grace_s = grace;
  return options;
}

/** "t1a2b", "http://host/t/t1a2b#code=K7Q2", "/t/t1a2b", or the terminal's invitation
 *  "join t1a2b K7Q2" (issue 31, item 7) -> {table, code}. */
export function parseTableRef(text) {
  let raw = String(text).trim();
  const words = raw.replace(/^`|`$/g, "").split(/\s+/);
  if (words[0] === "join" || words[0] === "watch") {
    const [, table = "", ...rest] = words;
    const code = rest.find((w) => !/^[0-3]$|^any$|^-$/.test(w)) ?? null;
    if (!table.includes("/")) return { table: table.slice(0, 64), code };
    raw = table;
  }
  try {
    const url = new URL(raw, location.href);
    const m = /^\/t\/([A-Za-z0-9_-]{1,64})$/.exec(url.pathname);
    if (m && raw.includes("/")) {
      const code = new URLSearchParams(url.hash.slice(1)).get("code");
      return { table: m[1], code };
    }
  } catch {
    // not a URL: an id
  }
  return { table: raw.slice(0, 64), code: null };
}

export function setupLobby(app) {
  $("refresh").addEventListener("click", () => app.refreshLobby());
  $("more").addEventListener("click", () => app.refreshLobby(true));
  const create = $("create-form");
  create.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = new FormData(create);
    const name = safeName(f.get("name"), "");
    const button = create.querySelector("button[type=submit]");
    button.disabled = true;
    const result = await app.act("create_table", {
      options: optionsFromForm(create), private: f.get("private") === "on",
      name: name || null }, "lobby");
    button.disabled = false;
    if (result && typeof result.table === "string") {
      if (typeof result.code === "string") app.conn.codes[result.table] = result.code;
      app.conn.follow(result.table);
      app.navigate(app.tableLink(result.table));
    }
  });
  const byCode = $("code-form");
  byCode.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = new FormData(byCode);
    const ref = parseTableRef(f.get("table") ?? "");
    const code = String(f.get("code") ?? "").trim() || ref.code || null;
    if (!ref.table) return;
    if (code) app.conn.codes[ref.table] = code;
    const watching = ev.submitter?.value === "watch";
    const result = await app.act(watching ? "spectate" : "join",
      { table: ref.table, code }, "lobby");
    if (result) {
      // A start of an id is resolved by the server (protocol 1.5): the result names it.
      const table = typeof result.table === "string" ? result.table : ref.table;
      if (code) app.conn.codes[table] = code;
      app.navigate(app.tableLink(table));
    }
  });
}

function optionsText(info) {
  const o = info.options ?? {};
  const parts = [o.target_points ? t("meta.target", { target: o.target_points })
    : t("meta.deals", { n: o.deals ?? 5 })];
  if (o.chanter) parts.push(t("meta.chanter"));
  if (o.partner_draw) parts.push(t("meta.partner_draw"));
  parts.push(t(`meta.signals.${["private", "risky", "off"].includes(o.signals) ? o.signals : "private"}`));
  if (o.turn_timer_s) parts.push(t("meta.timer", { n: o.turn_timer_s }));
  if (o.hints) parts.push(t("meta.hints"));
  parts.push(t("meta.bots", { level: t(`level.${safeName(o.bot_level, "normal")}`) }));
  if (info.private) parts.push(t("meta.private"));
  if (info.spectators) parts.push(t("meta.watching", { n: info.spectators }));
  return parts.join(" · ");
}

function seatText(s) {
  if (!s || s.kind === "empty") return t("lobby.seat.empty");
  if (s.kind === "bot") return t("lobby.seat.bot", { level: t(`level.${safeName(s.level, "normal")}`) });
  return safeName(s.name) + (s.bot ? ` ${t("lobby.seat.program")}` : "")
    + (s.connected ? "" : ` ${t("lobby.seat.away")}`);
}

const STATUSES = ["waiting", "playing", "finished", "abandoned"];

function tableEntry(app, info, mySeat) {
  const table = String(info.table);
  const name = safeName(info.name, t("table.untitled", { id: table.slice(0, 8) }));
  const status = STATUSES.includes(info.status) ? info.status : "waiting";
  const seats = Array.isArray(info.seats) ? info.seats : [];
  const waiting = status === "waiting";
  return h("li", { class: "table-entry", dataset: { table } },
    h("div", { class: "t-head" },
      h("a", { href: app.tableLink(table), class: "t-name" }, name),
      h("span", { class: ["badge", `status-${status}`] }, t(`status.${status}`)),
      info.options?.rated === true ? h("span", { class: "badge rated" }, t("badge.rated")) : null,
      mySeat !== undefined ? h("span", { class: "badge mine" }, t("lobby.your_seat", { seat: mySeat })) : null),
    h("div", { class: "t-options muted" }, optionsText(info)),
    h("ol", { class: "t-seats", start: "0" }, seats.map((s, i) => h("li", {},
      h("span", { class: s?.kind === "empty" ? "muted" : "" }, seatText(s)),
      waiting && s?.kind === "empty" && mySeat === undefined
        ? h("button", { type: "button", class: "small", "aria-label": t("lobby.sit.label", { seat: i, name }),
          onclick: async () => {
            const ok = await app.act("join", { table, seat: i, code: app.conn.codes[table] ?? null },
              "lobby");
            if (ok) app.navigate(app.tableLink(table));
          } }, t("seat.sit"))
        : null))),
    h("div", { class: "row" },
      mySeat !== undefined
        ? h("a", { href: app.tableLink(table), class: "button primary" }, t("lobby.back_to_seat"))
        : h("a", { href: app.tableLink(table), class: "button" },
          waiting ? t("lobby.open") : t("lobby.watch")),
      // A finished match you played (issue 28): its replay, from the lobby's history.
      status === "finished" ? h("a", { href: replayLink(table, info.match ?? null,
        info.private ? app.conn.codes[table] ?? null : null),
        class: "button", dataset: { key: `replay-${table}` } }, t("match.replay")) : null));
}

export function renderLobby(app) {
  const mine = new Map();
  for (const s of app.lobby.seats) {
    if (s && typeof s.table === "string") mine.set(s.table, s.seat);
  }
  const list = $("tables");
  list.setAttribute("aria-busy", app.lobby.loaded ? "false" : "true");
  if (!app.lobby.loaded) {
    fill(list, h("li", { class: "muted" }, app.lobby.error || t("lobby.loading")));
  } else if (!app.lobby.tables.length) {
    fill(list, h("li", { class: "muted" }, t("lobby.none")));
  } else {
    fill(list, app.lobby.tables.map((info) => tableEntry(app, info, mine.get(info.table))));
  }
  $("more").hidden = !app.lobby.next;
  // Tables we sit at or watch (from list_tables' seats and our own models).
  const ours = new Map();
  for (const [table, seat] of mine) ours.set(table, t("lobby.mine.seat", { seat }));
  for (const [table, model] of app.models) {
    if (!ours.has(table) && app.conn.following(table)) {
      ours.set(table, model.seat === null ? t("lobby.mine.watching") : t("lobby.mine.seat", { seat: model.seat }));
    }
  }
  $("my-tables").hidden = ours.size === 0;
  fill($("my-tables-list"), [...ours].map(([table, what]) => {
    const model = app.models.get(table);
    const name = safeName(model?.info?.name, t("table.untitled", { id: table.slice(0, 8) }));
    return h("li", {}, h("a", { href: app.tableLink(table) }, name), ` (${what})`);
  }));
}
