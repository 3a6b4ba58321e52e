// The browser's connection: a WebSocket driven by the sans-I/O ClientSession, kept alive,
// healed after any drop, and remembered in localStorage so a reload takes the seat back.
//
// What survives a reload (localStorage, one key): the player's name, the newest session
// token (it rotates at every welcome), the command counter (ids are unique for the whole
// session, so a reloaded page must not start again at 1), the commands still waiting for a
// reply (resent with their original ids), and the tables we follow. A reloaded page knows
// nothing of those tables' state, so it resumes each one with last_seq = 2^53 - 1, which the
// protocol answers with a fresh snapshot; a page that only lost its connection resumes from
// its last seq and gets the missed events replayed.

import { safeName } from "./cards.mjs";
import { ClientSession, FRESH } from "./session.mjs";

const STORAGE_KEY = "aluette.session.v1";
/** Seconds between reconnection attempts, then the last value, forever. */
const BACKOFF = [0.1, 0.25, 0.5, 1, 2, 3, 5];
/** Application keepalive (docs/PROTOCOL.md: a ping every 20 s when idle). */
const PING_EVERY_MS = 20_000;
/** A connection that answers nothing for this long is dead: drop it and reconnect. */
const DEAD_AFTER_MS = 45_000;
/** The page moves to its table's home (`home`, 1.6) at most this often. */
const HOME_EVERY_MS = 30_000;

export class CommandFailed extends Error {
  constructor(reply) {
    super(reply ? `${reply.code}: ${reply.message}` : "the connection dropped");
    this.reply = reply; // the error reply, or null when the connection dropped
  }
}

function loadStored() {
  try {
    const raw = localStorage.getItem(STORAGE_KEY);
    const data = raw ? JSON.parse(raw) : null;
    return data && typeof data === "object" ? data : {};
  } catch {
    return {};
  }
}

export class Connection {
  /**
   * @param {{url: string, onEvent: Function, onStatus: Function, onTableLost: Function,
   *          onSessionLost: Function, onWelcome: Function}} hooks
   */
  constructor({ url, onEvent, onStatus, onTableLost, onSessionLost, onWelcome }) {
    this.url = url;
    this.onEvent = onEvent;
    this.onStatus = onStatus;
    this.onTableLost = onTableLost;
    this.onSessionLost = onSessionLost;
    this.onWelcome = onWelcome;
    const stored = loadStored();
    this.stored = stored;
    // What the server accepts: cleaned, 1-32 code points (PROTOCOL.md, Limits).
    this.name = typeof stored.name === "string" ? safeName(stored.name, "") : "";
    this.codes = stored.codes && typeof stored.codes === "object" ? stored.codes : {};
    /** The account this page's session speaks for (its key), null for a guest (1.5). */
    this.account = typeof stored.account === "string" ? stored.account : null;
    this.session = new ClientSession(this.name || "player", {
      token: typeof stored.token === "string" ? stored.token : null,
      firstId: Number.isSafeInteger(stored.nextId) && stored.nextId > 0 ? stored.nextId : 1,
    });
    // A reloaded page: follow the same tables, and ask each for a fresh snapshot.
    for (const table of Array.isArray(stored.tables) ? stored.tables : []) {
      if (typeof table === "string") this.follow(table);
    }
    this.waiters = new Map(); // id -> {resolve, reject}
    /** Waiting for the next welcome (online()). */
    this.welcomeWaiters = [];
    for (const p of Array.isArray(stored.pending) ? stored.pending : []) {
      if (p && Number.isSafeInteger(p.id) && typeof p.type === "string") {
        this.session.command(p.type, p.fields ?? {}, { id: p.id });
      }
    }
    this.ws = null;
    this.status = "offline";
    this.attempt = 0;
    this.timer = null;
    this.lastHeard = 0;
    this.lastSent = 0;
    this.fatal = null;
    this.everWelcomed = false;
    /** Where our table is run (`home`, 1.6), once told: connect there instead of `url`. */
    this.home = null;
    this.unreachable = new Set();
    this.movedAt = 0;
    this.keepalive = setInterval(() => this._keepalive(), 5_000);
    addEventListener("online", () => this._reconnectSoon(0));
    // The device lost its network: say so now rather than when the keepalive notices.
    addEventListener("offline", () => this._drop());
  }

