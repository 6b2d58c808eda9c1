"""What every tool family shares: how a tool is registered, how it reaches the gateway, how its answer is sized."""

from __future__ import annotations

import csv
import functools
import io
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, ResourceLink, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from ..budget import DEFAULT_RESULT_TOKENS, estimate_tokens, fitting_count, shorten_to_budget, tidy, to_text
from ..client import LinepackError
from ..models import AssetRef
from ..operations import OperationLibrary
from ..settings import Settings

if TYPE_CHECKING:
    from ..state import AppState

MAX_PAGE = 100
# A CSV resource holds at most this many rows, read from the API this many at a time (its largest page): 10 requests
# at most, a small share of any tier's rate limit.
MAX_EXPORT_ROWS = 5000
EXPORT_PAGE = 500
# Tokens kept free in a page that may offer its export (the `export` member and the resource link).
EXPORT_ROOM = 400
WRITE_TOOLS = ("create_asset", "update_asset", "record_measurements")

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# Writes: never destructive unless they can overwrite or end something.
CREATE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
UPDATE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
RECORD = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def _result(model: BaseModel, *, drop_nulls: bool = True, round_numbers: bool = True,
            max_tokens: int = DEFAULT_RESULT_TOKENS) -> CallToolResult:
    """The answer: structured content and the text the model reads are the same JSON (numbers rounded to what their
    unit warrants, nulls left out by default), never longer than `max_tokens` (budget.estimate_tokens)."""
    data = model.model_dump(mode="json")
    # Unrounded answers (graphql_query's) keep their nulls too: nothing to tidy.
    data = tidy(data, drop_nulls=drop_nulls) if round_numbers else data
    return _fitted(data, max_tokens)


def _fitted(data: dict[str, Any], max_tokens: int) -> CallToolResult:
    if estimate_tokens(to_text(data)) > max_tokens:
        # No cursor to continue from (list tools trim their pages themselves): say what was left out and how to ask
        # for less, rather than go over the budget.
        data, dropped = shorten_to_budget(data, max_tokens - 200)
        data["shortenedLists"] = dropped
        data["shortened"] = (f"Over the {max_tokens}-token answer budget: the end of the longest lists was left out "
                             f"({', '.join(f'{n} of {path}' for path, n in dropped.items())}). Ask for less: a filter, "
                             f"fewer words or limit, or graphql_query with only the fields you need.")
    return CallToolResult(content=[TextContent(type="text", text=to_text(data))], structured_content=data)


# Arguments every list tool takes: which fields of each item the answer carries.
ViewArg = Annotated[Literal["compact", "full"], Field(
    description="compact (default): the fields a review needs; full: every field the API gives for each item.")]
FieldsArg = Annotated[list[str] | None, Field(
    description="Exactly these fields of each item (the API's names, e.g. [\"id\", \"name\", \"maopKpa\"]); "
    "overrides view. An unknown name is refused with the list of allowed ones.")]


def _check_fields(tool: str, fields: list[str] | None, allowed: tuple[str, ...]) -> None:
    """Refuses an unknown field name before anything is asked of the API."""
    unknown = [f for f in fields or () if f not in allowed]
    if unknown:
        raise ToolError(f"{tool} items have no field {', '.join(repr(f) for f in unknown)}. The fields are: "
                        f"{', '.join(allowed)}.")


def _select(items: list[dict[str, Any]], *, view: str, fields: list[str] | None, compact: tuple[str, ...],
            key: str) -> list[dict[str, Any]]:
    """Each item cut to the fields asked for (checked with _check_fields first); the identifying `key` always stays
    first, so an item can be named."""
    if fields:
        keep = tuple(dict.fromkeys((key, *fields)))
    elif view == "full":
        return items
    else:
        keep = compact
    return [{k: item[k] for k in keep if k in item} for item in items]


def as_data(text: Any) -> str:
    """Text from the tenant's records (a name, a note) inside a sentence of ours, fenced as data: a JSON string, so
    quotes and line breaks in it cannot end it or pass for the server's own words."""
    return json.dumps(str(text), ensure_ascii=False)


