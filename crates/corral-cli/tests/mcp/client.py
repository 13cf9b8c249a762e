"""An independent MCP client (the official Python SDK) talking to
`corral-cli mcp` over stdio. Prints one JSON report for the Rust test:
what initialize, tools/list and a few tools/call answered.

    client.py CORRAL_CLI ROOT MODE
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client


def field(obj, *names):
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    return None


def outcome(result):
    return {
        "is_error": bool(field(result, "is_error", "isError")),
        "structured": field(result, "structured_content", "structuredContent"),
        "text": [c.text for c in result.content if getattr(c, "type", "") == "text"],
    }


async def main(cli, root, mode):
    # The SDK's own few variables (HOME, PATH, ...), and the data folder the
    # tests give the server.
    env = {**get_default_environment(), "XDG_DATA_HOME": os.environ["XDG_DATA_HOME"]}
    params = StdioServerParameters(command=cli, args=["mcp", "--root", root, "--mode", mode], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            listed = await session.list_tools()
            tools = []
            for tool in listed.tools:
                annotations = tool.annotations
                tools.append({
                    "name": tool.name,
                    "description": tool.description,
                    "schema_type": field(tool, "input_schema", "inputSchema").get("type"),
                    "read_only": field(annotations, "read_only_hint", "readOnlyHint") if annotations else None,
                    "destructive": field(annotations, "destructive_hint", "destructiveHint") if annotations else None,
                })
            calls = {
                "read": await session.call_tool("read_file", {"path": "a.txt"}),
                "write": await session.call_tool("write_file", {"path": "b.txt", "content": "no\n"}),
                "outside": await session.call_tool("read_file", {"path": "../outside.txt"}),
                "unknown": await session.call_tool("no_such_tool", {}),
            }
            server = field(init, "server_info", "serverInfo")
            print(json.dumps({
                "server": server.name,
                "tools": tools,
                "calls": {name: outcome(result) for name, result in calls.items()},
            }))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