  /** Remember a table (join, spectate, a link, a reload) so that resumes cover it. */
  follow(table) {
    if (!this.session.tables.has(table)) {
      this.session.tables.set(table, { table, seq: FRESH, seat: null, resuming: false,
        expectHead: false });
    }
  }

  following(table) {
    return this.session.tables.has(table);
  }

  start() {
    this.fatal = null;
    this._open();
  }

  /** A new name: said in the next hello (the session and its seats stay). */
  rename(name) {
    name = safeName(name, "") || this.name;
    this.name = name;
    this.session.name = name;
    this.renamed = true;   // the next welcome: show the new name where we sit (1.5)
    this._save();
    if (this.ws) this.ws.close(1000, "new name");
  }

  /** After a fatal close (e.g. 4009, opened in another tab): take the session back here,
   *  with the newest token and command counter that tab stored (the token we had died
   *  when the other tab's welcome rotated it). */
  restart() {
    const stored = loadStored();
    if (typeof stored.token === "string") this.session.token = stored.token;
    if (Number.isSafeInteger(stored.nextId) && stored.nextId > this.session.nextId) {
      this.session.nextId = stored.nextId;
    }
    if (this.session.state === "closed") this.session.state = "disconnected";
    this.attempt = 0;
    this.start();
  }

  /**
   * Send a command; resolves with the ok result (or pong/welcome), rejects with
   * CommandFailed (the error reply, or null if the connection dropped and it was not resent).
   */
  call(type, fields = {}) {
    const [id, outputs] = this.session.command(type, fields); // resent after a drop unless read-only
    const promise = new Promise((resolve, reject) => this.waiters.set(id, { resolve, reject }));
    this._save();
    this._carryOut(outputs);
    return promise;
  }

  /** Ask for a fresh snapshot of a table (a model out of step, or a reloaded page). */
  refresh(table) {
    this._carryOut(this.session.resume(table, FRESH));
  }

  forget(table) {
    this.session.forget(table);
    this._save();
  }

  /** Resolves once the connection is welcomed: at once if it is, else at the next welcome.
   *  The account commands are never resent after a drop (they carry passwords), so one
   *  sent while the page reconnects, or on a connection the server is about to close, would
   *  get no answer: they wait for this first. */
  online() {
    if (this.session.state === "open" && this.ws) return Promise.resolve();
    return new Promise((resolve) => this.welcomeWaiters.push(resolve));
  }

  /** The server ended this connection's session (a logout) and is closing it (4002): leave
   *  it now and say hello again at once, as a guest, rather than wait for that close while
   *  the player goes on (a login sent on the closing connection was lost). */
  reconnectNow(reason = "logged out") {
    const ws = this.ws;
    if (!ws) return;
    this.ws = null;
    ws.close(1000, reason);
    this._lost(null);
    this._reconnectSoon(0);
  }

  /** Remember the session now (after a login or a logout changed its token). */
  save() {
    this._save();
  }

  // ------------------------------------------------------------------ transport

  _open() {
    clearTimeout(this.timer);
    if (this.session.state === "closed") return;
    this._setStatus(this.everWelcomed ? "reconnecting" : "connecting");
    let ws;
    const target = this.home ?? this.url;
    let opened = false;
    try {
      ws = new WebSocket(target);
    } catch {
      this._homeFailed(target);
      this._lost(null);
      return;
    }
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    ws.onopen = () => {
      opened = true;
      if (this.ws !== ws) return;
      performance.mark("aluette:ws-open");
      this.lastHeard = Date.now();
      this._carryOut(this.session.connect());
    };
    ws.onmessage = (ev) => {
      if (this.ws !== ws || !(ev.data instanceof ArrayBuffer)) return;
      this.lastHeard = Date.now();
      this._carryOut(this.session.receive(new Uint8Array(ev.data)));
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (!opened) this._homeFailed(target);
      this._lost(ev.code);
    };
  }

  /** A home that could not be reached: back to the address we were given, for good. */
  _homeFailed(target) {
    if (this.home !== null && target === this.home) {
      this.unreachable.add(this.home);
      this.home = null;
    }
  }