def _utc(dt: datetime | None) -> str | None:
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}



def _found_asset(data: dict[str, Any], asset_id: str) -> dict[str, Any]:
    """The `asset` of a query result, or an error the model can act on when the tenant has no such asset."""
    asset = data.get("asset")
    if asset is None:
        raise ToolError(
            f"No asset with id {asset_id!r} in this tenant (NOT_FOUND). Find ids with search_assets "
            f"or list_assets."
        )
    return asset


def _asset_ref(asset: dict[str, Any]) -> AssetRef:
    return AssetRef(id=asset["id"], name=asset.get("name"), type=asset.get("type"))


def _assessment_item(node: dict[str, Any]) -> dict[str, Any]:
    """An assessment with its measurement's id and position at the top level: the id once, not twice."""
    item = {k: v for k, v in node.items() if k != "measurement"}
    measurement = node.get("measurement") or {}
    return {"measurementId": measurement.get("id"),
            **{k: v for k, v in measurement.items() if k != "id" and k not in item}, **item}



def _next_hint(tool: str, page_info: dict[str, Any], **same: Any) -> str | None:
    if not page_info.get("hasNextPage"):
        return None
    args = ", ".join(f"{k}={v!r}" for k, v in same.items() if v is not None)
    prefix = f"{args}, " if args else ""
    return f"More results: call {tool}({prefix}after={page_info.get('endCursor')!r})"


