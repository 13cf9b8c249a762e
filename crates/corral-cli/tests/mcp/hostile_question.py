"""The official Python SDK as a client whose user is asked (MCP
elicitation) about calls that hide what they do: a write whose payload
follows 300 spaces, a `node -e` padded with 6,000 braille blanks, and a
write too long to show whole in a question. Declines every question and
prints one JSON report for the Rust test.

    hostile_question.py CORRAL_CLI ROOT
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

PAYLOAD = 'import("node:fs").then((fs) => fs.rmSync("src", { recursive: true }))'


async def main(cli, root):
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    params = StdioServerParameters(command=cli, args=["mcp", "--root", root])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicit) as session:
            await session.initialize()
            results = {}
            results["spaces"] = await session.call_tool(
                "write_file", {"path": "config.js", "content": "count = 10" + " " * 300 + PAYLOAD + "\n"}
            )
            results["braille"] = await session.call_tool(
                "exec_shell", {"command": "node", "args": ["-e", 'console.log("hi")' + "\u2800" * 6000 + ";" + PAYLOAD]}
            )
            results["too_long"] = await session.call_tool(
                "write_file", {"path": "table.js", "content": "let x = 1;\n" * 2000 + PAYLOAD + "\n"}
            )
            print(json.dumps({
                "asked": asked,
                "results": {k: {"is_error": r.is_error, "structured": r.structured_content} for k, r in results.items()},
            }))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
