// The interface's words, from message catalogues (locales/<language>.json, shared with the
// terminal client): one JSON object per language, keys to texts with {name} placeholders;
// a text that depends on a number is {"one": ..., "other": ...} (CLDR plural categories,
// chosen by Intl.PluralRules). Adding a language is adding one file: the server lists the
// files it has (locales/index.json) and the page offers them.
//
// The language follows the browser (navigator.languages) unless the player chose one
// (remembered in localStorage). A key missing from a catalogue falls back to English, then
// to the key itself, so a half-translated catalogue still works.

const STORE = "aluette.lang";
let base = "";
let lang = "en";
let words = {};
let english = {};
let plurals = new Intl.PluralRules("en");
/** code -> name of every language the server has, e.g. {en: "English", fr: "Français"} */
export let languages = { en: "English" };

export const language = () => lang;

/** The text of `key`, its {placeholders} filled from `params` ({n} also picks a plural). */
export function t(key, params = {}) {
  let text = words[key] ?? english[key];
  if (text === undefined) return key;
  if (typeof text === "object" && text !== null) {
    const n = Number(params.n ?? 0);
    text = text[plurals.select(n)] ?? text.other ?? Object.values(text)[0];
  }
  return String(text).replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

async function load(code) {
  const res = await fetch(`${base}/locales/${code}.json`);
  if (!res.ok) throw new Error(`no catalogue for ${code}`);
  return res.json();
}

/** The language to use: the player's choice, else the browser's first one we have. */
export function preferred(available, stored = null, browser = navigator.languages ?? []) {
  if (stored && stored in available) return stored;
  for (const tag of browser) {
    const code = String(tag).toLowerCase().split("-")[0];
    if (code in available) return code;
  }
  return "en";
}

/** Use catalogues already in hand (the node tests read them from disk). */
export function install(code, catalogue, englishCatalogue = catalogue) {
  english = englishCatalogue;
  words = catalogue;
  lang = code;
  plurals = new Intl.PluralRules(code);
}

/** Load the catalogues (once, at start): `staticBase` is where the assets are served. */
export async function setup(staticBase) {
  base = staticBase;
  try {
    const index = await (await fetch(`${base}/locales/index.json`)).json();
    if (index && typeof index === "object") languages = index;
  } catch {
    // only English then
  }
  let stored = null;
  try {
    stored = localStorage.getItem(STORE);
  } catch {
    // storage disabled
  }
  english = await load("en").catch(() => ({}));
  await use(preferred(languages, stored));
}

/** Switch the language (and remember the choice when `remember`). */
export async function use(code, remember = false) {
  if (!(code in languages)) code = "en";
  words = code === "en" ? english : await load(code).catch(() => english);
  lang = code;
  plurals = new Intl.PluralRules(code);
  document.documentElement.lang = code;
  if (remember) {
    try {
      localStorage.setItem(STORE, code);
    } catch {
      // storage disabled: the choice lasts this page
    }
  }
  translateStatic(document);
}

/** The page's own fixed words: data-i18n (text), data-i18n-label (aria-label),
 *  data-i18n-placeholder, data-i18n-title. */
export function translateStatic(root) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-label]")) {
    el.setAttribute("aria-label", t(el.dataset.i18nLabel));
  }
  for (const el of root.querySelectorAll("[data-i18n-placeholder]")) {
    el.setAttribute("placeholder", t(el.dataset.i18nPlaceholder));
  }
  for (const el of root.querySelectorAll("[data-i18n-title]")) el.title = t(el.dataset.i18nTitle);
}