  /** The server says our table is run by the process at `url` (1.6, issue 32): leave this
   *  socket and say hello there at once (the session resumes the table there), so one
   *  process serves it. Only a websocket URL of this page's own host (the page may
   *  connect nowhere else), not one that failed before or where we are, and at most
   *  every HOME_EVERY_MS. */
  goHome(url) {
    let target;
    try {
      target = new URL(url);
    } catch {
      return false;
    }
    const now = Date.now();
    if ((target.protocol !== "ws:" && target.protocol !== "wss:")
      || target.host !== location.host || this.unreachable.has(target.href)
      || target.href === (this.home ?? this.url) || (this.movedAt && now - this.movedAt < HOME_EVERY_MS)) {
      return false;
    }
    this.movedAt = now;
    this.home = target.href;
    this.reconnectNow("to the table's home");
    return true;
  }

  _lost(code) {
    this._carryOut(this.session.connectionLost(code));
    if (this.session.state === "closed") return;
    this._setStatus(this.everWelcomed ? "reconnecting" : "connecting");
    this._reconnectSoon(null);
  }

  _reconnectSoon(delay) {
    if (this.ws || this.session.state === "closed") return;
    clearTimeout(this.timer);
    const base = delay ?? BACKOFF[Math.min(this.attempt, BACKOFF.length - 1)];
    this.attempt += 1;
    // A little jitter, so a restarted server is not met by every page at once.
    this.timer = setTimeout(() => this._open(), base * 1000 * (0.8 + 0.4 * Math.random()));
  }

  /** Give up on the current socket without waiting for a closing handshake that may never
   *  come, and reconnect (with backoff; at once when the browser is back online). */
  _drop() {
    const ws = this.ws;
    if (!ws) return;
    this.ws = null;
    ws.close();
    this._lost(null);
  }

  _keepalive() {
    const ws = this.ws;
    if (!ws || this.session.state !== "open") return;
    const now = Date.now();
    if (now - this.lastHeard > DEAD_AFTER_MS) {
      this._drop(); // silent for too long: a dead network does not always close a socket
      return;
    }
    if (now - this.lastSent >= PING_EVERY_MS) this.call("ping").catch(() => {});
  }

  _send(frame) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(frame);
      this.lastSent = Date.now();
    }
  }

  _setStatus(status, detail = "") {
    this.status = status;
    this.onStatus(status, detail);
  }

  // ------------------------------------------------------------------ outputs

  _carryOut(outputs) {
    let save = false;
    for (const out of outputs) {
      switch (out.kind) {
        case "send":
          this._send(out.frame);
          break;
        case "welcomed":
          performance.mark("aluette:welcome");
          this.attempt = 0;
          this.everWelcomed = true;
          this.name = out.welcome.name;
          save = true;
          this._setStatus("online", out.reconnected ? "reconnected" : "");
          this.onWelcome(out.welcome, out.reconnected);
          for (const resolve of this.welcomeWaiters.splice(0)) resolve();
          break;
        case "replied": {
          save = true;
          const waiter = this.waiters.get(out.id);
          this.waiters.delete(out.id);
          if (waiter) {
            const reply = out.reply;
            if (reply && reply.type !== "error") waiter.resolve(reply.result ?? reply);
            else waiter.reject(new CommandFailed(reply));
          }
          break;
        }
        case "event":
          this.onEvent(out.table, out.seq, out.event, out.unknown);
          break;
        case "table_lost":
          save = true;
          this.onTableLost(out.table, out.code);
          break;
        case "session_lost":
          save = true;
          this.onSessionLost();
          break;
        case "home":               // 1.6: one process serves the table
          this.goHome(out.url);
          break;
        case "matched":            // play now (1.5): the table's head follows
          save = true;
          this.onMatched?.(out);
          break;
        case "fatal":
          this.fatal = out.reason;
          this._setStatus("fatal", out.reason);
          break;
        default:
          break;
      }
    }
    if (save) this._save();
  }

  _save() {
    const s = this.session;
    const pending = [...s.pending.values()].filter((p) => p.resend)
      .map((p) => ({ id: p.id, type: p.type, fields: p.fields }));
    const data = {
      name: this.name, token: s.token, nextId: s.nextId, tables: [...s.tables.keys()],
      pending, codes: this.codes, account: this.account,
    };
    try {
      localStorage.setItem(STORAGE_KEY, JSON.stringify(data));
    } catch {
      // Storage full or disabled (private mode): the page still plays, a reload forgets.
    }
  }
}

/** The websocket URL of this page's server: same host, wss when the page is https. */
export function socketUrl(loc = location) {
  return `${loc.protocol === "https:" ? "wss:" : "ws:"}//${loc.host}/ws`;
}
