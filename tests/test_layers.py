"""The layers of docs/ARCHITECTURE.md hold, and the check that says so has teeth.

The contracts are import-linter's, in pyproject.toml (``[tool.importlinter]``): run as the
tool runs them, they must all be kept; and each import a layer forbids, added to the real
import graph, must break one (an engine importing a bot, the client importing the server's
shell, the protocol importing the engine, a new import cycle).
"""

from __future__ import annotations

import ast
import copy
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from importlinter.api import read_configuration
from importlinter.contracts.acyclic_siblings import AcyclicSiblingsContract
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.layers import LayersContract

ROOT = Path(__file__).resolve().parents[1]
CONTRACT_TYPES = {c.type_name: c for c in (LayersContract, ForbiddenContract,
                                            AcyclicSiblingsContract)}


def test_every_contract_is_kept() -> None:
    """``lint-imports``, as a developer runs it, on the code as it is."""
    lint = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    config = read_configuration(str(ROOT / "pyproject.toml"))
    return grimp.build_graph(*config["session_options"]["root_packages"], cache_dir=None)


def broken(graph: grimp.ImportGraph, importer: str, imported: str) -> set[str]:
    """The contracts broken once ``importer`` imports ``imported``."""
    config = read_configuration(str(ROOT / "pyproject.toml"))
    changed = copy.deepcopy(graph)
    changed.add_import(importer=importer, imported=imported, line_number=1,
                       line_contents=f"import {imported}")
    out = set()
    for options in config["contracts_options"]:
        contract = CONTRACT_TYPES[options["type"]](
            name=options["name"], session_options=config["session_options"],
            contract_options=options)
        if not contract.check(copy.deepcopy(changed), verbose=False).kept:
            out.add(options["id"])
    return out


@pytest.mark.parametrize(("importer", "imported", "contract"), [
    ("server.game.rules", "server.bots", "server"),          # the engine plays no bot
    ("server.game.match", "server.table", "server"),         # nor knows the shell
    ("server.bots.expert", "server.store", "server"),        # bots, store, web: side by side
    ("server.store.store", "server.botrunner", "server"),
    ("client_cli.main", "server.app", "client"),             # `aluette play`: a launcher
    ("client_cli.model", "server.store", "client"),
    ("protocol.codec", "server.game", "packages"),           # the protocol is the bottom
    ("server.lobby", "client_cli.render", "packages"),
    ("server.game.cards", "server.game.match", "acyclic"),   # match -> cards already
    ("client_cli.model", "client_cli.app", "acyclic"),       # app -> model already
])
def test_a_forbidden_import_breaks_a_contract(graph: grimp.ImportGraph, importer: str,
                                              imported: str, contract: str) -> None:
    assert contract in broken(graph, importer, imported)


def test_allowed_imports_break_nothing(graph: grimp.ImportGraph) -> None:
    """Downwards is allowed: the shell may use the store, the client the bots."""
    assert broken(graph, "server.lobby", "server.store.keys") == set()
    assert broken(graph, "client_cli.app", "server.bots.levels") == set()
    assert broken(graph, "server.bots.levels", "protocol.vocab") == set()


# -- no class over 300 lines (issue 29; docs/ARCHITECTURE.md "The layers") --------------

CLASS_LINES_MAX = 300
#: Classes still over the bound (none since issue 29 split Store, EmbeddedStore, Table and
#: Match); each listed must really be over it, so the list only shrinks.
STILL_OVER: set[str] = set()


def class_sizes(root: Path = ROOT) -> dict[str, int]:
    """``path:Class`` -> the lines from its ``class`` line to its last, of every class
    (nested ones too) in the three packages."""
    sizes = {}
    for package in ("server", "protocol", "client_cli"):
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                    name = f"{path.relative_to(root).as_posix()}:{node.name}"
                    sizes[name] = (node.end_lineno or node.lineno) - first + 1
    return sizes


def test_no_class_is_over_300_lines() -> None:
    sizes = class_sizes()
    over = {name: n for name, n in sizes.items() if n > CLASS_LINES_MAX}
    assert set(over) <= STILL_OVER, f"classes over {CLASS_LINES_MAX} lines: {over}"
    assert set(over) >= STILL_OVER, f"not over any more, unlist: {STILL_OVER - set(over)}"


def test_the_class_size_check_has_teeth(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(CLASS_LINES_MAX))
    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "big.py").write_text(f"class Big:\n{body}\n")
    (tmp_path / "protocol").mkdir()
    (tmp_path / "client_cli").mkdir()
    assert class_sizes(tmp_path) == {"server/big.py:Big": CLASS_LINES_MAX + 1}


# -- plain maps only at the edges (issue 29; docs/ARCHITECTURE.md "Plain maps at the edges")

#: The files where a ``dict[str, Any]`` may stay (a stored or wire form), and how many.
PLAIN_MAPS = {"protocol/fields.py": 1, "protocol/messages.py": 1, "protocol/events.py": 2,
              "protocol/results.py": 2, "client_cli/calls.py": 1,
              "server/game/matchstate.py": 3, "server/table/state.py": 2,
              "server/store/client.py": 1}


def test_plain_maps_are_left_only_at_the_edges() -> None:
    found: dict[str, int] = {}
    for package in ("server", "protocol", "client_cli"):
        for path in sorted((ROOT / package).rglob("*.py")):
            n = path.read_text(encoding="utf-8").count("dict[str, Any]")
            if n:
                found[path.relative_to(ROOT).as_posix()] = n
    assert found == PLAIN_MAPS, "a new dict[str, Any]: type it, or list it as an edge"
