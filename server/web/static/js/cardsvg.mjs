// The game's own cards, drawn in SVG: Spanish suits (oros coins, copas cups, bastos batons,
// espadas swords, R2), each a different shape as well as a different colour (colour-blind
// safe), the rank in two corners, pips for 1-9, a figure for Valet, Cavalière and Roi, and a
// ribbon with its name and an emblem for each named card of R3 (Monsieur, Madame, Le
// Borgne, La Vache...). The shapes are defined once in the page (<symbol>s, `installDefs`)
// and every face is a few <use> of them, so 48 faces weigh a few KiB. Built with
// createElementNS only: no markup is ever parsed. The face is aria-hidden: the card's
// element carries its name for screen readers (cards.mjs cardLabel).

const NS = "http://www.w3.org/2000/svg";

function el(tag, attrs = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

/** Each suit's sign, drawn in a 20x20 box centred on 0,0 (fill: currentColor). */
const SUIT_PATHS = {
  // oros: a coin, a ring with a centre
  o: [["circle", { r: 9, fill: "currentColor" }], ["circle", { r: 6, fill: "none", stroke: "#fff", "stroke-width": 1.6 }],
    ["circle", { r: 2, fill: "#fff" }]],
  // copas: a goblet
  c: [["path", { d: "M-8 -9 H8 C8 -1 4 3 1.5 3 V6 H5 V9 H-5 V6 H-1.5 V3 C-4 3 -8 -1 -8 -9 Z", fill: "currentColor" }]],
  // bastos: a knotted club, thick at the top
  b: [["path", { d: "M-2.5 9 L-4.5 -6 C-5 -10 5 -10 4.5 -6 L2.5 9 Z", fill: "currentColor" }],
    ["circle", { cx: -4, cy: -1, r: 1.8, fill: "currentColor" }], ["circle", { cx: 3.8, cy: 2, r: 1.6, fill: "currentColor" }]],
  // espadas: a straight sword, point up, with a cross-guard
  e: [["path", { d: "M0 -10 L2.2 -6 V4 H-2.2 V-6 Z", fill: "currentColor" }],
    ["rect", { x: -6, y: 3.5, width: 12, height: 2.2, rx: 1, fill: "currentColor" }],
    ["rect", { x: -1.4, y: 5.5, width: 2.8, height: 4.5, fill: "currentColor" }]],
};

/** Figures (Valet: a page standing; Cavalière: a horse's head; Roi: a crown), 24x24. */
const FIGURES = {
  V: "M0 -11 A3.5 3.5 0 1 1 0 -4 A3.5 3.5 0 1 1 0 -11 Z M-6 11 L-4 -2 H4 L6 11 H2 L0 3 L-2 11 Z",
  C: "M-7 11 L-5 1 C-8 -1 -8 -6 -3 -9 L1 -12 L2 -9 C7 -8 9 -3 8 1 L5 0 L3 4 L5 11 Z",
  R: "M-9 6 L-10 -7 L-5 -2 L0 -10 L5 -2 L10 -7 L9 6 Z M-9 8 H9 V11 H-9 Z",
};

/** R3's named cards: an emblem each (drawn in a 16x16 box), shown with the name. */
const EMBLEMS = {
  "3o": "M-7 5 H7 V7 H-7 Z M-4 5 V-5 H4 V5 Z",                                  // Monsieur: a top hat
  "3c": "M-7 5 L-7 -4 L-3.5 0 L0 -6 L3.5 0 L7 -4 L7 5 Z",                         // Madame: a coronet
  "2o": "M-7 -4 L7 4 M-6 0 A6 4 0 1 0 6 0 A6 4 0 1 0 -6 0 Z",                     // Le Borgne: an eye, crossed
  "2c": "M-7 -6 C-5 -1 -3 -2 -3 1 C-3 6 3 6 3 1 C3 -2 5 -1 7 -6 C4 -3 2 -3 0 -3 C-2 -3 -4 -3 -7 -6 Z", // La Vache: horns and muzzle
  "9c": "M0 -7 L2 -2 L7 -2 L3 1 L4.5 6 L0 3 L-4.5 6 L-3 1 L-7 -2 L-2 -2 Z",        // Grand-neuf: a big star
  "9o": "M0 -4 L1.2 -1.2 L4 -1.2 L1.8 0.6 L2.6 3.6 L0 1.8 L-2.6 3.6 L-1.8 0.6 L-4 -1.2 L-1.2 -1.2 Z", // Petit-neuf: a small star
  "2b": "M0 -7 C5 -5 6 1 0 7 C-6 1 -5 -5 0 -7 Z M0 -5 V7",                          // Deux de chêne: an oak leaf
  "2e": "M-6 7 L6 -7 L4 -2 Z M-6 7 L-3 2",                                          // Deux d'écrit: a quill
};

const PIPS = {
  1: [[32, 48]],
  2: [[32, 27], [32, 69]],
  3: [[32, 25], [32, 48], [32, 71]],
  4: [[21, 29], [43, 29], [21, 67], [43, 67]],
  5: [[21, 29], [43, 29], [32, 48], [21, 67], [43, 67]],
  6: [[21, 27], [43, 27], [21, 48], [43, 48], [21, 69], [43, 69]],
  7: [[21, 27], [43, 27], [32, 37.5], [21, 48], [43, 48], [21, 69], [43, 69]],
  8: [[21, 27], [43, 27], [32, 37.5], [21, 48], [43, 48], [32, 58.5], [21, 69], [43, 69]],
  9: [[19, 27], [32, 27], [45, 27], [19, 48], [32, 48], [45, 48], [19, 69], [32, 69], [45, 69]],
};

/** The shared shapes, once per page (hidden). */
export function installDefs(doc = document) {
  if (doc.getElementById("card-defs")) return;
  const defs = el("defs");
  for (const [suit, parts] of Object.entries(SUIT_PATHS)) {
    defs.append(el("symbol", { id: `suit-${suit}`, viewBox: "-10 -10 20 20", overflow: "visible" },
      ...parts.map(([tag, attrs]) => el(tag, attrs))));
  }
  for (const [rank, d] of Object.entries(FIGURES)) {
    defs.append(el("symbol", { id: `fig-${rank}`, viewBox: "-12 -12 24 24" },
      el("path", { d, fill: "currentColor" })));
  }
  for (const [card, d] of Object.entries(EMBLEMS)) {
    defs.append(el("symbol", { id: `emb-${card}`, viewBox: "-8 -8 16 16", overflow: "visible" },
      el("path", { d, fill: "currentColor", stroke: "currentColor", "stroke-width": 1.2,
        "stroke-linejoin": "round" })));
  }
  const svg = el("svg", { id: "card-defs", width: 0, height: 0, "aria-hidden": "true",
    focusable: "false", class: "card-defs" }, defs);
  doc.body.prepend(svg);
}

const use = (id, x, y, size) => el("use", { href: `#${id}`, x: x - size / 2, y: y - size / 2,
  width: size, height: size });

/**
 * One face: a 64x96 SVG. `name` is the named card's name (R3) or null; `shortName` what
 * fits on its ribbon.
 */
export function cardSvg(code, name = null) {
  const rank = code[0];
  const suit = code[1];
  const svg = el("svg", { viewBox: "0 0 64 96", class: `face suit-${suit}`, "aria-hidden": "true",
    focusable: "false" });
  svg.append(el("rect", { x: 0.75, y: 0.75, width: 62.5, height: 94.5, rx: 6, class: "face-bg" }));
  if (name) svg.append(el("rect", { x: 3, y: 3, width: 58, height: 90, rx: 4.5, class: "face-named" }));
  const corner = (x, y, rotate) => {
    const g = el("g", { class: "corner-mark", transform: rotate ? `rotate(180 32 48)` : "" },
      el("text", { x, y, "text-anchor": "middle", class: "rank" }, rank),
      use(`suit-${suit}`, x, y + 9, 10));
    return g;
  };
  svg.append(corner(10, 19, false), corner(10, 19, true));
  const art = el("g", { class: "art" });
  if (PIPS[rank]) {
    const size = rank === "1" ? 30 : Number(rank) >= 7 ? 12 : 14;
    for (const [x, y] of PIPS[rank]) art.append(use(`suit-${suit}`, x, y, size));
  } else {
    art.append(use(`fig-${rank}`, 32, 42, 34), use(`suit-${suit}`, 32, 70, 16));
  }
  svg.append(art);
  if (name) {
    svg.append(el("rect", { x: 3, y: 76, width: 58, height: 17, rx: 3, class: "ribbon" }));
    svg.append(el("use", { href: `#emb-${code}`, x: 5, y: 78.5, width: 12, height: 12, class: "emblem" }));
    const words = name.length > 9 ? name.replace(/^(Le|La|Deux) /, "") : name;
    svg.append(el("text", { x: 39, y: 88.5, "text-anchor": "middle", class: "ribbon-text",
      textLength: Math.min(40, words.length * 5.4), lengthAdjust: "spacingAndGlyphs" }, words));
  }
  return svg;
}
