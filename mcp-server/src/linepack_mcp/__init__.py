"""linepack-mcp: the MCP companion server of the Linepack pipeline-integrity API."""

__version__ = "0.1.0"
