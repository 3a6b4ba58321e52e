// Building the page from data, safely: every string becomes a text node (never HTML), so a
// player called "<img src=x onerror=alert(1)>" is shown as those characters. Nothing in this
// client turns a string into markup (no HTML-parsing DOM API is used anywhere):
// tests/web/test_http.py greps the modules for every such API.

import { MAJEURES, cardLabel } from "./cards.mjs";
import { cardSvg } from "./cardsvg.mjs";

/**
 * h("button", {class: "x", onclick: fn, "aria-label": "..."}, "text", child...)
 * Attributes are set with setAttribute (values are plain strings), "on*" keys become
 * listeners, `dataset` sets data-*; children are nodes or strings (as text).
 */
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key === "dataset") {
      for (const [k, v] of Object.entries(value)) node.dataset[k] = String(v);
    } else if (key === "class") {
      node.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : String(value);
    } else if (value === true) {
      node.setAttribute(key, "");
    } else {
      node.setAttribute(key, String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace a container's content, keeping the keyboard focus on "the same" control. */
export function fill(container, ...children) {
  const active = document.activeElement;
  const key = active && container.contains(active) ? active.dataset.key : undefined;
  const index = key !== undefined ? [...container.querySelectorAll("[data-key]")].indexOf(active)
    : -1;
  container.replaceChildren();
  append(container, children);
  if (key !== undefined) {
    const keyed = [...container.querySelectorAll("[data-key]")];
    const again = keyed.find((n) => n.dataset.key === key)
      ?? keyed[Math.min(index, keyed.length - 1)];
    if (again && !again.disabled) again.focus();
    else if (keyed.length) keyed.find((n) => !n.disabled)?.focus();
  }
}

export function show(node, visible) {
  node.hidden = !visible;
}

/**
 * A card's face: the game's own drawing (cardsvg.mjs: Spanish suit signs, the rank in the
 * corners, R3's named cards with their name), its number in the hand when given, and its
 * name for screen readers (aria-label). `data-card` carries the code (tests read it).
 */
export function cardFace(code, { tag = "span", extra = {}, number = null, small = false } = {}) {
  const named = MAJEURES[code]?.[1] ?? null;
  // A button is named by its content (a hidden sentence; the drawing is aria-hidden), so
  // that its accessible name never leaves out what it shows; a picture by its aria-label.
  const { "aria-label": label = cardLabel(code), ...rest } = extra;
  const button = tag === "button";
  return h(tag, {
    class: ["card", `suit-${code[1]}`, small && "small", named && "named"],
    "aria-label": button ? null : label,
    role: button ? null : "img",
    ...rest,
    dataset: { ...(extra.dataset ?? {}), card: code },
  },
  cardSvg(code, named),
  button ? h("span", { class: "visually-hidden" }, label) : null,
  number !== null ? h("span", { class: "num", "aria-hidden": "true" }, String(number)) : null);
}
