"""The Python client under the specification's vectors (tests/spec/spec.py says the shape).

Each driver carries out a vector's inputs on the real implementation (the protocol's
``ClientSession``, the terminal client's ``TableModel``, the rules' scorer and the client's
deal explanation) and reports what it observed after each step, as plain JSON, in the same
shape as tests/spec/driver.mjs reports it for the browser's modules.
"""

from __future__ import annotations

import json
from typing import Any

import msgpack
import msgspec

import protocol
from client_cli.explain import deal_facts
from client_cli.model import TableModel
from protocol.session import (
    ClientOutput,
    ClientSession,
    Close,
    Fatal,
    GoHome,
    Replied,
    Seated,
    Send,
    SessionLost,
    TableEvent,
    TableLost,
    Welcomed,
)
from server.game.rules import score_deal

# ------------------------------------------------------------------ session


def _output(out: ClientOutput) -> dict[str, Any]:
    match out:
        case Send(frame=frame):
            return {"send": msgpack.unpackb(frame, raw=False, strict_map_key=False)}
        case Welcomed(reconnected=reconnected):
            return {"welcomed": {"reconnected": reconnected}}
        case Replied(id=cid, command=command, reply=reply):
            said: str | None
            match reply:
                case None:
                    said = None
                case protocol.Error(code=code):
                    said = f"error {code}"
                case protocol.Ok():
                    said = "ok"
                case protocol.Pong():
                    said = "pong"
            return {"replied": {"id": cid, "command": command, "reply": said}}
        case TableEvent(table=table, seq=seq, event=event, unknown=unknown):
            kind = None if event is None else event.__struct_config__.tag
            return {"event": {"table": table, "seq": seq, "type": kind,
                              "unknown": None if unknown is None else unknown.type}}
        case TableLost(table=table, code=code):
            return {"table_lost": {"table": table, "code": code}}
        case Seated(matched=m):
            return {"matched": {"table": m.table, "seat": m.seat, "rated": m.rated}}
        case GoHome(table=table, url=url):
            return {"home": {"table": table, "url": url}}
        case SessionLost():
            return {"session_lost": {}}
        case Fatal(reason=reason):
            return {"fatal": reason}
        case Close(code=code):
            return {"close": int(code)}


def session_state(s: ClientSession) -> dict[str, Any]:
    return {
        "state": s.state.value, "token": s.token, "player_id": s.player_id, "name": s.name,
        "version": s.version, "next_id": s.next_id,
        "table_names": sorted(s.tables),
        "tables": {t: {"seq": st.seq, "seat": st.seat, "resuming": st.resuming,
                       "expect_head": st.expect_head} for t, st in s.tables.items()},
        "pending": [{"id": p.id, "type": p.type, "resend": p.resend, "table": p.table}
                    for p in sorted(s.pending.values(), key=lambda p: p.id)],
    }


def _session_step(s: ClientSession, step: dict[str, Any]) -> list[ClientOutput]:
    if "connect" in step:
        return s.connect()
    if "receive" in step:
        return s.receive(msgpack.packb(step["receive"]))
    if "receive_hex" in step:
        return s.receive(bytes.fromhex(step["receive_hex"]))
    if "lost" in step:
        return s.connection_lost(step["lost"])
    if "command" in step:
        fields = dict(step["command"])
        cls = protocol.CLIENT_TYPES[fields.pop("type")]
        _, out = s.command(cls, resend=step.get("resend"), **fields)  # type: ignore[arg-type]
        return out
    if "resume" in step:
        return s.resume(step["resume"], step.get("last_seq"))
    if "forget" in step:
        s.forget(step["forget"])
        return []
    raise ValueError(f"no input in {step}")


def run_session(vector: dict[str, Any]) -> list[dict[str, Any]]:
    new = vector.get("new", {})
    s = ClientSession(new.get("name", "Ana"), token=new.get("token"),
                      first_id=new.get("first_id", 1))
    observed: list[dict[str, Any]] = []
    for step in vector["steps"]:
        try:
            out = [_output(o) for o in _session_step(s, step)]
        except Exception as exc:  # a drift may be a crash: report it as the step's result
            observed.append({"raised": f"{type(exc).__name__}: {exc}"})
            break
        observed.append({"out": out, "state": session_state(s)})
    return observed