def _tool_errors(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """Let a LinepackError reach the model: the SDK shows the text of ToolError only."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(*args, **kwargs)
        except LinepackError as exc:
            raise ToolError(exc.message) from exc

    return wrapper


def _resource_errors(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(*args, **kwargs)
        except (LinepackError, ToolError) as exc:
            raise ResourceError(str(getattr(exc, "message", exc))) from exc

    return wrapper


# The credential of the MCP request being handled, when serving over HTTP (set by RequestCredentials).


@dataclass(frozen=True)
class Export:
    """A list's every item as a CSV resource, offered by a list tool whose answer cannot hold them all: the client
    reads it (to save, attach or show) without it passing through the model's context."""

    uri: str
    name: str
    description: str

    def offer(self, result: CallToolResult, data: dict[str, Any], total: int) -> None:
        rows = f"{total} rows" if total <= MAX_EXPORT_ROWS else f"the first {MAX_EXPORT_ROWS} of {total} rows"
        items = data.pop("items", [])
        data["export"] = {"uri": self.uri, "mimeType": "text/csv", "rows": min(total, MAX_EXPORT_ROWS),
                          "use": f"{self.description} ({rows}), as CSV: read this resource (or let the user open it) "
                                 f"instead of paging through them here."}
        data["items"] = items  # the items stay last, after everything that says what they are
        result.structured_content = data
        result.content = [TextContent(type="text", text=to_text(data)),
                          ResourceLink(type="resource_link", uri=self.uri, name=self.name, mime_type="text/csv",
                                       description=f"{self.description}, as CSV ({rows})")]


def csv_text(rows: list[dict[str, Any]]) -> str:
    """Rows as CSV: nested objects flattened (asset.id), lists joined with '; ', numbers rounded as in answers."""
    flat: list[dict[str, Any]] = []
    for row in tidy(rows, key="items"):
        out: dict[str, Any] = {}

        def put(prefix: str, value: Any) -> None:
            if isinstance(value, dict):
                for k, v in value.items():
                    put(f"{prefix}.{k}" if prefix else k, v)
            elif isinstance(value, list):
                out[prefix] = "; ".join(json.dumps(v) if isinstance(v, (dict, list)) else str(v) for v in value)
            else:
                out[prefix] = value

        put("", row)
        flat.append(out)
    columns = list(dict.fromkeys(k for row in flat for k in row))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(flat)
    return buffer.getvalue()


class Toolkit:
    """What a tool family's `register` is given: the server to add its tools to, the caller's gateway client (through
    `state`), the operations, and the helpers that size every answer to the budget."""

    def __init__(self, mcp: MCPServer[AppState], settings: Settings, state: AppState, ops: OperationLibrary) -> None:
        self.mcp = mcp
        self.settings = settings
        self.state = state
        self.ops = ops

    def tool(self, **kw: Any) -> Callable[[Callable[..., Awaitable[Any]]], Any]:
        def register(fn: Callable[..., Awaitable[Any]]) -> Any:
            # With writes off the tools that change data are not offered at all (not merely refused).
            if fn.__name__ in WRITE_TOOLS and not self.settings.writes:
                return fn
            self.mcp.tool(**kw)(_tool_errors(fn))
            return fn

        return register

    def resource(self, uri: str, **kw: Any) -> Callable[[Callable[..., Awaitable[Any]]], Any]:
        def register(fn: Callable[..., Awaitable[Any]]) -> Any:
            self.mcp.resource(uri, **kw)(_resource_errors(fn))
            return fn

        return register

    async def run_read(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.state.client.query_data(query, variables, read_only=True)

    async def run_write(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.state.client.query_data(query, variables, read_only=False)

    async def fetch_asset(self, asset_id: str, operation: str = "LinepackAsset") -> dict[str, Any]:
        data = await self.run_read(self.ops[operation], {"id": asset_id})
        return _found_asset(data, asset_id)

    async def export_rows(self, query: str, variables: dict[str, Any],
                          connection: Callable[[dict[str, Any]], dict[str, Any]],
                          item: Callable[[dict[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
        """Every item of a paginated list (at most MAX_EXPORT_ROWS), read EXPORT_PAGE at a time."""
        rows: list[dict[str, Any]] = []
        after: str | None = None
        while len(rows) < MAX_EXPORT_ROWS:
            conn = connection(await self.run_read(query, {**variables, "first": EXPORT_PAGE, "after": after}))
            rows.extend(item(edge["node"]) for edge in conn["edges"])
            if not conn["pageInfo"].get("hasNextPage"):
                break
            after = conn["pageInfo"]["endCursor"]
        return rows[:MAX_EXPORT_ROWS]

    def answer(self, model: BaseModel, **kw: Any) -> CallToolResult:
        return _result(model, max_tokens=self.settings.result_tokens, **kw)

    def page_answer(self, page_model: type[BaseModel], head: dict[str, Any], conn: dict[str, Any],
                    items: list[dict[str, Any]], tool: str, same: dict[str, Any],
                    export: Export | None = None) -> CallToolResult:
        """A page as many items as fit the budget: when fewer than asked for fit, the cursor is the last shown item's
        own (every edge has one), so the next call continues exactly there. With `export`, a list longer than what
        the answer shows also offers all of it as a CSV resource."""
        budget = self.settings.result_tokens
        edges, info = conn["edges"], conn["pageInfo"]
        tidied = tidy(items, key="items")  # once, not at every step of the search below

        def build(k: int) -> dict[str, Any]:
            more = k < len(items) or bool(info.get("hasNextPage"))
            end = edges[k - 1]["cursor"] if k else info.get("endCursor")
            page_info = {"hasNextPage": more, "endCursor": end if more else info.get("endCursor")}
            body: dict[str, Any] = {**head, "totalCount": conn["totalCount"], "pageInfo": page_info,
                                    "next": _next_hint(tool, page_info, **same)}
            if k < len(items):
                body["shortened"] = (f"{k} of the {len(items)} items of this page fit the {budget}-token "
                                     f"answer budget; `next` continues after the last one shown. Ask for fewer fields "
                                     f"(fields=[...]) or a filter to see more at once.")
            return {**tidy(body), "items": tidied[:k]}

        # Room for the export's few lines, so offering it never takes the answer over the budget.
        room = budget - (EXPORT_ROOM if export is not None else 0)
        fitting = fitting_count(build, len(items), room)
        data = build(max(fitting, min(1, len(items))))
        page_model.model_validate(data)  # what the output schema promises, checked before it is sent
        result = _fitted(data, room)
        total = int(conn["totalCount"])
        if export is not None and total > len(data.get("items", ())):
            export.offer(result, dict(result.structured_content or data), total)
        return result
