"""Fair deals v2 (R8a, issue 28): one documented SHA-256 generator for every draw, and
three verifiers that must agree on every record: the server's (``aluette-record verify``),
and docs/verify/'s standalone programs in Python and in JavaScript (node).

The records are real: matches dealt by the engine from their R8a seed and exported as the
server exports them (tests/server/test_fair.py adds one played over the network), then
tampered with in each way a dishonest server might (hands, dealer, contributions, the
chanter exchange, who noticed a signal). Records of scheme 1, stored as the server wrote
them before v2, stay verifiable.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from client_cli.record_cli import main
from server.game import Match, Options, chance, fair, rules
from server.game.cards import ALL_CARDS
from server.game.record import RecordError, verify_record

from .fair_vectors import compute, documented
from .snippet import NODE, VERIFY, run_node, verifier
from .test_fair import fair_record

DATA = Path(__file__).resolve().parent / "stored"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


# ---------------------------------------------------------------- the generator


def test_r8a_the_documented_vectors_are_the_servers() -> None:
    """docs/RULES.md prints the values the server computes, to the last word."""
    assert documented() == compute()


class Scripted(chance.Stream):
    """A stream whose words are given: to see below() reject and keep."""

    def __init__(self, words: list[int]) -> None:
        super().__init__("", "")
        self.script = list(words)

    def word(self) -> int:
        return self.script.pop(0)


def test_r8a_below_is_unbiased_by_rejection() -> None:
    """The words at or above the largest multiple of n are drawn again, never folded."""
    stream = Scripted([2**32 - 1, 2**32 - 2, 5, 2**32 - 1])
    assert stream.below(3) == (2**32 - 2) % 3       # 2^32 mod 3 == 1: only 2^32-1 redrawn
    assert stream.below(3) == 5 % 3
    assert stream.below(2**32) == 2**32 - 1         # n = 2^32: nothing is redrawn
    with pytest.raises(ValueError):
        stream.below(0)


def test_r8a_the_python_verifier_reproduces_the_vectors() -> None:
    v, doc = documented(), verifier()
    seed = v["seed"]
    assert doc.sha256(f"aluette-commit/2:{v['secret']}:{v['salt']}") == v["commitment"]
    stream = doc.Stream(seed, "deal:1")
    assert [stream.word() for _ in range(10)] == v["deal:1 words"]
    assert " ".join(doc.Stream(seed, "deal:1").shuffle(list(ALL_CARDS))) == v["deal:1 pack"]
    options = {"partner_draw": False, "first_dealer": "random"}
    assert doc.first_dealer(seed, options) == v["first_dealer"]
    assert doc.first_dealer(seed, {**options, "partner_draw": True}) == \
        v["partner_draw"]["first_dealer"]


@needs_node
def test_r8a_the_node_verifier_reproduces_the_vectors() -> None:
    v = documented()
    script = f"""
      import {{ Stream, firstDealer }} from {json.dumps((VERIFY / "verify.mjs").as_uri())};
      const seed = {json.dumps(v["seed"])};
      const s = new Stream(seed, "deal:1");
      const words = Array.from({{ length: 10 }}, () => s.word());
      const pack = [..."ocbe"].flatMap((u) => [..."123456789VCR"].map((r) => r + u));
      console.log(JSON.stringify({{ words,
        pack: new Stream(seed, "deal:1").shuffle(pack).join(" "),
        first: firstDealer(seed, {{ partner_draw: false, first_dealer: "random" }}),
        drawn: firstDealer(seed, {{ partner_draw: true }}),
        signals: [0, 1, 2].map((k) => {{ const t = new Stream(seed, `signal:${{k}}`);
          return [t.word(), t.word()]; }}) }}));
    """
    assert NODE is not None
    done = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["words"] == v["deal:1 words"] and got["pack"] == v["deal:1 pack"]
    assert got["first"] == v["first_dealer"]
    assert got["drawn"] == v["partner_draw"]["first_dealer"]
    assert got["signals"] == [s["words"] for s in v["signals"]]


def test_r8a_the_engine_draws_from_the_documented_streams() -> None:
    """Match.new deals R8 from stream deal:N, R6 from first_dealer, R7 from partner_draw,
    and R16's noticing from signal:K: the vectors' seed gives the vectors' outcomes."""
    v = documented()
    match, _ = Match.new(Options(), v["seed"])
    assert match.dealer == v["first_dealer"]
    pack = v["deal:1 pack"].split()
    hands, talon = rules.deal(chance.Stream(v["seed"], "deal:1"), match.dealer)
    assert match.hands == hands and talon == pack[36:]
    assert match.hands[(match.dealer + 1) % 4][:3] == pack[:3]
    drawn, _ = Match.new(Options(partner_draw=True), v["seed"])
    assert " ".join(f"{s}:{c}" for s, c in drawn.draw) == v["partner_draw"]["turned"]
    assert drawn.seating == v["partner_draw"]["seating"]
    assert drawn.dealer == v["partner_draw"]["first_dealer"]
    risky, _ = Match.new(Options(signals="risky", signal_risk=0.25), v["seed"])
    from server.game import Signal
    for k, expected in enumerate(v["signals"]):
        sender = k % 4
        risky.apply(Signal(sender, "useless_hand"))
        noticed = [opp for opp, yes in zip(((sender + 1) % 4, (sender + 3) % 4),
                                           expected["noticed_at_0.25"], strict=True) if yes]
        assert risky.signals[-1]["to"] == sorted([(sender + 2) % 4, *noticed])


