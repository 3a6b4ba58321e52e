"""An account's canonical key from a name (issue 27): the accounts module's own
(``server/accounts/names.py``: NFKC, case folding, NFKC again), so that ``profile {name}``
and ``history {name}`` find the account its owner registered."""

from __future__ import annotations

from server.accounts.names import name_key as account_key

__all__ = ["account_key"]
