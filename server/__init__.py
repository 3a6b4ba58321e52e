"""Aluette Online server: the rules engine, bots, storage and the asyncio websocket shell."""
