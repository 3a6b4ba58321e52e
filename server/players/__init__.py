"""Players as a first-class part of the server (issue 27): history, ratings, profiles.

- :mod:`.rating`: the OpenSkill model, the display scale and the bots' ladder on it;
- :mod:`.names`: an account's canonical key from a name;
- :mod:`.matchmaker`: which queued requests make a table (pure);
- :mod:`.queue`: the play-now queue over every process (one matchmaker at a time);
- here, :class:`Players`: what happens when a match ends (its history, its ratings), and
  the ``history`` and ``profile`` commands.

A registered human is a seat whose player's session has an account (``account`` in the
session's hash, set at login) and whose client did not say ``bot`` in its hello.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from protocol import CommandError, ErrorCode, ServiceError
from protocol.players import (
    MAX_PROFILE_PARTNERS,
    MAX_PROFILE_RECENT,
    HistoryEntry,
    HistoryPlayer,
    LadderStep,
    Partner,
    Rating,
)
from protocol.results import HistoryResult, ProfileResult
from server.game import Match
from server.store import StorageUnavailable, Store
from server.store.accounts import AccountStore
from server.store.history import (
    HistoryStore,
    Pair,
    Retention,
    StoredMatch,
    StoredRating,
    StoredSeat,
)

from ..config import Settings
from ..table.state import TableState
from . import rating
from .accounts import SessionAccounts
from .names import account_key

log = logging.getLogger(__name__)

Spawn = Callable[[str, Coroutine[Any, Any, Any]], Any]


def to_rating(r: StoredRating | Pair | None) -> Rating | None:
    if r is None:
        return None
    mu, sigma = (r.mu, r.sigma) if isinstance(r, StoredRating) else r
    return Rating(mu=round(mu, 4), sigma=round(sigma, 4), display=rating.display(mu))


def stored_match(state: TableState, match: Match, accounts: dict[str, str | None],
                 ) -> StoredMatch:
    """A finished match as history keeps it: who sat where when it started
    (``state.lineup``), who left for good since (their seat is a bot's now), with the
    accounts of the registered players."""
    lineup = state.lineup or [None] * 4
    seats = []
    for i, s in enumerate(state.seats):
        player = lineup[i] if i < len(lineup) else None
        left = player is not None and (s.kind != "human" or s.player != player)
        if player is None:
            player = s.player if s.kind == "human" else None
        bot = (s.kind == "bot" and not left) or (s.kind == "human" and s.bot)
        name = s.name or f"Seat {i}"
        if left and s.kind == "bot" and name.startswith("bot (") and name.endswith(")"):
            name = name[5:-1]       # mutations.leave names the bot after who left
        seats.append(StoredSeat(seat=i, name=name, player=player,
                                account=accounts.get(player) if player and not bot else None,
                                bot=bot, left=left))
    rated = (state.options.rated and not state.options.hints
             and all(p is not None for p in lineup) and len(lineup) == 4
             and all(s.account and not s.bot for s in seats)
             and len({s.account for s in seats}) == 4)
    return StoredMatch(table=state.id, match=state.matches_started(),
                       finished_at=state.finished_at or state.last_activity,
                       private=state.private, rated=rated, result=match.result or "draw",
                       points=list(match.points), options=state.options, seats=seats,
                       members=list(state.members))


def entry(m: StoredMatch, seat: int | None = None) -> HistoryEntry:
    return HistoryEntry(
        table=m.table, match=m.match, finished_at=m.finished_at, rated=m.rated,
        private=m.private, result=m.result, points=m.points, options=m.options, seat=seat,
        players=[HistoryPlayer(seat=s.seat, name=s.name, bot=s.bot,
                               registered=s.account is not None, left=s.left,
                               before=to_rating(s.before), after=to_rating(s.after))
                 for s in m.seats])


def _seat_of(m: StoredMatch, player: str, account: str | None) -> int | None:
    for s in m.seats:
        if s.player == player or (account is not None and s.account == account):
            return s.seat
    return None


class Players:
    def __init__(self, store: Store, settings: Settings, spawn: Spawn,
                 canonical: Callable[[str], str] = account_key) -> None:
        self.store = store
        self.settings = settings
        self.spawn = spawn
        self.canonical = canonical
        self.history = HistoryStore(store, Retention(max_age_s=settings.history_ttl_s,
                                                     max_count=settings.history_max))
        self.accounts = SessionAccounts(store)
        self.registered_accounts = AccountStore(store)
        #: Matches this process kept so far (not counting those found kept already), and a
        #: way to wait for the next (tests, tools).
        self.kept = 0
        self._kept = asyncio.Condition()

    # ------------------------------------------------------------------ a match ends

    def finished(self, state: TableState, match: Match | None) -> None:
        """A commit of this process ended ``match`` at the table ``state`` is of (or began
        the next one, or the sweep removes the table): keep it (off the command's path;
        exactly once, whichever process sees it)."""
        if match is None or not match.over or not state.lineup:
            return
        self.spawn(f"history {state.id}", self.keep(state, match))

    async def keep(self, state: TableState, match: Match) -> StoredMatch | None:
        humans = [p for p in state.lineup if p] + [s.player for s in state.seats
                                                  if s.kind == "human" and s.player]
        accounts = await self.accounts.of(humans)
        m = stored_match(state, match, accounts)
        rate = None
        if m.rated:
            seats = m.seats
            left = frozenset(s.seat for s in seats if s.left)

            def rate(before: dict[str, Pair | None]) -> dict[str, tuple[Pair, Pair]]:
                pairs = [before.get(s.account or "") or rating.default() for s in seats]
                after = rating.rate_match(pairs, m.result, left)
                return {seats[i].account or "": (pairs[i], after[i]) for i in after}
        kept = await self.history.record(m, rate)
        if kept is None:
            return None          # kept already (by this process or another)
        log.info("match %s kept in history (rated: %s)", m.id, m.rated)
        async with self._kept:
            self.kept += 1
            self._kept.notify_all()
        return kept

    async def wait_kept(self, count: int) -> None:
        """Until this process has kept ``count`` matches in all."""
        async with self._kept:
            await self._kept.wait_for(lambda: self.kept >= count)

    async def registered(self, player: str, account: str) -> None:
        """A guest's session became an account's (the accounts module calls this at
        registration): the session's matches are the account's from now on."""
        try:
            await self.history.adopt(player, account)
        except StorageUnavailable:
            log.warning("history of %s not yet adopted by its account", player)

    # ------------------------------------------------------------------ commands

    def _who(self, name: str | None, player: str) -> tuple[str | None, str | None]:
        """The account a command names, or (nil: yourself) your player id: an account's
        sessions on every device speak for its one player id, the one it had as a guest,
        so your own history holds your matches from before you registered too."""
        if name is None:
            return None, player
        return self.canonical(name), None

    async def history_page(self, player: str, name: str | None, cursor: str | None,
                           limit: int | None) -> HistoryResult:
        try:
            viewer_account = (await self.accounts.of([player])).get(player)
            account, own = self._who(name, player)
            before = _decode_cursor(cursor)
            matches, more = await self.history.page(
                player=own, account=account, before=before, limit=limit or 20,
                keep=lambda m: m.visible_to(player, viewer_account))
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable") from None
        return HistoryResult(
            matches=[entry(m, _seat_of(m, player, viewer_account)) for m in matches],
            next=None if more is None else repr(more))

    async def profile(self, player: str, name: str) -> ProfileResult:
        """A registered player's profile; only public tables, or tables the viewer sat at,
        among its recent matches."""
        account = self.canonical(name)
        try:
            viewer_account = (await self.accounts.of([player])).get(player)
            stats = await self.history.stats(account)
            rated = (await self.history.ratings([account])).get(account)
            if stats is None and rated is None:
                # An account that has not finished a match yet has a profile all the same:
                # no match, no rating yet (the start of the scale, ``ladder``'s normal).
                known = await self.registered_accounts.account(account)
                if known is None:
                    raise CommandError(ErrorCode.NO_SUCH_PLAYER, "no player is registered "
                                       "under this name")
                stats = {"name": known.name}
            stats = stats or {}
            recent, _ = await self.history.page(
                account=account, limit=MAX_PROFILE_RECENT,
                keep=lambda m: m.visible_to(player, viewer_account))
            partners = sorted(((int(v), k[3:]) for k, v in stats.items()
                               if k.startswith("pm:")), reverse=True)[:MAX_PROFILE_PARTNERS]
        except StorageUnavailable:
            raise ServiceError(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable") from None
        return ProfileResult(
            name=stats.get("name", name), rating=to_rating(rated),
            played=int(stats.get("played", 0)), won=int(stats.get("won", 0)),
            rated_played=int(stats.get("rated", 0)),
            partners=[Partner(name=stats.get(f"pn:{d}", "?"), matches=n,
                              won=int(stats.get(f"pw:{d}", 0))) for n, d in partners],
            recent=[entry(m, _seat_of(m, player, viewer_account)) for m in recent],
            ladder=[LadderStep(level=level, display=d) for level, d in rating.ladder()])


def _decode_cursor(cursor: str | None) -> float | None:
    if cursor is None:
        return None
    try:
        return float(cursor)
    except ValueError:
        raise CommandError(ErrorCode.INVALID_FIELD, "not a cursor this server gave",
                           details={"field": "$.cursor"}) from None