# ---------------------------------------------------------------- three verifiers, one answer


CONFIGS: list[dict[str, Any]] = [
    {"deals": 2},
    {"deals": 2, "first_dealer": 1},
    {"deals": 3, "chanter": True, "chanter_yes": True},
    {"deals": 2, "chanter": True},
    {"deals": 2, "partner_draw": True, "chanter": True, "chanter_yes": True},
    {"deals": 2, "signals": "risky", "signal_risk": 0.5, "signal_every": 3},
    {"deals": 2, "signals": "risky", "signal_risk": 1.0, "signal_every": 5, "chanter": True,
     "chanter_yes": True},
    {"deals": 1, "signals": "private", "signal_every": 4},
]


def _swap_cards(record: dict[str, Any], number: int, a: str, b: str) -> dict[str, Any]:
    forged = copy.deepcopy(record)
    deal = forged["deals"][number - 1]
    swap = {a: b, b: a}
    deal["hands"] = [[swap.get(c, c) for c in h] for h in deal["hands"]]
    deal["tricks"] = [[swap.get(c, c) for c in t] for t in deal["tricks"]]
    if "chanter" in deal:
        deal["chanter"]["discards"] = [[swap.get(c, c) for c in d]
                                       for d in deal["chanter"]["discards"]]
    return forged


def _legal(record: dict[str, Any]) -> bool:
    try:
        verify_record({k: v for k, v in record.items() if k != "fair"}, None)
    except RecordError:
        return False
    return True


