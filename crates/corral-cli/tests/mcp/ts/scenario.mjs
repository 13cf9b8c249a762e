// The scenario the TypeScript SDKs' clients run against `corral-cli mcp`,
// the same as sdk_client.py's: the tools, a read, and two writes the
// default mode asks about, answered by elicitation (`yes.txt` approved,
// `no.txt` declined). Prints one JSON report for the Rust test.

export const questions = [];

/** The answer to an elicitation: approves the write of yes.txt only. */
export function answer(message) {
  questions.push(message);
  return message.includes('yes.txt')
    ? { action: 'accept', content: { approve: true } }
    : { action: 'decline' };
}

/** The server's command from this script's arguments: CORRAL_CLI ROOT. */
export function serverParams(getDefaultEnvironment) {
  const [cli, root] = process.argv.slice(2, 4);
  return {
    command: cli,
    args: ['mcp', '--root', root],
    env: { ...getDefaultEnvironment(), XDG_DATA_HOME: process.env.XDG_DATA_HOME },
    stderr: 'inherit',
  };
}

function outcome(result) {
  return { is_error: Boolean(result.isError), structured: result.structuredContent ?? null };
}

export async function run(client, sdk, protocol) {
  const listed = await client.listTools();
  const call = async (name, args) => outcome(await client.callTool({ name, arguments: args }));
  const report = {
    sdk,
    tools: listed.tools.map((tool) => tool.name),
    read: await call('read_file', { path: 'a.txt' }),
    yes: await call('write_file', { path: 'yes.txt', content: 'approved\n' }),
    no: await call('write_file', { path: 'no.txt', content: 'declined\n' }),
    protocol: protocol(),
    server: client.getServerVersion()?.name ?? null,
    questions,
  };
  await client.close();
  console.log(JSON.stringify(report));
}
