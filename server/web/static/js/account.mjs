// Accounts (protocol 1.5, issue 27): sign up, log in, log out, and the name shown; on your
// own profile page, change the password and log out everywhere.
//
// A guest who signs up keeps the session (its player id, seats and matches): `register`.
// Logging in makes this page speak for the account from then on: `login` answers with this
// device's own session token, which replaces the guest's (and is remembered like any
// token). Passwords go in the command and nowhere else: never kept in localStorage (the
// account commands are never resent after a drop, so they are never stored as pending),
// never put in the page after the form is sent.

import { cleanText, errorSentence, safeName } from "./cards.mjs";
import { t } from "./i18n.mjs";

const $ = (id) => document.getElementById(id);

let mode = null;   // "signup" | "login" while the form is open

function openForm(app, which) {
  mode = which;
  const form = $("account-form");
  form.hidden = false;
  $("account-form-title").textContent = t(`account.${which}.title`);
  $("account-submit").textContent = t(`account.${which}`);
  $("account-password").autocomplete = which === "signup" ? "new-password" : "current-password";
  $("account-password").minLength = which === "signup" ? 8 : 1;
  $("account-error").textContent = "";
  const user = $("account-user");
  if (which === "signup" && !user.value) user.value = app.conn.session.name ?? "";
  user.focus();
}

function closeForm() {
  mode = null;
  $("account-form").hidden = true;
  $("account-password").value = "";
  $("account-error").textContent = "";
}

async function submit(app) {
  const name = cleanText($("account-user").value).slice(0, 32);
  const password = $("account-password").value;
  const which = mode;
  if (!name || !password) return;
  $("account-password").value = "";          // not kept in the page once sent
  const conn = app.conn;
  try {
    await conn.online();                     // not on a connection a logout is closing
    if (which === "signup") {
      const made = await conn.call("register", { name, password });
      conn.account = String(made.account);
      conn.name = safeName(made.name, name);
      conn.session.name = conn.name;
    } else {
      const result = await conn.call("login", { name, password });
      conn.session.token = String(result.session);
      conn.session.playerId = String(result.player_id);
      conn.account = String(result.account);
      conn.name = safeName(result.name, name);
      conn.session.name = conn.name;
    }
    conn.save();
    closeForm();
    app.setStatus(t(which === "signup" ? "account.signed_up" : "account.logged_in",
      { name: conn.name }));
    app.refreshLobby();
  } catch (err) {
    const code = err?.reply?.code;
    $("account-error").textContent = code === "wrong_phase" ? t("account.leave_tables")
      : err?.reply ? errorSentence(err.reply)
        : t("error.other", { message: String(err?.message ?? "") });
  }
  app.render();
}

/** This page speaks for a guest again (its session was ended: the server closes this
 *  connection with 4002, and the next hello is a new guest's). `ended`: the server said so
 *  (the page reconnects at once, without the token). */
function becomeGuest(app, status, ended) {
  const conn = app.conn;
  conn.session.token = null;
  conn.account = null;
  conn.name = app.guestName();
  conn.session.name = conn.name;
  conn.save();
  if (ended) conn.reconnectNow();
  app.setStatus(t(status));
  app.render();
}

async function logout(app) {
  let ended = true;
  try {
    await app.conn.call("logout");
  } catch (err) {
    if (err?.reply?.code !== "not_registered") {
      app.setLobbyNotice(err?.reply ? errorSentence(err.reply) : t("session.lost"));
      return;
    }
    ended = false;                            // a guest's already: nothing was ended
  }
  becomeGuest(app, "account.logged_out", ended);
}

function settingsNote(text) {
  $("account-settings-note").textContent = text;
}

function failure(err) {
  return err?.reply ? errorSentence(err.reply) : t("error.other", { message: String(err?.message ?? "") });
}

async function changePassword(app) {
  const old = $("password-old").value;
  const fresh = $("password-new").value;
  if (!old || fresh.length < 8) return;
  $("password-old").value = "";              // not kept in the page once sent
  $("password-new").value = "";
  try {
    const done = await app.conn.call("change_password", { old_password: old, new_password: fresh });
    settingsNote(t("account.passwd.done", { n: Number(done?.revoked) || 0 }));
  } catch (err) {
    settingsNote(failure(err));
  }
}

async function logoutAll(app) {
  try {
    await app.conn.call("logout_all");
  } catch (err) {
    settingsNote(failure(err));
    return;
  }
  settingsNote("");
  becomeGuest(app, "account.logged_out_all", true);
}

export function setupAccount(app) {
  $("signup-open").addEventListener("click", () => openForm(app, "signup"));
  $("login-open").addEventListener("click", () => openForm(app, "login"));
  $("account-cancel").addEventListener("click", closeForm);
  $("logout").addEventListener("click", () => logout(app));
  $("account-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    submit(app);
  });
  $("password-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    changePassword(app);
  });
  $("logout-all").addEventListener("click", () => logoutAll(app));
}

/** Whether the page shows the profile of the account this page speaks for. */
function ownProfile(app) {
  const account = app.conn?.account ?? null;
  const name = app.route?.view === "profile" ? String(app.route.name ?? "") : null;
  if (account === null || name === null) return false;
  return name === app.conn.session.name || name.normalize("NFKC").toLowerCase() === account;
}

/** The top bar: the account's name and "Log out", or "Sign up" and "Log in". */
export function renderAccount(app) {
  const account = app.conn?.account ?? null;
  const shown = $("account-name");
  shown.hidden = account === null;
  shown.textContent = account === null ? ""
    : t("account.as", { name: safeName(app.conn.session.name ?? app.conn.name, "") });
  $("logout").hidden = account === null;
  $("signup-open").hidden = account !== null;
  $("login-open").hidden = account !== null;
  $("name-form").hidden = account !== null;   // an account's name is its own
  const settings = $("account-settings");
  const mine = ownProfile(app);
  if (settings.hidden === mine) {
    settings.hidden = !mine;
    if (!mine) settingsNote("");
  }
}
