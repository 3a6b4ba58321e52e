"""Accounts (issue 27): names one may register, Argon2id passwords off the event loop,
and the service the shell calls (register, log in, change a password).

Layer: above the store (``server/store/accounts.py`` keeps them), below the shell, which
owns connections and tokens (``server/sessions.py``, ``server/logins.py``). A session
carries the account it speaks for as ``account`` (the account key, or None for a guest).
"""

from __future__ import annotations

from .names import AccountName, NameRefused, check_account_name, name_key, skeleton
from .passwords import Checked, Hasher, HasherBusy, HashParams
from .service import Accounts, LoginPolicy

__all__ = [
    "AccountName",
    "Accounts",
    "Checked",
    "HashParams",
    "Hasher",
    "HasherBusy",
    "LoginPolicy",
    "NameRefused",
    "check_account_name",
    "name_key",
    "skeleton",
]
