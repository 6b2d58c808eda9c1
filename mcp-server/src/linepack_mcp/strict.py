"""Strict, helpful refusals: unknown arguments, invalid values, missing prompt arguments, write tools switched off.

The SDK ignores arguments a tool does not declare and reports invalid ones as pydantic's own text (with a link to
pydantic's site); a model cannot tell from either what to send instead. This middleware checks every `tools/call`
and `prompts/get` before the SDK does, and answers in plain words naming what is allowed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent
from mcp_types import INVALID_PARAMS
from pydantic import BaseModel, ValidationError

WRITES_OFF = (
    "{name} changes data, and this server was started read-only (LINEPACK_MCP_WRITES=off, the default), so it offers "
    "no tool that writes. To allow writes, whoever starts the server sets LINEPACK_MCP_WRITES=on in its environment "
    "(or runs 'linepack-mcp config --writes on' for a client configuration) and restarts it; the API key also needs "
    "the write scope. Until then, tell the user what you would have changed."
)


def _where(loc: Iterable[Any]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the arguments"


def _allowed_fields(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def _nested_model(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model a nested location points into (e.g. measurements[0] -> MeasurementIn), to name its fields."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)) or part not in current.model_fields:
            return None
        current = _model_in(current.model_fields[part].annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _model_in(annotation: Any) -> Any:
    """The model inside `X | None`, `list[X]` and the like (the annotation itself when there is none)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if isinstance(found, type) and issubclass(found, BaseModel):
            return found
    return annotation


def plain_error(err: dict[str, Any], model: type[BaseModel]) -> str:
    """One pydantic error in words a model can act on: where, what was wrong, what is allowed. No pydantic jargon."""
    loc = tuple(err.get("loc") or ())
    where = _where(loc)
    kind = err.get("type", "")
    ctx = err.get("ctx") or {}
    got = err.get("input")
    shown = f" (got {got!r})" if got is not None and not isinstance(got, (dict, list)) and len(repr(got)) <= 80 else ""
    if kind == "missing":
        return f"{where} is required"
    if kind == "extra_forbidden":
        parent = _nested_model(model, loc[:-1])
        allowed = f"; allowed: {', '.join(_allowed_fields(parent))}" if parent else ""
        return f"{where} is not a known field{allowed}"
    if kind in ("literal_error", "enum"):
        return f"{where} must be one of {ctx.get('expected', 'the listed values')}{shown}"
    bounds = {"greater_than_equal": "at least {ge}", "greater_than": "more than {gt}",
              "less_than_equal": "at most {le}", "less_than": "less than {lt}"}
    if kind in bounds:
        limits = {k: f"{v:g}" if isinstance(v, (int, float)) else v for k, v in ctx.items()}
        return f"{where} must be {bounds[kind].format(**limits)}{shown}"
    if kind in ("too_short", "string_too_short"):
        least = ctx.get("min_length", 1)
        return f"{where} must not be empty" if least == 1 else f"{where} needs at least {least} items or characters"
    if kind in ("too_long", "string_too_long"):
        return f"{where} may hold at most {ctx.get('max_length')} items or characters"
    if kind.startswith("int_"):
        return f"{where} must be a whole number{shown}"
    if kind.startswith("float_") or kind.startswith("decimal_"):
        return f"{where} must be a number{shown}"
    if kind.startswith("bool_"):
        return f"{where} must be true or false{shown}"
    if kind.startswith("datetime_") or kind.startswith("date_"):
        return f"{where} must be a date and time in ISO 8601, e.g. 2026-03-01T00:00:00Z{shown}"
    if kind == "string_type":
        return f"{where} must be text{shown}"
    if kind in ("list_type", "tuple_type"):
        return f"{where} must be a list"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"{where} must be an object"
    message = str(err.get("msg") or "is not valid")
    return f"{where}: {message[0].lower() + message[1:] if message else message}"


def argument_problems(tool_name: str, model: type[BaseModel], arguments: dict[str, Any]) -> str | None:
    """What is wrong with `arguments` for a tool whose argument model is `model`, in words; None when nothing is."""
    allowed = _allowed_fields(model)
    unknown = [k for k in arguments if k not in allowed]
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        return (f"{tool_name} has no argument {names}. Its arguments are: {', '.join(allowed) or '(none)'}. "
                f"Nothing was done; call it again with those names.")
    try:
        model.model_validate(arguments)
    except ValidationError as exc:
        problems = [plain_error(e, model) for e in exc.errors(include_url=False)]
        return f"{tool_name} was not called: " + "; ".join(problems[:10]) + "."
    return None


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


class StrictRequests:
    """MCP server middleware: refuses a bad `tools/call` or `prompts/get` with a message saying how to fix it."""

    def __init__(self, server: Any, *, writes: bool, write_tools: Iterable[str]) -> None:
        self.server = server
        self.writes = writes
        self.write_tools = set(write_tools)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = dict(ctx.params or {})
        if ctx.method == "tools/call":
            refusal = self._tool_refusal(str(params.get("name")), params.get("arguments") or {})
            if refusal is not None:
                return _error(refusal)
        elif ctx.method == "prompts/get":
            self._check_prompt(str(params.get("name")), params.get("arguments") or {})
        return await call_next(ctx)

    def _tool_refusal(self, name: str, arguments: Any) -> str | None:
        tool = self.server._tool_manager.get_tool(name)
        if tool is None:
            if name in self.write_tools and not self.writes:
                return WRITES_OFF.format(name=name)
            names = sorted(t.name for t in self.server._tool_manager.list_tools())
            return f"There is no tool {name!r}. The tools are: {', '.join(names)}."
        if not isinstance(arguments, dict):
            return f"{name} takes its arguments as an object of name/value pairs."
        model = tool.fn_metadata.arg_model
        return argument_problems(name, model, tool.fn_metadata.pre_parse_json(arguments))

    def _check_prompt(self, name: str, arguments: Any) -> None:
        prompt = self.server._prompt_manager.get_prompt(name)
        if prompt is None:
            names = sorted(self.server._prompt_manager._prompts)
            raise MCPError(INVALID_PARAMS, f"There is no prompt {name!r}. The prompts are: {', '.join(names)}.")
        declared = {a.name: a for a in prompt.arguments or []}
        given = arguments if isinstance(arguments, dict) else {}
        unknown = [k for k in given if k not in declared]
        missing = [a for a in declared.values() if a.required and not str(given.get(a.name) or "").strip()]
        if not unknown and not missing:
            return
        parts = []
        if missing:
            parts.append("it needs " + "; ".join(
                f"{a.name} ({a.description})" if a.description else a.name for a in missing))
        if unknown:
            parts.append(f"it has no argument {', '.join(repr(k) for k in unknown)} "
                         f"(its arguments: {', '.join(declared) or 'none'})")
        raise MCPError(INVALID_PARAMS, f"The prompt {name} cannot be made: {' and '.join(parts)}.")