# ------------------------------------------------------------------ table model


def _payload(event: dict[str, Any]) -> protocol.EventPayload:
    """An event as the client gets it: decoded (and validated) from its frame."""
    msg = protocol.decode_server(msgpack.packb({"type": "event", "table": "t", "seq": 1,
                                                "event": event}))
    assert isinstance(msg, protocol.Event) and msg.event is not None
    assert not isinstance(msg.event, protocol.UnknownEvent), event
    return msg.event


def shows(m: TableModel) -> dict[str, Any]:
    """What the model holds for the screen, in the shape the vectors write."""
    return {
        "seat": m.seat, "spectator": m.spectator, "status": m.status, "match": m.match,
        "my_turn": m.my_turn, "stale": m.stale,
        "info": msgspec.to_builtins(m.info), "view": msgspec.to_builtins(m.view),
        "chat": [{"from_seat": c.from_seat, "name": c.name, "text": c.text, "sender": c.sender}
                 for c in m.chat],
        "speakers": {k: {"name": name, "seat": seat} for k, (name, seat) in m.speakers.items()},
        "muted": sorted(m.muted), "my_sender": m.my_sender, "commitment": m.commitment,
        "fair": None if m.fair_note is None else {"ok": m.fair_note[0], "of": m.fair_note_of},
    }


def _model_step(m: TableModel, step: dict[str, Any]) -> None:
    if "event" in step:
        m.apply(_payload(step["event"]))
    elif "discarding" in step:
        m.pending_discard = list(step["discarding"])
    elif "contributing" in step:
        m.contributing(step["contributing"]["contribution"], step["contributing"].get("seen"))
    else:
        raise ValueError(f"no input in {step}")


def run_model(vector: dict[str, Any]) -> list[dict[str, Any]]:
    new = vector.get("new", {})
    m = TableModel(new.get("table", "t"), seat=new.get("seat"))
    observed: list[dict[str, Any]] = []
    for step in vector["steps"]:
        try:
            _model_step(m, step)
        except Exception as exc:
            observed.append({"raised": f"{type(exc).__name__}: {exc}"})
            break
        observed.append({"shows": json.loads(json.dumps(shows(m)))})  # tuples as lists
    return observed


# ------------------------------------------------------------------ deal explanation


def _explain_step(step: dict[str, Any]) -> dict[str, Any]:
    deal = step["deal"]
    winners = deal["winners"]
    score = score_deal(winners, deal.get("mordienne_on", True))
    event = protocol.DealScored(deal_number=1, dealer=0, trick_counts=score.trick_counts,
                                winner=score.winner, points=score.points,
                                mordienne=score.mordienne, totals=score.points)
    f = deal_facts(event, winners if deal.get("tricks_seen", True) else None)
    return {
        "outcome": {"winner": score.winner, "points": score.points,
                    "counts": score.trick_counts, "mordienne": score.mordienne},
        "facts": {"winner": f.winner, "most": f.most, "tied": list(f.tied),
                  "spoiled": f.spoiled,
                  "spoiled_tricks": None if f.spoiled_tricks is None else list(f.spoiled_tricks),
                  "reached_at": None if f.reached_at is None
                  else {str(k): v for k, v in f.reached_at.items()},
                  "mordienne": f.mordienne, "early": None if f.early is None else list(f.early),
                  "team": f.team, "points": f.points},
    }


def run_explain(vector: dict[str, Any]) -> list[dict[str, Any]]:
    observed: list[dict[str, Any]] = []
    for step in vector["steps"]:
        try:
            observed.append(_explain_step(step))
        except Exception as exc:
            observed.append({"raised": f"{type(exc).__name__}: {exc}"})
            break
    return observed
