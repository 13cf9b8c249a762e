#!/usr/bin/env node
// An MCP server written with the TypeScript SDK 2.x
// (`@modelcontextprotocol/server`), over stdio, for Corral's MCP client;
// `serveStdio` serves either era (`server/discover` or `initialize`).
// Its tools: `echo` {text} says the text back; `protocol` says the
// protocol version the call came on, as its own `_meta` names it.
import { McpServer, PROTOCOL_VERSION_META_KEY, fromJsonSchema } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

serveStdio(() => {
  const server = new McpServer({ name: 'ts-sdk-2-server', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'echo',
    {
      description: 'Says the text back.',
      inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }),
    },
    async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }),
  );
  server.registerTool('protocol', { description: 'The protocol version this call came on.' }, async (ctx) => ({
    content: [{ type: 'text', text: String(ctx.mcpReq.envelope?.[PROTOCOL_VERSION_META_KEY] ?? '(the handshake)') }],
  }));
  return server;
});
