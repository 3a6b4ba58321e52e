// The client's side of a session, sans I/O: frames and commands in, frames and decisions out.
//
// This is a port of ClientSession in protocol/session.py (the Python reference the terminal
// client and the network bot run); both are held to one specification, the vectors of
// tests/spec/session/ (docs/ARCHITECTURE.md), so a drift fails the suite. What
// docs/PROTOCOL.md says about a session lives here:
// hello first; command ids unique for the session's whole life, across reconnects (the
// counter is restored from storage); a command's ok before the events it caused; one
// gap-free sequence per table and viewer; heads (table_changed + snapshot) re-base it and
// come only after the ok of create_table/join/spectate or of a resume answered by a
// snapshot; a gap is answered by a resume; after a welcome every table is resumed from its
// last seq and every unanswered command is resent with its original id; the token rotates
// at every welcome (keep only the newest).
//
// Outputs (plain objects, carried out in order by the caller, connection.mjs):
//   {kind: "send", frame}                       write this frame
//   {kind: "welcomed", welcome, reconnected}
//   {kind: "replied", id, command, reply}       reply is ok/error/pong, or null when the
//                                               connection dropped and it is not resent
//   {kind: "event", table, seq, event, unknown} in order, never twice
//   {kind: "table_lost", table, code}           a refused resume: we are not there any more
//   {kind: "session_lost"}                      the server forgot our token: new session
//   {kind: "fatal", reason}                     do not reconnect by yourself
//   {kind: "home", table, url}                  the table's process (1.6): may reconnect there

import { decode, encode } from "./vendor/msgpack.mjs";

export const PROTOCOL_VERSIONS = [1];
/**
 * A last_seq past any table's sequence asks a resume for a fresh snapshot (PROTOCOL.md says
 * 2^53; a JS number that large is not a safe integer and msgpack would send it as a float,
 * which the server refuses, so the largest safe integer, 2^53 - 1, is used).
 */
export const FRESH = Number.MAX_SAFE_INTEGER;

/** Close codes after which a client must not reconnect by itself (docs/PROTOCOL.md). */
export const FATAL_CLOSES = Object.freeze({
  4000: "the server closed the connection: protocol error",
  4001: "the server does not speak this client's protocol version",
  4009: "this session was opened from somewhere else",
  1009: "the server refused a message that was too large",
});

/**
 * Event types of protocol 1.3; any other is from a newer minor version: skip, count seq.
 * 1.3 added deals_committed (the first event of every match: the model starts a fresh view
 * on it, which is how a rematch resets the table), rematch_accepted and chat; 1.4
 * chat_history (the last frame of a head, when there is chat to show); 1.5 turn_timed_out.
 */
export const KNOWN_EVENTS = new Set([
  "snapshot", "table_changed", "player_connected", "player_disconnected", "partner_draw",
  "deal_started", "hand_dealt", "chanter_vote", "chanter_result", "talon_dealt",
  "chanter_discarded", "card_played", "trick_done", "deal_scored", "match_over", "signal",
  "signal_sent", "turn", "deals_committed", "rematch_accepted", "chat", "chat_history",
  "turn_timed_out",
]);

/** Refusals of a hello that mean "later", not "never" (close 1013 or 1001 follows): a
 *  returning session reconnects; a new one is told why at once. */
const RETRY_HELLO = new Set(["rate_limited", "storage_unavailable", "shutting_down", "server_busy"]);

/**
 * Commands not sent again after a drop unless the caller says so: read-only, or redone by
 * the session itself (every welcome resumes each table). Their callers hear at the drop
 * that no reply will come, as protocol/session.py's NOT_RESENT.
 */
export const NOT_RESENT = new Set(["ping", "resume", "list_tables",
  // 1.5: they carry passwords (never kept to be resent) or start or end sessions.
  "register", "login", "change_password", "logout", "logout_all"]);

