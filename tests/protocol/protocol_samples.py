"""Representative messages shared by the golden, bench-like and error tests.

Values are what a real table produces (docs/RULES.md examples), so the golden vectors double as
worked examples for docs/PROTOCOL.md.
"""

from __future__ import annotations

from typing import Any

import protocol as p

#: R8a: what the commitment of docs/RULES.md's example seed material looks like.
COMMITMENT = "5b1f8a3c" * 8

OPTIONS = p.TableOptions(deals=5, chanter=True, signals="risky", first_dealer=3)


def table_info() -> p.TableInfo:
    return p.TableInfo(
        table="t-7f3a",
        name="Ana's table",
        options=OPTIONS,
        private=False,
        seats=[
            p.SeatInfo(kind="human", name="Ana", connected=True),
            p.SeatInfo(kind="bot", name="Bot 1", level="normal", connected=True, bot=True),
            p.SeatInfo(kind="human", name="Cy", connected=False, bot=True),
            p.SeatInfo(),
        ],
        status="waiting",
        spectators=1,
        creator=0,
        match=0,
        next_commitment=COMMITMENT,
        rematch=[],
    )


def table_view() -> p.TableView:
    return p.TableView(
        viewer=0,
        phase="play",
        options=OPTIONS,
        deal_number=2,
        dealer=0,
        to_act=3,
        hand=["3o", "1b", "Rc", "9e", "4o", "Vb", "7c"],
        hand_sizes=[7, 7, 7, 6],
        leader=1,
        trick=[(1, "2c"), (2, "Ce")],
        tricks=[
            p.TrickInfo(leader=1, cards=["5o", "8b", "Rb", "1c"], winner=0),
            p.TrickInfo(leader=0, cards=["Ro", "Re", "6b", "3e"], winner=None),
        ],
        trick_counts=[1, 0, 0, 0],
        points=[1, 0],
        deals=[
            p.DealInfo(
                dealer=3, winner=2, points=[1, 0], mordienne=False, trick_counts=[2, 1, 4, 2]
            )
        ],
        chanter_votes=[True, False, None, None],
        signals=[p.SignalInfo(from_seat=2, signal="aces", n=2)],
        draw=[],
        result=None,
    )


