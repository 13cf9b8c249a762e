"""The official Python SDK as a client that can be asked (MCP elicitation)
and follows progress: `corral-cli mcp` in the default `ask` mode asks it
before a write, and streams a command's output as progress notifications.
Prints one JSON report for the Rust test.

    asks.py CORRAL_CLI ROOT STORE ANSWER   (ANSWER: accept or decline)
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main(cli, root, store, answer):
    asked = []

    async def elicit(context, params):
        asked.append({"message": params.message, "schema": params.requested_schema})
        if answer == "accept":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")

    progress = []

    async def on_progress(value, total, message):
        progress.append({"progress": value, "message": message})

    params = StdioServerParameters(command=cli, args=["mcp", "--root", root, "--store", store])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicit) as session:
            await session.initialize()
            wrote = await session.call_tool("write_file", {"path": "asked.txt", "content": "yes\n"})
            ran = await session.call_tool(
                "exec_shell",
                {"command": "node", "args": ["-e", "for (let i = 1; i <= 3; i++) console.log('tick ' + i)"]},
                progress_callback=on_progress,
            )
            print(json.dumps({
                "asked": asked,
                "write": {"is_error": wrote.is_error, "structured": wrote.structured_content},
                "shell": {"is_error": ran.is_error, "structured": ran.structured_content},
                "progress": progress,
            }))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
