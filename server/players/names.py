"""An account's canonical key from a name (issue 27).

The accounts module (``h/accounts``, issue 27 part A) decides what a name's canonical
form is; until it is merged this is Unicode NFKC normalisation then case folding of the
cleaned name, which is what it promises ("unique after Unicode normalisation and case
folding"). :class:`~server.players.Players` takes the function as a parameter, so the
accounts' own one replaces it in one place.
"""

from __future__ import annotations

import unicodedata

from protocol import clean_text


def account_key(name: str) -> str:
    return unicodedata.normalize("NFKC", clean_text(name)).casefold()