def tampered(record: dict[str, Any], rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """Each lie a server could tell in a record that still replays under R18 (or, for the
    chanter and signals blocks, that the structure checks accept)."""
    out: list[tuple[str, dict[str, Any]]] = []
    deal = record["deals"][-1]
    number = len(record["deals"])
    swaps = [(x, y) for x in deal["hands"][0] for y in deal["hands"][2]]
    rng.shuffle(swaps)
    forged = next((f for f in (_swap_cards(record, number, x, y) for x, y in swaps)
                   if _legal(f)), None)
    if forged is not None:
        out.append(("swapped hands", forged))
    rotated = copy.deepcopy(record)
    for d in rotated["deals"]:
        d["dealer"] = (d["dealer"] + 1) % 4
        d["hands"] = [d["hands"][(s - 1) % 4] for s in range(4)]
        if "chanter" in d:
            block = d["chanter"]
            block["votes"] = [block["votes"][(s - 1) % 4] for s in range(4)]
            block["discards"] = [block["discards"][(s - 1) % 4] for s in range(4)]
        for sig in d.get("signals", []):
            sig["from_seat"] = (sig["from_seat"] + 1) % 4
            sig["to"] = sorted((t + 1) % 4 for t in sig["to"])
    out.append(("rotated table", rotated))
    changed = copy.deepcopy(record)
    changed["fair"]["contributions"][1] = "ee" if changed["fair"]["contributions"][1] != "ee" \
        else "ef"
    del changed["fair"]["seed"]
    out.append(("changed contribution", changed))
    for n, d in enumerate(record["deals"], start=1):
        block = d.get("chanter")
        if block and block["exchange"]:
            # The dealer kept a card the other taker had (and discarded instead): which of
            # its own fifteen a taker keeps is its choice, but not another seat's cards.
            dealer, left = d["dealer"], (d["dealer"] + 1) % 4
            lies = (_swap_cards(record, n, kept, thrown) for kept in d["hands"][dealer]
                    for thrown in block["discards"][left])
            lie = next((x for x in lies if _legal(x)), None)
            if lie is not None:
                out.append(("a card of the other taker kept", lie))
            dropped = copy.deepcopy(record)
            del dropped["deals"][n - 1]["chanter"]
            out.append(("the exchange left out", dropped))
            break
    if record["options"].get("signals") == "risky":
        for n, d in enumerate(record["deals"], start=1):
            if d["signals"]:
                lie = copy.deepcopy(record)
                sig = lie["deals"][n - 1]["signals"][0]
                me = sig["from_seat"]
                opponents = {(me + 1) % 4, (me + 3) % 4}
                seen = set(sig["to"]) & opponents
                sig["to"] = sorted({(me + 2) % 4} | (opponents - seen))
                if sig["to"] != d["signals"][0]["to"]:
                    out.append(("who noticed a signal", lie))
                break
    return out


def _server(record: dict[str, Any], commitment: str) -> str | None:
    try:
        verify_record(record, commitment)
    except RecordError as exc:
        return str(exc)
    return None


def _python_doc(record: dict[str, Any], commitment: str) -> str | None:
    try:
        verifier().check(record, commitment)
    except (AssertionError, KeyError, TypeError) as exc:
        return str(exc) or type(exc).__name__
    return None


def _node_doc(cases: list[tuple[dict[str, Any], str]], tmp: Path) -> list[str | None]:
    """verify.mjs's verify() on every case, in one node process."""
    path = tmp / "cases.json"
    path.write_text(json.dumps([[r, c] for r, c in cases]), encoding="utf-8")
    script = f"""
      import {{ readFileSync }} from "node:fs";
      import {{ verify }} from {json.dumps((VERIFY / "verify.mjs").as_uri())};
      const cases = JSON.parse(readFileSync({json.dumps(str(path))}, "utf8"));
      console.log(JSON.stringify(cases.map(([r, c]) => {{
        try {{ verify(r, c); return null; }} catch (e) {{ return String(e.message ?? e); }}
      }})));
    """
    assert NODE is not None
    done = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def battery() -> list[tuple[str, dict[str, Any], str]]:
    rng = random.Random(28)
    cases: list[tuple[str, dict[str, Any], str]] = []
    for n, config in enumerate(CONFIGS * 2):
        secret, salt = fair.new_secret()
        contributions = [rng.choice([None, f"{rng.getrandbits(128):032x}", "0", "ab" * 32])
                         for _ in range(4)]
        record = fair_record(secret, salt, contributions, play_seed=n, **config)
        committed = record["fair"]["commitment"]
        cases.append(("genuine", record, committed))
        cases += [(name, lie, committed) for name, lie in tampered(record, rng)]
    return cases


@needs_node
def test_r8a_three_verifiers_agree_on_genuine_and_tampered_records(tmp_path: Path) -> None:
    cases = battery()
    kinds = {name for name, _, _ in cases}
    assert kinds >= {"genuine", "swapped hands", "rotated table", "changed contribution",
                     "a card of the other taker kept", "the exchange left out",
                     "who noticed a signal"}, kinds
    node = _node_doc([(r, c) for _, r, c in cases], tmp_path)
    for (name, record, committed), js in zip(cases, node, strict=True):
        server, python = _server(record, committed), _python_doc(record, committed)
        if name == "genuine":
            assert (server, python, js) == (None, None, None), (server, python, js)
        else:
            assert server is not None and python is not None and js is not None, \
                (name, server, python, js)
    # The command line of both programs, on one genuine and one forged record.
    genuine = next(r for name, r, _ in cases if name == "genuine")
    committed = genuine["fair"]["commitment"]
    done = run_node(genuine, committed, tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("proven: 2 deals"), done.stderr
    done = run_node(genuine, "0" * 64, tmp_path)
    assert done.returncode == 1 and done.stderr.strip() == "NOT PROVEN: the commitment"
    path = tmp_path / "g.json"
    path.write_text(json.dumps(genuine), encoding="utf-8")
    py = subprocess.run(["python3", str(VERIFY / "verify.py"), str(path), committed],
                        capture_output=True, text=True, timeout=60, check=False)
    assert py.returncode == 0 and py.stdout.startswith("proven: 2 deals"), py.stderr
    py = subprocess.run(["python3", str(VERIFY / "verify.py"), str(path), committed[:16]],
                        capture_output=True, text=True, timeout=60, check=False)
    assert py.returncode == 1 and py.stderr.strip() == "NOT PROVEN: the commitment"


def test_r8a_the_server_names_the_lie() -> None:
    """What ``aluette-record verify`` says of each tampering, in its own words."""
    record = fair_record("1" * 64, "2" * 32, ["aa", None, None, "bb"], deals=2, chanter=True,
                         chanter_yes=True, signals="risky", signal_risk=0.5, signal_every=3)
    committed = record["fair"]["commitment"]
    lies = dict(tampered(record, random.Random(1)))
    expected = {
        "rotated table": "first dealer",
        "changed contribution": "not dealt to this seat|first dealer",
        "a card of the other taker kept": "not dealt to this seat|discarded",
        "the exchange left out": "does not say whether the talon was exchanged",
        "who noticed a signal": r"reached seats .* but the revealed seed says .* \(R16\)",
    }
    for name, pattern in expected.items():
        with pytest.raises(RecordError, match=pattern):
            verify_record(lies[name], committed)
    no_signals = copy.deepcopy(record)
    del no_signals["deals"][0]["signals"]
    with pytest.raises(RecordError, match="does not list the deal's signals"):
        verify_record(no_signals)


# ---------------------------------------------------------------- scheme 1


@pytest.mark.parametrize("name", ["v1-plain", "v1-chanter-partner-draw"])
def test_r8a_records_of_scheme_1_stay_verifiable(name: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Records the server wrote before v2 (tests/records/stored, made by that code) are
    proven by ``aluette-record verify``; a tampered one is not; the short verifiers of
    docs/ say they are for scheme 2 and send the reader to ``aluette-record verify``."""
    record = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    assert record["fair"]["scheme"] == "aluette-fair/1"
    committed = record["fair"]["commitment"]
    assert verify_record(record, committed)["fair"] == "proven"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    assert main(["verify", "--commitment", committed, str(path)]) == 0
    assert f"matches commitment {committed}" in capsys.readouterr().out
    forged = copy.deepcopy(record)
    forged["fair"]["contributions"][0] = "0"
    del forged["fair"]["seed"]
    with pytest.raises(RecordError, match=r"not dealt to this seat|first dealer"):
        verify_record(forged, committed)
    with pytest.raises(AssertionError, match="use aluette-record verify"):
        verifier().check(record, committed)


def test_r8a_a_match_stored_under_scheme_1_ends_under_it() -> None:
    """A match stored mid-way before v2 (its state has no ``draws``) deals its later deals
    as it dealt the first, so its record, revealed as scheme 1, is proven."""
    secret, salt = "3" * 64, "4" * 32
    seed = fair.derive_seed(secret, salt, [None] * 4, 1)
    match, _ = Match.new(Options(deals=3), seed, 1)
    rng = random.Random(5)
    while len(match.deals) < 1:
        assert match.to_act is not None
        match.apply(rng.choice(match.legal_actions(match.to_act)))
    stored = match.to_dict()
    del stored["draws"]
    resumed = Match.from_dict(stored)
    assert resumed.draws == 1
    while not resumed.over:
        assert resumed.to_act is not None
        resumed.apply(rng.choice(resumed.legal_actions(resumed.to_act)))
    from server.game.record import export_record
    record = json.loads(json.dumps(export_record(resumed)))
    record["fair"] = fair.reveal(secret, salt, [None] * 4, 1)
    assert verify_record(record)["fair"] == "proven"
    record["fair"] = fair.reveal(secret, salt, [None] * 4, 2)
    with pytest.raises(RecordError):
        verify_record(record)
