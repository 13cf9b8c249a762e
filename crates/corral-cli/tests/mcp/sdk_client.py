"""The official Python SDK, either line, as a client of `corral-cli mcp`:
2.x through its `Client` (which probes `server/discover` and falls back
to `initialize`), 1.x through `ClientSession` (`initialize`, the only
lifecycle it has). Prints one JSON report for the Rust test: the
protocol version agreed on, the tools, a read, and two writes the
default mode asks about, answered by elicitation: `yes.txt` approved,
`no.txt` declined.

    sdk_client.py CORRAL_CLI ROOT
"""

import asyncio
import json
import os
import sys

import mcp
from mcp import StdioServerParameters
from mcp.client.stdio import get_default_environment

try:
    from mcp import Client  # 2.x
except ImportError:  # 1.x
    Client = None

try:
    import mcp_types as types  # 2.x
except ImportError:
    import mcp.types as types  # 1.x

QUESTIONS = []


async def answer(_context, params):
    """Approves the write of yes.txt, declines anything else."""
    QUESTIONS.append(params.message)
    if "yes.txt" in params.message:
        return types.ElicitResult(action="accept", content={"approve": True})
    return types.ElicitResult(action="decline")


def field(obj, *names):
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    return None


def outcome(result):
    return {
        "is_error": bool(field(result, "is_error", "isError")),
        "structured": field(result, "structured_content", "structuredContent"),
    }


async def scenario(call, list_tools):
    listed = await list_tools()
    return {
        "tools": [tool.name for tool in listed.tools],
        "read": outcome(await call("read_file", {"path": "a.txt"})),
        "yes": outcome(await call("write_file", {"path": "yes.txt", "content": "approved\n"})),
        "no": outcome(await call("write_file", {"path": "no.txt", "content": "declined\n"})),
    }


async def main(cli, root):
    env = {**get_default_environment(), "XDG_DATA_HOME": os.environ["XDG_DATA_HOME"]}
    params = StdioServerParameters(command=cli, args=["mcp", "--root", root], env=env)
    if Client is not None:
        async with Client(params, mode="auto", elicitation_callback=answer) as client:
            report = await scenario(client.call_tool, client.list_tools)
            report["protocol"] = client.protocol_version
            report["server"] = client.server_info.name
    else:
        from mcp import ClientSession
        from mcp.client.stdio import stdio_client

        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=answer) as session:
                init = await session.initialize()
                report = await scenario(session.call_tool, session.list_tools)
                report["protocol"] = init.protocolVersion
                report["server"] = init.serverInfo.name
    report["sdk"] = "python " + __import__("importlib.metadata").metadata.version("mcp")
    report["questions"] = QUESTIONS
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
