"""Creates that happen once: `create_asset` sends createAsset an idempotency key, and the assets service answers a
repeated key with the asset its first call made and refuses the key with other values (CONFLICT, naming that asset).
The service keeps the keys, so a restart of this server, or another replica of it, answers the same.

Keys are per caller (the person or API key, in the tenant): the names a model gives its keys ("valve-1") are not unique
among the people of a tenant, so the key sent is derived from the caller and the key given — or, when none was given,
the call's content (repeating the very same call never creates a second asset).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def content_key(values: dict[str, Any]) -> str:
    """The key of a call that gave none: the same content, the same key (as record_measurements derives its own)."""
    return "mcp-" + hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()[:32]


def caller_key(caller: str, key: str) -> str:
    """The idempotency key createAsset is sent: `key` in `caller`'s own space (64 characters, within the API's 200)."""
    return "mcp-" + hashlib.sha256(f"{caller}\n{key}".encode()).hexdigest()[:60]
