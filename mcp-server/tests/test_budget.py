"""Answers sized for a model: the estimator, rounding by unit, the last-resort shortening, plain-word refusals."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, ConfigDict, Field

from linepack_mcp.budget import estimate_tokens, fitting_count, shorten_to_budget, tidy, to_text
from linepack_mcp.settings import ConfigError, load_settings, validate_tenant_id
from linepack_mcp.strict import argument_problems

GOOD = {"LINEPACK_API_URL": "http://localhost:4000/graphql", "LINEPACK_API_KEY": "lpk_test_0123456789"}


def test_the_estimator_is_calibrated_on_the_issue_measurement():
    # Issue 28: a 77 kB answer of this server counted 31k tokens in a real client (2.48 bytes a token); the estimator
    # must not count such JSON lower than the client did.
    assert estimate_tokens("x" * 77_000) >= 30_800
    assert estimate_tokens("é") == 1  # two UTF-8 bytes
    assert estimate_tokens("") == 0


def test_numbers_are_rounded_to_what_their_unit_warrants():
    raw = {"failurePressureKpa": 11534.285714285714, "erf": 0.8123456789, "depthPctWt": 45.06666666,
           "wallThicknessMm": 9.52500001, "odometerM": 1234.56789, "growthRateMmPerYear": 0.3812345,
           "remainingLifeYears": 7.46666, "smysMpa": 482.63, "clockDeg": 92.25, "value": -950.123456,
           "location": {"type": "Point", "coordinates": [-95.36981234567, 29.7604267891]},
           "lengthM": 12.0, "name": "Segment 1", "classLocation": 2, "note": None}
    assert tidy(raw) == {
        "failurePressureKpa": 11534, "erf": 0.812, "depthPctWt": 45.1, "wallThicknessMm": 9.53, "odometerM": 1234.57,
        "growthRateMmPerYear": 0.381, "remainingLifeYears": 7.5, "smysMpa": 482.6, "clockDeg": 92.2, "value": -950.1,
        "location": {"type": "Point", "coordinates": [-95.369812, 29.760427]}, "lengthM": 12, "name": "Segment 1",
        "classLocation": 2}
    assert "note" in tidy(raw, drop_nulls=False)


def test_a_result_without_a_cursor_is_shortened_to_the_budget_saying_what_was_left_out():
    data = {"name": "Query", "fields": [{"name": f"field{i}", "description": "d" * 200} for i in range(400)]}
    assert estimate_tokens(to_text(data)) > 8000
    short, dropped = shorten_to_budget(json.loads(json.dumps(data)), 8000)
    assert estimate_tokens(to_text(short)) <= 8000
    assert dropped == {"fields": 400 - len(short["fields"])} and short["fields"][0]["name"] == "field0"


def test_fitting_count_finds_the_largest_page_that_fits():
    def build(k: int) -> dict:
        return {"items": ["y" * 250] * k}

    k = fitting_count(build, 100, 1000)
    assert estimate_tokens(to_text(build(k))) <= 1000 < estimate_tokens(to_text(build(k + 1)))


def test_the_budget_is_configurable_and_bounded():
    assert load_settings(GOOD).result_tokens == 8000
    assert load_settings(GOOD | {"LINEPACK_MCP_RESULT_TOKENS": "20000"}).result_tokens == 20000
    with pytest.raises(ConfigError, match="LINEPACK_MCP_RESULT_TOKENS must be at least 1000"):
        load_settings(GOOD | {"LINEPACK_MCP_RESULT_TOKENS": "10"})


@pytest.mark.parametrize("bad", ["t-1", "acme", "2b7c0f8e-1111-4222-8333-94444555566", "2b7c0f8e 1111"])
def test_a_malformed_tenant_id_is_refused_in_words(bad):
    with pytest.raises(ConfigError, match="must be a tenant id, a UUID"):
        validate_tenant_id(bad, "X-Tenant-ID")
    assert validate_tenant_id("2B7C0F8E-1111-4222-8333-944445555666") is not None


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    assetId: str
    depthPctWt: float | None = Field(default=None, ge=0, le=100)


class Args(BaseModel):
    asset_id: str
    first: int = Field(default=20, ge=1, le=100)
    type: str | None = None
    items: list[Item] | None = None


def test_unknown_arguments_are_refused_naming_the_allowed_ones():
    text = argument_problems("list_assets", Args, {"asset_id": "a", "limit": 50, "assetType": "SEGMENT"})
    assert text is not None
    assert "'limit', 'assetType'" in text and "asset_id, first, type, items" in text


def test_validation_errors_are_plain_words_without_pydantic_text():
    text = argument_problems("get_asset", Args, {})
    assert text == "get_asset was not called: asset_id is required."
    text = argument_problems("t", Args, {"asset_id": "a", "first": 0})
    assert text is not None and "first must be at least 1 (got 0)" in text
    text = argument_problems("t", Args, {"asset_id": "a", "first": "many"})
    assert text is not None and "first must be a whole number" in text
    text = argument_problems("t", Args, {"asset_id": "a", "items": [{"assetId": "x", "depthPctWt": 120, "foo": 1}]})
    assert text is not None and "items[0].depthPctWt must be at most 100" in text
    assert "items[0].foo is not a known field; allowed: assetId, depthPctWt" in text
    for t in (text, argument_problems("get_asset", Args, {})):
        assert "pydantic" not in t and "http" not in t and "For further information" not in t
