#!/usr/bin/env node
// An MCP server written with the TypeScript SDK 1.x
// (`@modelcontextprotocol/sdk`), over stdio, for Corral's MCP client: it
// knows only the `initialize` handshake. Its tools: `echo` {text} says
// the text back; `protocol` says the version its handshake answered with.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'ts-sdk-1-server', version: '1.0.0' }, { capabilities: { tools: {} } });
// The version the SDK answers `initialize` with (the SDK keeps it to
// itself; its handler calls this method, wrapped here to see the answer).
let agreed = null;
const initialize = server._oninitialize.bind(server);
server._oninitialize = async (request) => {
  const result = await initialize(request);
  agreed = result.protocolVersion;
  return result;
};
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'echo',
      description: 'Says the text back.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
    { name: 'protocol', description: 'The protocol version this call came on.', inputSchema: { type: 'object' } },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (request.params.name === 'echo') {
    return { content: [{ type: 'text', text: `echo: ${request.params.arguments?.text}` }] };
  }
  return { content: [{ type: 'text', text: String(agreed) }] };
});
await server.connect(new StdioServerTransport());
