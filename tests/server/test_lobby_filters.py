"""list_tables' filter (issue 27, item 7; protocol 1.5): free seats, rated or casual,
options. Real server, real store."""

from __future__ import annotations

import pytest

from .netclient import ServerError


async def test_the_lobby_filters_by_free_seats_rated_and_options(connect):
    ana, bo, cy = await connect("Ana"), await connect("Bo"), await connect("Cy")
    rated = (await ana.call("create_table", options={"rated": True}))["table"]
    casual = (await bo.call("create_table", options={"deals": 3}))["table"]
    for seat in (1, 2):
        await bo.call("add_bot", table=casual, seat=seat, level="random")
    playing = (await cy.call("create_table", options={"deals": 3, "bot_delay_ms": 10000}))[
        "table"]
    await cy.call("start", table=playing)

    async def listed(**only: object) -> set[str]:
        page = await ana.call("list_tables", filter=only)
        return {t["table"] for t in page["tables"]}

    assert await listed() == {rated, casual, playing}
    assert await listed(free=1) == {rated, casual}
    assert await listed(free=2) == {rated}
    assert await listed(rated=True) == {rated}
    assert await listed(rated=False) == {casual, playing}
    assert await listed(deals=3) == {casual, playing}
    assert await listed(deals=3, free=1) == {casual}
    assert await listed(signals="off") == set()
    with pytest.raises(ServerError) as err:
        await ana.call("list_tables", filter={"free": 5})
    assert err.value.code == "invalid_field"
