"""Who runs a table (issue 11): the lease in the store and the process's own belief agree.

At 1,000 rotating tables the keeper read every lease, then a table created in between
took its lease: the stale read said "nobody", the keeper let the table go, could not take
it back (the lease was already this process's), and the table was left run by nobody: no
bot would ever play there and no clock would run. A table whose lease is this process's
must be run by it.
"""

from __future__ import annotations

from server.app import running

from .conftest import server_settings
from .netclient import NetClient
from .test_abuse import wait_until


async def test_a_table_whose_lease_is_ours_is_run_by_us(redis_url, key_prefix,
                                                          redis_client) -> None:
    settings = server_settings(redis_url, key_prefix)
    async with running(settings) as srv:
        ana = await NetClient.open(f"ws://127.0.0.1:{srv.port}", "Ana")
        tid = (await ana.call("create_table", options={"bot_delay_ms": 0, "deals": 1,
                                                       "first_dealer": 0}))["table"]
        table = srv.hub.tables[tid]
        cluster = srv.hub.cluster
        assert table.owned
        assert await srv.hub.store.lease_holders([tid]) == [cluster.process]
        # The state the race left: the lease is ours, the table thinks it is not.
        table.set_owned(False)
        await cluster.keep_once(srv.hub.lobby, full=True)
        assert table.owned
        assert cluster.leases_lost == 0
        # And it is really run: the bots left of the dealer lead and follow (R10) until
        # it is Ana's turn.
        for seat in (1, 2, 3):
            await ana.call("add_bot", table=tid, seat=seat, level="random")
        await ana.call("start", table=tid)
        await wait_until(lambda: table.match is not None and table.match.to_act == 0)
        assert len(table.match.trick) == 3
        await ana.close()


async def test_a_table_whose_lease_is_gone_is_taken_back(redis_url, key_prefix,
                                                         redis_client) -> None:
    """The other way round: a lease that really vanished (expired in a stall) is taken
    again by the live process at its next full beat, and the table keeps running."""
    settings = server_settings(redis_url, key_prefix)
    async with running(settings) as srv:
        ana = await NetClient.open(f"ws://127.0.0.1:{srv.port}", "Ana")
        tid = (await ana.call("create_table", options={}))["table"]
        cluster = srv.hub.cluster
        await srv.hub.store.release_lease(tid, cluster.process)
        assert await srv.hub.store.lease_holders([tid]) == [None]
        await cluster.keep_once(srv.hub.lobby, full=True)
        assert srv.hub.tables[tid].owned
        assert await srv.hub.store.lease_holders([tid]) == [cluster.process]
        assert cluster.leases_lost == 1
        await ana.close()
