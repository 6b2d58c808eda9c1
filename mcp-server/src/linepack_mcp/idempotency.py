"""Creates that happen once: `create_asset` with the same idempotency key (given, or derived from the call's content)
answers the asset the first call made instead of making another.

The API's createAsset takes no idempotency key (measurements do), so this server remembers, per caller and tenant,
which asset each key made: for `TTL_S` and at most `SIZE` keys, in this process. That covers what the issue saw (a
model calling create_asset twice in one conversation, or a client retrying a call whose answer it lost); a restart or
another replica forgets, which only a key stored by the assets service could cover.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

TTL_S = 24 * 3600.0
SIZE = 10_000


def content_key(values: dict[str, Any]) -> str:
    """The key of a call that gave none: the same content, the same key (as record_measurements derives its own)."""
    return "mcp-" + hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()[:32]


class KeyReused(Exception):
    """The key made something else: a different call may not reuse it."""

    def __init__(self, asset_id: str) -> None:
        super().__init__(asset_id)
        self.asset_id = asset_id


class Creations:
    def __init__(self, ttl_s: float = TTL_S, size: int = SIZE) -> None:
        self.ttl_s = ttl_s
        self.size = size
        # (caller, key) -> (digest of the call's content, the asset's id, monotonic expiry)
        self._made: OrderedDict[tuple[str, str], tuple[str, str, float]] = OrderedDict()
        self._making: dict[tuple[str, str], asyncio.Future[str]] = {}

    async def once(self, caller: str, key: str, values: dict[str, Any],
                   create: Callable[[], Awaitable[str]]) -> tuple[str, bool]:
        """The id of the asset `key` made for `caller` and whether this call made it. Calls with the same key at once
        wait for the first; raises KeyReused when the key made an asset from different content."""
        slot = (caller, key)
        digest = content_key(values)
        while True:
            known = self._made.get(slot)
            if known is not None and known[2] > time.monotonic():
                if known[0] != digest:
                    raise KeyReused(known[1])
                return known[1], False
            pending = self._making.get(slot)
            if pending is None:
                break
            try:
                await asyncio.shield(pending)
            except Exception:  # noqa: BLE001 - the first call failed: this one tries itself
                pass
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._making[slot] = future
        try:
            asset_id = await create()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no warning when nobody waited
            raise
        finally:
            self._making.pop(slot, None)
        self._made[slot] = (digest, asset_id, time.monotonic() + self.ttl_s)
        self._made.move_to_end(slot)
        while len(self._made) > self.size:
            self._made.popitem(last=False)
        future.set_result(asset_id)
        return asset_id, True