/** Commands whose ok seats us (seat in the result) and is followed by the table's head. */
const HEAD_COMMANDS = new Set(["create_table", "join"]);

const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x)
  && !(x instanceof Uint8Array);
const isInt = (x) => Number.isSafeInteger(x);

const isText = (x) => typeof x === "string";

/**
 * What each server message must hold to be read (protocol/messages.py's required fields);
 * a message of another type is from a newer version, or a bug: skipped, as
 * protocol.decode_server refuses it (PROTOCOL.md: ignore unknown top-level types).
 */
const SERVER_MESSAGES = {
  welcome: (m) => isInt(m.id) && isInt(m.version) && isText(m.session)
    && isText(m.player_id) && isText(m.name),
  ok: (m) => isInt(m.id),
  error: (m) => (m.id === null || m.id === undefined || isInt(m.id))
    && (m.code === undefined || isText(m.code)),
  pong: (m) => isInt(m.id),
  event: (m) => isText(m.table) && isInt(m.seq) && (m.event === null || m.event === undefined
    || (isObject(m.event) && isText(m.event.type))),
  matched: (m) => isText(m.table) && isInt(m.seat),
  home: (m) => isText(m.table) && isText(m.url),
};

/** The server's frame as a map with a string `type`, or null (skip what we cannot read). */
export function decodeServer(frame) {
  let msg;
  try {
    msg = decode(frame);
  } catch {
    return null;
  }
  if (!isObject(msg) || !Object.hasOwn(SERVER_MESSAGES, msg.type)) return null;
  return SERVER_MESSAGES[msg.type](msg) ? msg : null;
}

export class ClientSession {
  /**
   * @param {string} name
   * @param {{token?: string|null, firstId?: number, versions?: number[]}} options
   */
  constructor(name, { token = null, firstId = 1, versions = PROTOCOL_VERSIONS } = {}) {
    this.name = name;
    this.token = token;
    this.versions = versions;
    this.state = "disconnected"; // hello_sent, open, closed (fatal: do not reconnect)
    this.playerId = null;
    this.version = null;
    /** table -> {table, seq, seat, resuming, expectHead} */
    this.tables = new Map();
    /** id -> {id, type, frame, resend, table} */
    this.pending = new Map();
    this.nextId = firstId;
    this._helloId = null;
    this._welcomedBefore = false;
  }

  // ------------------------------------------------------------------ connection

  /** A transport is up: say hello (with the token, to keep the session). */
  connect() {
    const id = this._newId();
    this._helloId = id;
    this.state = "hello_sent";
    const hello = { type: "hello", id, versions: [...this.versions], name: this.name,
      token: this.token };
    return [{ kind: "send", frame: encode(hello) }];
  }

  /** The transport dropped: commands not worth resending fail now; a fatal code stops. */
  connectionLost(closeCode = null) {
    const out = [];
    for (const [id, p] of [...this.pending]) {
      if (!p.resend) {
        this.pending.delete(id);
        out.push({ kind: "replied", id, command: p.type, reply: null });
      }
    }
    for (const stream of this.tables.values()) stream.resuming = false;
    const fatal = closeCode !== null ? FATAL_CLOSES[closeCode] : undefined;
    if (fatal !== undefined) {
      this.state = "closed";
      out.push({ kind: "fatal", reason: fatal });
    } else if (this.state !== "closed") {
      this.state = "disconnected";
    }
    return out;
  }

  // ------------------------------------------------------------------ commands

  _newId() {
    const id = this.nextId;
    this.nextId = id + 1;
    return id;
  }

