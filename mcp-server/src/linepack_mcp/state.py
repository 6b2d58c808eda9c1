"""Per-process state shared by every tool: the gateway connection pool, the schema cache, the caller's client."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.exceptions import ToolError

from .auth import GatewayTokenVerifier, _request_credential
from .client import LinepackClient, new_http_pool
from .oauth import OAuthResourceServer, subject_of
from .sessions import credential_digest
from .settings import Settings

if TYPE_CHECKING:
    from .schema import SchemaCache


class AppState:
    """Per-process state: the HTTP connection pool (made in the server's event loop) and the schema cache."""

    def __init__(self, settings: Settings, *, per_request_credentials: bool = False) -> None:
        self.settings = settings
        self.per_request_credentials = per_request_credentials
        self._schema: SchemaCache | None = None
        self._pool: Any = None
        self._client: LinepackClient | None = None
        #: Over HTTP with hosted sign-in (LINEPACK_MCP_PUBLIC_URL): users' tokens checked and exchanged (oauth.py).
        self.oauth = OAuthResourceServer(settings, self.pool) if per_request_credentials and settings.oauth else None
        #: Over HTTP: the credential check at the MCP endpoint, shared by the session limits and the SDK's auth.
        self.verifier = GatewayTokenVerifier(settings, self.pool, oauth=self.oauth) if per_request_credentials else None
        #: Over HTTP: the session counts and limits /healthz reports (set once the session limits are in place).
        self.session_health: Callable[[], dict[str, Any]] | None = None

    def caller(self) -> str:
        """Who the current request acts for, as a key that holds no credential: the user a token was issued to, or
        the digest of an API key (over stdio, the one configured); with the tenant asked for."""
        credential = self.client.credential
        who = (f"user:{subject_of(credential.token)}" if credential.signed_in
               else f"key:{credential_digest(credential.token)}")
        return f"{who}@{credential.tenant_id or ''}"

    @property
    def schema(self) -> SchemaCache:
        """The API schema, read by introspection (schema.py; graphql-core is imported on first use)."""
        if self._schema is None:
            from .schema import SchemaCache

            self._schema = SchemaCache()
        return self._schema

    @property
    def schema_cached(self) -> bool:
        return self._schema is not None and self._schema.cached is not None

    def pool(self) -> Any:
        if self._pool is None:
            self._pool = new_http_pool(self.settings)
        return self._pool

    @property
    def client(self) -> LinepackClient:
        """A client acting with the current caller's credential: the configured key over stdio, the
        request's own bearer over HTTP."""
        if not self.per_request_credentials:
            if self._client is None:
                self._client = LinepackClient(self.settings, http=self.pool())
            return self._client
        credential = _request_credential.get()
        if credential is None:
            raise ToolError("This MCP request carries no Linepack credential: send 'Authorization: Bearer <your "
                            "Linepack API key or access token>' with every request.")
        return LinepackClient(self.settings, credential=credential, http=self.pool())

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None
            self._client = None
