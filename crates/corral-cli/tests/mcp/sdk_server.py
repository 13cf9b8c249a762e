"""An MCP server written with the official Python SDK, either line (2.x's
`MCPServer`, 1.x's `FastMCP`), over stdio, for Corral's MCP client. Its
tools: `echo` {text} says the text back; `protocol` says the protocol
version the call came on as this SDK sees it.
"""

try:
    from mcp.server.mcpserver import Context, MCPServer as Server  # 2.x
except ImportError:
    from mcp.server.fastmcp import Context, FastMCP as Server  # 1.x

server = Server("python-sdk-server")


@server.tool()
def echo(text: str) -> str:
    """Says the text back."""
    return "echo: " + text


@server.tool()
def protocol(ctx: Context) -> str:
    """The protocol version this call came on."""
    version = getattr(ctx, "protocol_version", None)
    if version is None:  # 1.x: what the client asked for at initialize
        version = ctx.session.client_params.protocolVersion
    return str(version)


server.run()
