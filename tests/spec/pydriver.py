"""The Python client under the specification's vectors (tests/spec/spec.py says the shape).

Each driver carries out a vector's inputs on the real implementation (the protocol's
``ClientSession``, the terminal client's ``TableModel``, the rules' scorer and the client's
deal explanation) and reports what it observed after each step, as plain JSON, in the same
shape as tests/spec/driver.mjs reports it for the browser's modules.
"""

from __future__ import annotations

from typing import Any

import msgpack

import protocol
from protocol.session import (
    ClientOutput,
    ClientSession,
    Close,
    Fatal,
    Replied,
    Send,
    SessionLost,
    TableEvent,
    TableLost,
    Welcomed,
)

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
        _, out = s.command(cls, resend=step.get("resend", True), **fields)  # type: ignore[arg-type]
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