def golden_messages() -> list[tuple[str, str, Any]]:
    """(name, direction, message) of every vector in golden/vectors.json."""
    return [
        ("hello", "client", p.Hello(id=1, versions=[1], name="Ana")),
        ("hello_resume", "client", p.Hello(id=1, versions=[1, 2], name="Ana", token="s3cr3t")),
        ("resume", "client", p.Resume(id=9, token="s3cr3t", table="t-7f3a", last_seq=41)),
        ("ping", "client", p.Ping(id=2)),
        ("list_tables", "client", p.ListTables(id=3)),
        ("list_tables_page", "client", p.ListTables(id=3, cursor="kwCrdDUyZTk", limit=20)),
        (
            "create_table",
            "client",
            p.CreateTable(id=4, options=OPTIONS, private=True, name="Friday"),
        ),
        ("join", "client", p.Join(id=5, table="t-7f3a", seat=2, code="K7Q2")),
        ("join_any", "client", p.Join(id=5, table="t-7f3a")),
        ("leave", "client", p.Leave(id=6, table="t-7f3a")),
        ("add_bot", "client", p.AddBot(id=7, table="t-7f3a", seat=1, level="expert")),
        ("remove_bot", "client", p.RemoveBot(id=8, table="t-7f3a", seat=1)),
        ("spectate", "client", p.Spectate(id=10, table="t-7f3a")),
        ("start", "client", p.Start(id=11, table="t-7f3a")),
        ("play", "client", p.Play(id=12, table="t-7f3a", card="3o")),
        ("chanter_vote", "client", p.ChanterVote(id=13, table="t-7f3a", vote=True)),
        (
            "discard",
            "client",
            p.Discard(id=14, table="t-7f3a", cards=["4o", "4c", "5b", "6e", "7o", "3b"]),
        ),
        ("signal_aces", "client", p.Signal(id=15, table="t-7f3a", signal="aces", n=3)),
        ("signal_madame", "client", p.Signal(id=16, table="t-7f3a", signal="madame")),
        ("get_record", "client", p.GetRecord(id=17, table="t-7f3a")),
        ("get_record_match", "client", p.GetRecord(id=18, table="t-7f3a", match=2)),
        ("review", "client", p.RequestReview(id=24, table="t-7f3a", seat=1, match=2)),
        ("get_record_code", "client", p.GetRecord(id=19, table="t-7f3a", code="K7Q2")),
        ("review_code", "client", p.RequestReview(id=25, table="t-7f3a", seat=1, code="K7Q2")),
        ("hint", "client", p.RequestHint(id=26, table="t-7f3a")),
        ("join_contribution", "client",
         p.Join(id=19, table="t-7f3a", seat=1, contribution="9f2c41d07be35a68")),
        ("start_contribution", "client",
         p.Start(id=20, table="t-7f3a", contribution="0c7d3e")),
        ("rematch", "client", p.Rematch(id=21, table="t-7f3a", contribution="e4a1")),
        ("chat", "client", p.Chat(id=22, table="t-7f3a", text="well played!")),
        ("mute", "client", p.Mute(id=23, table="t-7f3a", sender="3f9a0c1d2e4b5a67")),
        ("unmute", "client",
         p.Mute(id=24, table="t-7f3a", sender="3f9a0c1d2e4b5a67", muted=False)),
        (
            "welcome",
            "server",
            p.Welcome(id=1, version=1, session="s3cr3t", player_id="p-19", name="Ana"),
        ),
        ("ok_join", "server", p.Ok(id=5, result={"seat": 2})),
        ("ok_empty", "server", p.Ok(id=12)),
        (
            "error_card",
            "server",
            p.Error(
                id=12,
                code="card_not_in_hand",
                message="you do not hold 3o",
                details={"card": "3o"},
            ),
        ),
        ("error_version", "server", p.unsupported_version(1)),
        ("pong", "server", p.Pong(id=2)),
        ("ev_placeholder", "server", p.placeholder("t-7f3a", 7)),
        (
            "ev_snapshot",
            "server",
            p.Event(table="t-7f3a", seq=40, event=p.Snapshot(view=table_view())),
        ),
        (
            "ev_table_changed",
            "server",
            p.Event(table="t-7f3a", seq=1, event=p.TableChanged(table=table_info())),
        ),
        ("ev_connected", "server", p.Event(table="t-7f3a", seq=2, event=p.PlayerConnected(seat=2))),
        (
            "ev_disconnected",
            "server",
            p.Event(table="t-7f3a", seq=3, event=p.PlayerDisconnected(seat=2)),
        ),
        (
            "ev_partner_draw",
            "server",
            p.Event(
                table="t-7f3a",
                seq=4,
                event=p.PartnerDraw(
                    cards=[(0, "5o"), (1, "3c"), (2, "Rb"), (3, "2o"), (0, "3o"), (2, "2c")],
                    seating=[0, 2, 1, 3],
                    dealer=2,
                ),
            ),
        ),
        (
            "ev_deal_started",
            "server",
            p.Event(table="t-7f3a", seq=5, event=p.DealStarted(deal_number=1, dealer=3)),
        ),
        (
            "ev_hand_dealt",
            "server",
            p.Event(
                table="t-7f3a",
                seq=6,
                event=p.HandDealt(
                    seat=0, cards=["3o", "1b", "Rc", "9e", "4o", "Vb", "7c", "2e", "8o"]
                ),
            ),
        ),
        (
            "ev_chanter_vote",
            "server",
            p.Event(table="t-7f3a", seq=10, event=p.ChanterVoted(seat=0, vote=True)),
        ),
        (
            "ev_chanter_result",
            "server",
            p.Event(table="t-7f3a", seq=14, event=p.ChanterResult(accepted=True)),
        ),
        (
            "ev_talon_dealt",
            "server",
            p.Event(
                table="t-7f3a",
                seq=15,
                event=p.TalonDealt(seat=0, cards=["1o", "1c", "Co", "Cc", "6o", "6c"]),
            ),
        ),
        (
            "ev_chanter_discarded",
            "server",
            p.Event(table="t-7f3a", seq=17, event=p.ChanterDiscarded(seat=0)),
        ),
        (
            "ev_card_played",
            "server",
            p.Event(table="t-7f3a", seq=19, event=p.CardPlayed(seat=1, card="3o")),
        ),
        (
            "ev_trick_done",
            "server",
            p.Event(
                table="t-7f3a",
                seq=23,
                event=p.TrickDone(number=1, leader=1, cards=["3o", "1b", "Rb", "4e"], winner=1),
            ),
        ),
        (
            "ev_trick_spoiled",
            "server",
            p.Event(
                table="t-7f3a",
                seq=28,
                event=p.TrickDone(number=2, leader=1, cards=["Ro", "Re", "6b", "3e"], winner=None),
            ),
        ),
        (
            "ev_deal_scored",
            "server",
            p.Event(
                table="t-7f3a",
                seq=70,
                event=p.DealScored(
                    deal_number=1,
                    dealer=3,
                    trick_counts=[0, 5, 2, 1],
                    winner=1,
                    points=[0, 2],
                    mordienne=True,
                    totals=[0, 2],
                ),
            ),
        ),
        (
            "ev_match_over",
            "server",
            p.Event(
                table="t-7f3a",
                seq=400,
                event=p.MatchOver(
                    points=[3, 2],
                    result="team0",
                    record={"format": "aluette-record/1", "options": {"deals": 5}},
                ),
            ),
        ),
        (
            "ev_signal",
            "server",
            p.Event(
                table="t-7f3a", seq=30, event=p.SignalReceived(from_seat=2, signal="aces", n=2)
            ),
        ),
        ("ev_turn", "server", p.Event(table="t-7f3a", seq=31, event=p.Turn(seat=3))),
        (
            "ev_signal_sent",
            "server",
            p.Event(table="t-7f3a", seq=32, event=p.SignalSent(signal="aces", n=2)),
        ),
        (
            "ev_deals_committed",
            "server",
            p.Event(table="t-7f3a", seq=5, event=p.DealsCommitted(
                match=2, commitment=COMMITMENT,
                contributions=["9f2c41d07be35a68", None, "0c7d3e", None])),
        ),
        (
            "ev_rematch_accepted",
            "server",
            p.Event(table="t-7f3a", seq=401, event=p.RematchAccepted(seat=2)),
        ),
        (
            "ev_chat",
            "server",
            p.Event(table="t-7f3a", seq=402, event=p.ChatMessage(
                from_seat=2, name="Cy", text="one more?", sender="3f9a0c1d2e4b5a67")),
        ),
        (
            "ev_chat_spectator",
            "server",
            p.Event(table="t-7f3a", seq=12, event=p.ChatMessage(
                from_seat=None, name="Di", text="nice trick", sender="a0b1c2d3e4f50617")),
        ),
        (
            "ev_chat_history",
            "server",
            p.Event(table="t-7f3a", seq=12, event=p.ChatHistory(
                lines=[p.ChatMessage(from_seat=2, name="Cy", text="one more?",
                                     sender="3f9a0c1d2e4b5a67"),
                       p.ChatMessage(from_seat=None, name="Di", text="nice trick",
                                     sender="a0b1c2d3e4f50617")],
                sender="a0b1c2d3e4f50617", muted=["5e6f708192a3b4c5"])),
        ),
        (
            "ok_record",
            "server",
            p.Ok(id=18, result=p.RecordResult(
                table="t-7f3a", match=2,
                record={"format": "aluette-record/1", "options": {"deals": 5}})),
        ),
        (
            "ok_review_running",
            "server",
            p.Ok(id=24, result=p.ReviewResult(table="t-7f3a", match=2, seat=1,
                                              status="running", done=17, total=45)),
        ),
        (
            "ok_hint",
            "server",
            p.Ok(id=26, result=p.HintResult(
                table="t-7f3a", phase="play", preferred="4c",
                choices=[p.HintChoice(choice="4c", value=0.21),
                         p.HintChoice(choice="3o", value=0.18)])),
        ),
        (
            "ok_review_done",
            "server",
            p.Ok(id=25, result=p.ReviewResult(
                table="t-7f3a", match=2, seat=1, status="done",
                review={"seat": 1, "points_lost": 0.42, "share_matched": 0.91})),
        ),
        (
            "ok_resume",
            "server",
            p.Ok(id=9, result=p.ResumeResult(table="t-7f3a", seat=2, seq=41, snapshot=False,
                                             replayed=3)),
        ),
        (
            "error_conflict",
            "server",
            p.Error(id=12, code="conflict", message="the table kept changing; send it again"),
        ),
        # 1.5 (issue 30): chat made mostly of combining marks.
        (
            "error_too_many_marks",
            "server",
            p.Error(id=14, code="too_many_marks",
                    message="that text is mostly combining marks; write it with fewer accents"),
        ),
        # 1.5: a vote to let a bot play an absent player's seat now, the grace period's end
        # and the votes in SeatInfo, and a turn timer that ran out.
        ("let_bot_play", "client", p.LetBotPlay(id=25, table="t-7f3a", seat=2)),
        (
            "ev_table_changed_grace",
            "server",
            p.Event(table="t-7f3a", seq=88, event=p.TableChanged(table=p.TableInfo(
                table="t-7f3a", name="Ana's table", options=OPTIONS, status="playing",
                seats=[p.SeatInfo(kind="human", name="Ana", connected=True),
                       p.SeatInfo(kind="bot", name="Yann", level="normal", connected=True),
                       p.SeatInfo(kind="human", name="Cy", connected=False,
                                  grace_until=1767225600.5, bot_votes=[0]),
                       p.SeatInfo(kind="bot", name="Loïc", level="normal", connected=True)],
                creator=0, match=1, next_commitment=COMMITMENT))),
        ),
        ("ev_turn_timed_out", "server",
         p.Event(table="t-7f3a", seq=89, event=p.TurnTimedOut(seat=2))),
        (
            # 1.5: the tables you watch, beside your seats (what to resume)
            "ok_list_tables",
            "server",
            p.Ok(id=3, result=p.TablesPage(
                tables=[], seats=[p.SeatRef(table="t-7f3a", seat=2, status="playing")],
                next=None, watching=[p.WatchRef(table="t-9b21", status="playing")])),
        ),
        # 1.5: a client that is a program says so
        ("hello_bot", "client", p.Hello(id=1, versions=[1], name="Robo", bot=True)),
        # 1.5 (issue 27): players: history, profiles, play now, lobby filters
        ("history", "client", p.History(id=30, name="Ana", cursor="1767225600.5", limit=10)),
        ("profile", "client", p.Profile(id=31, name="Ana")),
        ("queue", "client", p.Queue(id=32, rated=True, options=p.TableOptions(deals=3))),
        ("unqueue", "client", p.Unqueue(id=33)),
        ("list_tables_filter", "client", p.ListTables(
            id=34, filter=p.TableFilter(free=1, rated=False, deals=5))),
        ("matched", "server", p.Matched(table="t-7f3a", seat=2, rated=True)),
        # 1.6 (issue 32): the process that runs a table, for a player connected elsewhere
        ("home", "server", p.Home(table="t-7f3a", url="wss://cards.example/?home=server2")),
        ("ok_history", "server", p.Ok(id=30, result=p.HistoryResult(
            matches=[history_entry()], next="1767225600.5"))),
        ("ok_profile", "server", p.Ok(id=31, result=p.ProfileResult(
            name="Ana", rating=p.players.Rating(mu=27.1, sigma=7.9, display=1624),
            played=12, won=7, rated_played=9,
            partners=[p.players.Partner(name="Cy", matches=5, won=3)],
            recent=[history_entry()],
            ladder=[p.players.LadderStep(level="random", display=1279),
                    p.players.LadderStep(level="easy", display=1400),
                    p.players.LadderStep(level="normal", display=1500),
                    p.players.LadderStep(level="expert", display=1573)]))),
        ("ok_queue", "server", p.Ok(id=32, result=p.QueueResult(queued=True, rated=True,
                                                                  waiting=5))),
        ("error_not_registered_queue", "server",
         p.Error(id=32, code="not_registered", message="rated games are for registered players")),
        # 1.5: accounts (issue 27)
        ("register", "client",
         p.Register(id=2, name="Ana", password="correct horse battery")),
        ("login", "client", p.Login(id=3, name="ana", password="correct horse battery")),
        ("change_password", "client",
         p.ChangePassword(id=4, old_password="correct horse battery",
                          new_password="a new password")),
        ("logout", "client", p.Logout(id=5)),
        ("logout_all", "client", p.LogoutAll(id=6)),
        ("ok_register", "server",
         p.Ok(id=2, result=p.AccountResult(player_id="p-19", name="Ana", account="ana"))),
        ("ok_login", "server",
         p.Ok(id=3, result=p.LoginResult(player_id="p-19", name="Ana", account="ana",
                                         session="s3cr3t"))),
        ("ok_logout_all", "server", p.Ok(id=6, result=p.RevokedResult(revoked=3))),
        ("error_name_taken", "server",
         p.Error(id=2, code="name_taken", message="this name is taken",
                 details={"reason": "taken"})),
        ("error_name_refused", "server",
         p.Error(id=2, code="name_refused", message="this name is reserved",
                 details={"reason": "reserved"})),
        ("error_bad_credentials", "server",
         p.Error(id=3, code="bad_credentials", message="wrong name or password")),
        ("error_login_throttled", "server",
         p.Error(id=3, code="login_throttled",
                 message="too many login attempts; wait before trying again",
                 details={"retry_after_ms": 4000})),
        ("error_already_registered", "server",
         p.Error(id=2, code="already_registered",
                 message="this session is already an account's")),
        ("error_not_registered", "server",
         p.Error(id=5, code="not_registered",
                 message="this session is a guest's: register or log in first")),
        ("error_being_matched", "server",
         p.Error(id=6, code="being_matched",
                 message="play now is seating you at a table this moment (its matched "
                         "follows); nothing was changed")),
    ]


def history_entry() -> Any:
    H = p.players.HistoryPlayer
    return p.players.HistoryEntry(
        table="t-7f3a", match=1, finished_at=1767225600.5, rated=True, private=False,
        result="team0", points=[5, 2], options=p.TableOptions(deals=5, rated=True), seat=0,
        players=[H(seat=0, name="Ana", registered=True,
                   before=p.players.Rating(mu=25.0, sigma=8.3333, display=1500),
                   after=p.players.Rating(mu=26.96, sigma=8.178, display=1616)),
                 H(seat=1, name="Bo", registered=True, left=True,
                   before=p.players.Rating(mu=25.0, sigma=8.3333, display=1500),
                   after=p.players.Rating(mu=23.04, sigma=8.178, display=1384)),
                 H(seat=2, name="Cy", registered=True,
                   before=p.players.Rating(mu=25.0, sigma=8.3333, display=1500),
                   after=p.players.Rating(mu=26.96, sigma=8.178, display=1616)),
                 H(seat=3, name="Di", registered=True)])
