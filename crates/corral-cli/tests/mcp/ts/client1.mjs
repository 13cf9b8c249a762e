// The TypeScript SDK 1.x (`@modelcontextprotocol/sdk`) as a client of
// `corral-cli mcp`: the `initialize` handshake, elicitation as a request
// from the server.
//
//     node client1.mjs CORRAL_CLI ROOT
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { answer, run, serverParams } from './scenario.mjs';

const client = new Client(
  { name: 'corral-test-ts1', version: '1.0.0' },
  { capabilities: { elicitation: { form: {} } } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => answer(request.params.message));
const transport = new StdioClientTransport(serverParams(getDefaultEnvironment));
// The SDK hands a transport that takes it the version the handshake
// agreed on (the HTTP one sends it as a header); this one keeps it.
let agreed = null;
transport.setProtocolVersion = (version) => {
  agreed = version;
};
await client.connect(transport);
await run(client, 'typescript @modelcontextprotocol/sdk 1', () => agreed);