  /**
   * Build a command; returns [id, outputs]. `resend` commands that get no reply before a
   * drop are sent again, with the same id, after the next welcome (the server answers a
   * repeated id with its first reply and never applies it twice); by default all but
   * those of NOT_RESENT.
   */
  command(type, fields = {}, { resend = null, id = null } = {}) {
    resend ??= !NOT_RESENT.has(type);
    const cid = id ?? this._newId();
    const frame = encode({ type, id: cid, ...fields });
    const table = typeof fields.table === "string" ? fields.table : null;
    this.pending.set(cid, { id: cid, type, frame, resend, table, fields });
    if (this.state === "open") return [cid, [{ kind: "send", frame }]];
    if (!resend) {
      this.pending.delete(cid);
      return [cid, [{ kind: "replied", id: cid, command: type, reply: null }]];
    }
    return [cid, []];
  }

  /** Ask for what we missed at `table` (or, with lastSeq = FRESH, for a snapshot). At most
   *  one resume per table is in flight. */
  resume(table, lastSeq = null) {
    let stream = this.tables.get(table);
    if (!stream) {
      stream = newStream(table);
      this.tables.set(table, stream);
    }
    if (stream.resuming || this.token === null || this.state !== "open") return [];
    stream.resuming = true;
    const [, out] = this.command("resume", {
      token: this.token, table, last_seq: lastSeq ?? stream.seq }, { resend: false });
    return out;
  }

  forget(table) {
    this.tables.delete(table);
  }

  // ------------------------------------------------------------------ frames in

  /** One frame from the server. */
  receive(frame) {
    const msg = decodeServer(frame);
    if (msg === null) return []; // a frame we cannot read: skip it (newer server, or a bug)
    if (msg.type === "event") return this._event(msg);
    if (msg.type === "matched") {
      // The matchmaker seated us (1.5): as after a join's ok, the table's head follows.
      let s = this.tables.get(msg.table);
      if (!s) {
        s = newStream(msg.table);
        this.tables.set(msg.table, s);
      }
      s.seat = msg.seat;
      s.expectHead = true;
      return [{ kind: "matched", table: msg.table, seat: msg.seat, rated: msg.rated === true }];
    }
    if (msg.type === "home") {
      // 1.6: the process that runs a table we are at; about any other, nothing to do.
      return this.tables.has(msg.table) ? [{ kind: "home", table: msg.table, url: msg.url }] : [];
    }
    if (this.state === "hello_sent" && msg.id === this._helloId) return this._helloReply(msg);
    const id = msg.id;
    const pending = isInt(id) ? this.pending.get(id) : undefined;
    if (pending === undefined || msg.type === "welcome") return []; // a welcome out of place
    if (msg.type === "error" && msg.code === "shutting_down" && pending.resend) {
      return []; // not applied; the server is going away: resend after reconnecting
    }
    this.pending.delete(pending.id);
    const out = [];
    this._track(pending, msg, out);
    out.push({ kind: "replied", id: pending.id, command: pending.type, reply: msg });
    return out;
  }

  _helloReply(msg) {
    if (msg.type === "welcome") {
      this.token = msg.session;
      this.playerId = msg.player_id;
      this.version = msg.version;
      this.name = msg.name;
      this.state = "open";
      const out = [{ kind: "welcomed", welcome: msg, reconnected: this._welcomedBefore }];
      this._welcomedBefore = true;
      for (const table of [...this.tables.keys()]) {
        this.tables.get(table).resuming = false;
        out.push(...this.resume(table));
      }
      for (const p of this.pending.values()) {
        if (p.resend) out.push({ kind: "send", frame: p.frame });
      }
      return out;
    }
    if (msg.type === "error" && msg.code === "bad_token" && this.token) {
      // The server no longer knows this session: start a new one; its seats are gone.
      this.token = null;
      this.tables.clear();
      for (const [id, p] of [...this.pending]) if (p.table !== null) this.pending.delete(id);
      return [{ kind: "session_lost" }, ...this.connect()];
    }
    if (msg.type === "error" && RETRY_HELLO.has(msg.code) && this.token) {
      // A returning session refused for now; the server closes (1013 or 1001) and the
      // caller reconnects with backoff: the session, its tables and its unanswered moves
      // are kept for the next hello. A new session has nothing to come back to: the
      // person is told why at once (tests/spec/session/hello_later_new_session.json).
      this.state = "disconnected";
      return [];
    }
    this.state = "closed";
    const code = msg.type === "error" ? msg.code : "unexpected reply";
    const message = msg.type === "error" ? msg.message : "";
    return [{ kind: "fatal", reason: `the server refused hello: ${code}: ${message}` }];
  }

