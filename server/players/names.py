"""An account's canonical key from a name (issue 27).

The accounts module (``server/accounts``, issue 27 part A) decides what a name's canonical
form is: NFKC, then Unicode case folding, then NFKC again (UAX #31's NFKC_Casefold) of the
cleaned name; this is the same function, until that module is merged here (then
:class:`~server.players.Players` is given its ``name_key``, in one place).
"""

from __future__ import annotations

import unicodedata

from protocol import clean_text


def account_key(name: str) -> str:
    text = unicodedata.normalize("NFKC", clean_text(name))
    return unicodedata.normalize("NFKC", text.casefold())
