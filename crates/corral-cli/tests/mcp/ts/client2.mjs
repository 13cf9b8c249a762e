// The TypeScript SDK 2.x (`@modelcontextprotocol/client`) as a client of
// `corral-cli mcp`: version negotiation `auto` (`server/discover`, then
// `initialize` for a server without it); elicitation answered in the
// input_required rounds of 2026-07-28.
//
//     node client2.mjs CORRAL_CLI ROOT
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { answer, run, serverParams } from './scenario.mjs';

const client = new Client(
  { name: 'corral-test-ts2', version: '1.0.0' },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
);
client.setRequestHandler('elicitation/create', async (request) => answer(request.params.message));
await client.connect(new StdioClientTransport(serverParams(getDefaultEnvironment)));
await run(client, 'typescript @modelcontextprotocol/client 2', () => client.getNegotiatedProtocolVersion());
