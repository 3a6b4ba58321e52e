// Parts of the table screen added for issue 28, kept apart from table.mjs so that each
// stays small: the match's full fair-deal commitment with a button that copies it (all 64
// digits, what `aluette-record verify --commitment` takes), the expert's hint at a table
// whose options allow it (protocol 1.5 `hint`), and the end screen's link to the match's
// replay (replay.mjs). Each part makes its own node next to a node of index.html.

import { cardName, isCard } from "./cards.mjs";
import { h, fill } from "./dom.mjs";
import { language, t } from "./i18n.mjs";
import { replayLink } from "./replay.mjs";

const $ = (id) => document.getElementById(id);
const ACTING = new Set(["play", "chanter_vote", "chanter_discard"]);

/** A node of ours right after index.html's `after` (made once). */
function slot(id, after, attrs = {}) {
  let node = $(id);
  if (!node) {
    node = h("div", { id, ...attrs });
    $(after).after(node);
  }
  return node;
}

/** The commitment of the match on the table (or, before it starts, the next one's). */
export const commitmentOf = (model) => {
  const c = model.commitment ?? model.info?.next_commitment ?? null;
  return typeof c === "string" && /^[0-9a-f]{64}$/.test(c) ? c : null;
};

async function copyCommitment(app, box) {
  box.select();
  try {
    await navigator.clipboard.writeText(box.value);
    app.setStatus(t("fair.copied"));
  } catch {
    app.setStatus(t("fair.copy_box"));
  }
}

/** R8a: the full commitment in a read-only box, and a button that copies it. */
function renderCommitment(app, model) {
  const node = slot("fair-copy", "fair-note", { class: "fair-copy row" });
  const commitment = commitmentOf(model);
  node.hidden = commitment === null;
  // Drawn again for another commitment, or in another language.
  const key = `${language()}:${commitment ?? ""}`;
  if (node.dataset.shown === key) return;
  node.dataset.shown = key;
  if (commitment === null) {
    fill(node);
    return;
  }
  const box = h("input", { id: "commitment-box", class: "commitment", readonly: true,
    value: commitment, spellcheck: "false", "aria-label": t("fair.commitment.label") });
  fill(node, box, h("button", { type: "button", class: "small", dataset: { key: "copy-commitment" },
    onclick: () => copyCommitment(app, box) }, t("fair.copy")));
}

/** What the hint said, in words (the result of protocol `hint`). */
export function hintText(result) {
  const preferred = String(result?.preferred ?? "");
  let text;
  if (result?.phase === "chanter_vote") {
    text = t("hint.vote", { choice: preferred === "yes" ? t("yes") : t("no") });
  } else if (result?.phase === "chanter_discard") {
    text = t("hint.discard", { cards: preferred.split(" ").filter(isCard).map(cardName).join(", ") });
  } else {
    text = t("hint.card", { card: isCard(preferred) ? `${cardName(preferred)} (${preferred})` : preferred });
  }
  const valued = (result?.choices ?? []).filter((c) => typeof c?.value === "number");
  if (valued.length) {
    const list = valued.map((c) => {
      const choice = String(c.choice);
      const name = choice === "yes" || choice === "no" ? t(choice) : isCard(choice) ? choice
        : choice.slice(0, 20);
      return `${name} ${c.value >= 0 ? "+" : "−"}${Math.abs(c.value).toFixed(2)}`;
    });
    text += ` ${t("hint.values", { list: list.join(", ") })}`;
  }
  return text;
}

/** Options.hints: on our turn, a button asking what the expert would do, and its answer. */
function renderHint(app, model) {
  const node = slot("hint-box", "actions", { class: "hint-box" });
  const v = model.view;
  const on = Boolean(model.info?.options?.hints) && model.seat !== null
    && model.status === "playing" && v && ACTING.has(v.phase) && v.to_act === model.seat;
  const hint = app.hint?.table === model.table && app.hint.turnAt === model.turnAt
    ? app.hint : null;
  const key = on ? `${language()}:${model.turnAt}:${hint?.text ?? (hint ? "…" : "")}` : "";
  if (node.dataset.shown === key) return;
  node.dataset.shown = key;
  node.hidden = !on;
  if (!on) {
    fill(node);
    return;
  }
  const ask = async () => {
    const asked = { table: model.table, turnAt: model.turnAt, text: null };
    app.hint = asked;
    app.render();
    const result = await app.act("hint", { table: model.table });
    if (app.hint === asked) {
      asked.text = result ? hintText(result) : "";
      app.render();
    }
  };
  fill(node, h("button", { type: "button", dataset: { key: "hint" }, disabled: Boolean(hint && !hint.text),
    onclick: ask }, t("hint.button")),
  h("p", { class: "hint-text", role: "status", "aria-live": "polite" },
    hint ? hint.text ?? t("hint.wait") : ""));
}

/** The end screen's link to the match's replay (a private table's carries its code). */
export function replayPart(app, model) {
  const match = model.match || model.info?.match || null;
  const code = model.info?.private ? app.conn.codes[model.table] ?? null : null;
  return h("p", {}, h("a", { href: replayLink(model.table, match, code), class: "button",
    dataset: { key: "replay" } }, t("match.replay")), " ",
  h("a", { href: "/r/", dataset: { key: "replay-file" } }, t("replay.file.open")));
}

/** table.mjs's renderTable: draw the parts of this module. */
export function renderExtras(app, model) {
  renderCommitment(app, model);
  renderHint(app, model);
}
