"""Answers sized for a model: rounding to meaningful digits, no nulls, and a token budget per tool result.

The budget is counted with one stated estimator, :func:`estimate_tokens`: UTF-8 bytes / 2.5, rounded up. The issue
that asked for a budget measured a real client on this server's answers: 77 kB of JSON were 31k tokens, 2.48 bytes
a token (JSON of ids, numbers and camelCase names tokenizes far denser than prose, which runs near 4 characters a
token). Dividing by 2.5 therefore estimates such JSON at or slightly above what that client counted, and prose
well above: a result the estimator admits fits the client's own count.
"""

from __future__ import annotations

import json
import math
from typing import Any

BYTES_PER_TOKEN = 2.5
DEFAULT_RESULT_TOKENS = 8000


def estimate_tokens(text: str) -> int:
    """Tokens a model will count for `text`, estimated from its UTF-8 size (see the module's docstring)."""
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


def to_text(data: Any) -> str:
    """The JSON text a model reads: compact separators, non-ASCII kept as is (fewer bytes than \\u escapes)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


# Decimals worth keeping, by the unit a field's API name ends with. Each is finer than what the figure can be known
# to: ILI tools size depth to about ±10 % of wall (so 0.1 % of wall), pressures are set and reported in whole kPa
# (0.15 psi), wall thickness is measured by UT to 0.01 mm, chainage and odometer to the centimetre at best.
_DECIMALS_BY_SUFFIX: tuple[tuple[str, int], ...] = (
    ("MmPerYear", 3),
    ("PctWt", 1),
    ("PctOd", 1),
    ("Pct", 1),
    ("Kpa", 0),
    ("Mpa", 1),
    ("Mm", 2),
    ("Years", 1),
    ("Deg", 1),
    ("M", 2),
)
# Dimensionless ratios the category decisions compare with 1 (or a design factor such as 0.72): three decimals.
_RATIOS = {"erf", "failurePressureRatio", "foliasFactor", "z", "designFactor"}
_SIGNIFICANT_DIGITS = 4
# GeoJSON lon/lat: 6 decimals is about 0.1 m on the ground.
_COORDINATE_DECIMALS = 6


def _decimals_for(key: str | None) -> int | None:
    if key is None:
        return None
    if key in _RATIOS:
        return 3
    if key == "coordinates":
        return _COORDINATE_DECIMALS
    for suffix, decimals in _DECIMALS_BY_SUFFIX:
        # `M` only as a unit after a lower-case letter (stationM, lengthM), never a whole name.
        if key.endswith(suffix) and len(key) > len(suffix) and key[-len(suffix) - 1].islower():
            return decimals
    return None


def _round_number(value: float, decimals: int | None) -> float | int:
    if not math.isfinite(value):
        return value
    if decimals is None:
        if value == 0:
            return 0
        decimals = max(0, _SIGNIFICANT_DIGITS - 1 - math.floor(math.log10(abs(value))))
    rounded = round(value, decimals)
    return int(rounded) if decimals == 0 or rounded == int(rounded) else rounded


def tidy(value: Any, *, drop_nulls: bool = True, key: str | None = None) -> Any:
    """`value` with every float rounded to the digits its unit warrants and, unless told otherwise, no nulls."""
    if isinstance(value, dict):
        return {k: tidy(v, drop_nulls=drop_nulls, key=k) for k, v in value.items() if v is not None or not drop_nulls}
    if isinstance(value, list):
        return [tidy(v, drop_nulls=drop_nulls, key=key) for v in value]
    if isinstance(value, float):
        return _round_number(value, _decimals_for(key))
    return value


def largest_lists(data: Any, path: tuple[str | int, ...] = ()) -> list[tuple[int, tuple[str | int, ...]]]:
    """Every list in `data` with more than one item, with its size as JSON text, largest first."""
    found: list[tuple[int, tuple[str | int, ...]]] = []
    if isinstance(data, dict):
        for k, v in data.items():
            found += largest_lists(v, (*path, k))
    elif isinstance(data, list):
        if len(data) > 1:
            found.append((len(to_text(data)), path))
        for i, v in enumerate(data):
            found += largest_lists(v, (*path, i))
    return sorted(found, key=lambda f: -f[0])


def _at(data: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def shorten_to_budget(data: dict[str, Any], max_tokens: int) -> tuple[dict[str, Any], dict[str, int]]:
    """The last resort for a result with no cursor to continue from: drop the tail of its largest lists until its
    text fits `max_tokens`. Returns the shortened data and how many items each list (by dotted path) lost."""
    dropped: dict[str, int] = {}
    while estimate_tokens(to_text(data)) > max_tokens:
        lists = largest_lists(data)
        if not lists:
            break
        _, path = lists[0]
        items = _at(data, path)
        keep = max(1, len(items) // 2) if estimate_tokens(to_text(items)) > max_tokens else len(items) - 1
        label = ".".join(str(p) for p in path)
        dropped[label] = dropped.get(label, 0) + len(items) - keep
        del items[keep:]
    return data, dropped


def fitting_count(build: Any, count: int, max_tokens: int) -> int:
    """The largest k <= count for which `build(k)` (a result with the first k items) fits `max_tokens`; 0 when even
    one item does not fit. Results grow with k, so a binary search finds it."""
    low, high = 0, count
    while low < high:
        mid = (low + high + 1) // 2
        if estimate_tokens(to_text(build(mid))) <= max_tokens:
            low = mid
        else:
            high = mid - 1
    return low