  /** What a reply tells us about the tables we follow. */
  _track(pending, msg, out) {
    if (msg.type === "ok") {
      const result = isObject(msg.result) ? msg.result : {};
      const table = result.table ?? pending.table;
      if (typeof table !== "string") return;
      const stream = () => {
        let s = this.tables.get(table);
        if (!s) {
          s = newStream(table);
          this.tables.set(table, s);
        }
        return s;
      };
      if (HEAD_COMMANDS.has(pending.type)) {
        const s = stream();
        if (isInt(result.seat)) s.seat = result.seat;
        s.expectHead = true;
      } else if (pending.type === "spectate") {
        const s = stream();
        s.seat = null;
        s.expectHead = true;
      } else if (pending.type === "leave") {
        this.tables.delete(table);
      } else if (pending.type === "resume") {
        const s = stream();
        s.resuming = false;
        s.seat = isInt(result.seat) ? result.seat : null;
        s.expectHead = Boolean(result.snapshot);
      }
    } else if (msg.type === "error" && pending.type === "resume") {
      // Not applied, try again (storage down, or this process stopping: the resume goes
      // to another after the reconnect); any other refusal loses the table.
      if (pending.table !== null && msg.code !== "storage_unavailable"
          && msg.code !== "shutting_down") {
        this.tables.delete(pending.table);
        out.push({ kind: "table_lost", table: pending.table, code: msg.code });
      } else if (this.tables.has(pending.table)) {
        this.tables.get(pending.table).resuming = false;
      }
    }
  }

  _event(msg) {
    const payload = msg.event ?? null;
    const kind = payload?.type;
    let stream = this.tables.get(msg.table);
    if (!stream) {
      if (kind !== "snapshot" && kind !== "table_changed") return []; // not ours (any more)
      stream = newStream(msg.table);
      this.tables.set(msg.table, stream);
    }
    const unknown = payload !== null && !KNOWN_EVENTS.has(kind);
    const known = unknown ? null : payload;
    if (kind === "snapshot") {
      stream.seq = msg.seq; // snapshots re-base, backwards or forwards
      stream.seat = isInt(payload.view?.viewer) ? payload.view.viewer : null;
      stream.expectHead = false;
      return [{ kind: "event", table: msg.table, seq: msg.seq, event: known, unknown: null }];
    }
    if (kind === "table_changed" && (stream.expectHead || msg.seq === stream.seq)) {
      // A subscription's head (a snapshot follows if a match is running) re-bases; lobby
      // state is idempotent, so the same seq again is applied as well.
      stream.seq = msg.seq;
      const status = payload.table?.status;
      if (["waiting", "finished", "abandoned"].includes(status)) stream.expectHead = false;
      return [{ kind: "event", table: msg.table, seq: msg.seq, event: known, unknown: null }];
    }
    if (kind === "chat_history" && msg.seq === stream.seq) {
      // The head's last frame (1.4), stamped with its seq: it replaces the chat log, so
      // applying it again is harmless.
      return [{ kind: "event", table: msg.table, seq: msg.seq, event: known, unknown: null }];
    }
    if (msg.seq <= stream.seq) return []; // a duplicate, around a resume
    if (msg.seq !== stream.seq + 1) return this.resume(msg.table); // a gap
    stream.seq = msg.seq;
    return [{ kind: "event", table: msg.table, seq: msg.seq, event: known,
      unknown: unknown ? payload : null }];
  }
}

function newStream(table) {
  return { table, seq: 0, seat: null, resuming: false, expectHead: false };
}
