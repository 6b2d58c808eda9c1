"""The tools, one module per family; each family's `register` adds its tools (and resources) to the server."""

from __future__ import annotations

from . import analytics, api, assets, compliance, digs, writes
from .kit import WRITE_TOOLS, Toolkit

__all__ = ["WRITE_TOOLS", "Toolkit", "register_all"]


def register_all(kit: Toolkit) -> None:
    for family in (assets, analytics, compliance, digs, writes, api):
        family.register(kit)
