"""The official Python SDK as a client of `corral-cli mcp --network`: a
command reaches a domain off the egress allowlist, and the server asks the
client's user about it (MCP elicitation) when the client can be asked.
Prints one JSON report for the Rust test.

    domains.py CORRAL_CLI ROOT ANSWER [SERVER_ARGS...]
    (ANSWER: accept, decline, or none: the client cannot be asked)
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

# A plain HTTP request through the proxy the sandbox offers, to each name
# given; the names resolve nowhere, so only the proxy's judgement counts.
FETCH = """
const http = require('http');
const get = (host) => new Promise((done) => {
  const req = http.request(
    { host: '127.0.0.1', port: 3128, path: 'http://' + host + '/', headers: { Host: host } },
    (res) => { res.resume(); res.on('end', () => done(host + ' ' + res.statusCode)); });
  req.on('error', (e) => done(host + ' error ' + e.message));
  req.end();
});
Promise.all(process.argv.slice(1).map(get)).then((r) => console.log(r.join('\\n')));
"""


async def main(cli, root, answer, server_args):
    asked = []

    async def elicit(context, params):
        asked.append({"message": params.message, "schema": params.requested_schema})
        if answer == "accept":
            return types.ElicitResult(action="accept", content={"allow": True})
        return types.ElicitResult(action="decline")

    callback = None if answer == "none" else elicit
    args = ["mcp", "--root", root, "--no-checkpoint", "--mode", "full_auto", "--network"]
    params = StdioServerParameters(command=cli, args=args + server_args)
    calls = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            await session.initialize()
            # Two connections to the same domain at once, then the same
            # domain again in a second command of the session.
            for hosts in (["elsewhere.invalid", "elsewhere.invalid", "allowed.invalid"],
                          ["elsewhere.invalid"]):
                ran = await session.call_tool(
                    "exec_shell", {"command": "node", "args": ["-e", FETCH] + hosts})
                calls.append({"is_error": ran.is_error, "structured": ran.structured_content})
    print(json.dumps({"asked": asked, "calls": calls}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]))
