"""The edges of 2026-07-28 in `corral-cli mcp`, driven by the official
Python SDK 2.x. Prints one JSON report for the Rust test:

- progress: a command's output as progress notifications (full_auto);
- unasked: a write by a client that declared no elicitation;
- asked: the `input_required` result of a write, driven by hand;
- forged: a retry with a requestState the server never gave;
- swapped: the real requestState, on a call with other arguments;
- honest: the real requestState and an approving answer;
- replayed: the same retry once more.

    modern.py CORRAL_CLI ROOT
"""

import asyncio
import json
import os
import sys

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment

APPROVE = {"approve": {"action": "accept", "content": {"approve": True}}}


def outcome(result):
    structured = result.structured_content or {}
    return {"is_error": bool(result.is_error), "code": structured.get("code"), "hint": structured.get("hint")}


async def never_called(_context, params):
    raise AssertionError("the server asked by a request: " + params.message)


async def main(cli, root):
    env = {**get_default_environment(), "XDG_DATA_HOME": os.environ["XDG_DATA_HOME"]}

    def server(mode):
        return StdioServerParameters(command=cli, args=["mcp", "--root", root, "--mode", mode], env=env)

    report = {}
    messages = []

    async def on_progress(_value, _total, message):
        messages.append(message)

    async with Client(server("full_auto"), mode="auto") as client:
        command = {"command": "python3", "args": ["-c", "print('one'); print('two')"]}
        result = await client.call_tool("exec_shell", command, progress_callback=on_progress)
        report["progress"] = {"protocol": client.protocol_version, **outcome(result), "messages": messages}

    async with Client(server("ask"), mode="auto") as client:
        result = await client.call_tool("write_file", {"path": "unasked.txt", "content": "x"})
        report["unasked"] = {"protocol": client.protocol_version, **outcome(result)}

    # A client that can be asked, driving the rounds by hand: the callback
    # fails the run if the server sent a request of its own.
    async with Client(server("ask"), mode="auto", elicitation_callback=never_called) as client:
        session = client.session
        args = {"path": "honest.txt", "content": "honest\n"}
        asked = await session.call_tool("write_file", args, allow_input_required=True)
        report["asked"] = {
            "input_required": isinstance(asked, types.InputRequiredResult),
            "requests": sorted((asked.input_requests or {}).keys()),
            "message": asked.input_requests["approve"].params.message,
        }
        state = asked.request_state
        forged = await session.call_tool("write_file", args, input_responses=APPROVE, request_state="forged")
        report["forged"] = outcome(forged)
        other = {"path": "swapped.txt", "content": "swapped\n"}
        swapped = await session.call_tool("write_file", other, input_responses=APPROVE, request_state=state)
        report["swapped"] = outcome(swapped)
        honest = await session.call_tool("write_file", args, input_responses=APPROVE, request_state=state)
        report["honest"] = outcome(honest)
        replayed = await session.call_tool("write_file", args, input_responses=APPROVE, request_state=state)
        report["replayed"] = outcome(replayed)
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
