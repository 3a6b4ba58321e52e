// The lobby: the tables (paginated list_tables), your tables, create, join with a code.

import { safeName } from "./cards.mjs";
import { fill, h } from "./dom.mjs";

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
  };
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
  return options;
}

/** "t1a2b", "http://host/t/t1a2b#code=K7Q2" or "/t/t1a2b" -> {table, code}. */
export function parseTableRef(text) {
  const raw = String(text).trim();
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
    if (result) app.navigate(app.tableLink(ref.table));
  });
}

function optionsText(info) {
  const o = info.options ?? {};
  const parts = [o.target_points ? `first to ${o.target_points} points`
    : `${o.deals ?? 5} deal${o.deals === 1 ? "" : "s"}`];
  if (o.chanter) parts.push("chanter");
  if (o.partner_draw) parts.push("partner draw");
  parts.push(`signals ${safeName(o.signals, "private")}`);
  if (o.turn_timer_s) parts.push(`${o.turn_timer_s} s turns`);
  parts.push(`bots ${safeName(o.bot_level, "normal")}`);
  if (info.private) parts.push("private");
  if (info.spectators) parts.push(`${info.spectators} watching`);
  return parts.join(" · ");
}

function seatText(s) {
  if (!s || s.kind === "empty") return "empty";
  if (s.kind === "bot") return `bot (${safeName(s.level, "normal")})`;
  return safeName(s.name) + (s.connected ? "" : " (away)");
}

function tableEntry(app, info, mySeat) {
  const table = String(info.table);
  const name = safeName(info.name, `Table ${table.slice(0, 8)}`);
  const status = safeName(info.status, "waiting");
  const seats = Array.isArray(info.seats) ? info.seats : [];
  const waiting = status === "waiting";
  return h("li", { class: "table-entry", dataset: { table } },
    h("div", { class: "t-head" },
      h("a", { href: app.tableLink(table), class: "t-name" }, name),
      h("span", { class: ["badge", `status-${status}`] }, status),
      mySeat !== undefined ? h("span", { class: "badge mine" }, `you: seat ${mySeat}`) : null),
    h("div", { class: "t-options muted" }, optionsText(info)),
    h("ol", { class: "t-seats", start: "0" }, seats.map((s, i) => h("li", {},
      h("span", { class: s?.kind === "empty" ? "muted" : "" }, seatText(s)),
      waiting && s?.kind === "empty" && mySeat === undefined
        ? h("button", { type: "button", class: "small", "aria-label": `Sit in seat ${i} at ${name}`,
          onclick: async () => {
            const ok = await app.act("join", { table, seat: i, code: app.conn.codes[table] ?? null },
              "lobby");
            if (ok) app.navigate(app.tableLink(table));
          } }, "Sit here")
        : null))),
    h("div", { class: "row" },
      mySeat !== undefined
        ? h("a", { href: app.tableLink(table), class: "button primary" }, "Back to your seat")
        : h("a", { href: app.tableLink(table), class: "button" },
          waiting ? "Open" : "Watch")));
}

export function renderLobby(app) {
  const mine = new Map();
  for (const s of app.lobby.seats) {
    if (s && typeof s.table === "string") mine.set(s.table, s.seat);
  }
  const list = $("tables");
  list.setAttribute("aria-busy", app.lobby.loaded ? "false" : "true");
  if (!app.lobby.loaded) {
    if (app.lobby.error) fill(list, h("li", { class: "muted" }, app.lobby.error));
  } else if (!app.lobby.tables.length) {
    fill(list, h("li", { class: "muted" }, "No tables yet: create one below."));
  } else {
    fill(list, app.lobby.tables.map((info) => tableEntry(app, info, mine.get(info.table))));
  }
  $("more").hidden = !app.lobby.next;
  // Tables we sit at or watch (from list_tables' seats and our own models).
  const ours = new Map();
  for (const [table, seat] of mine) ours.set(table, `seat ${seat}`);
  for (const [table, model] of app.models) {
    if (!ours.has(table) && app.conn.following(table)) {
      ours.set(table, model.seat === null ? "watching" : `seat ${model.seat}`);
    }
  }
  $("my-tables").hidden = ours.size === 0;
  fill($("my-tables-list"), [...ours].map(([table, what]) => {
    const model = app.models.get(table);
    const name = safeName(model?.info?.name, `Table ${table.slice(0, 8)}`);
    return h("li", {}, h("a", { href: app.tableLink(table) }, name), ` (${what})`);
  }));
}
