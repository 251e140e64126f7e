#!/usr/bin/env node
// stdio.mjs - a test-bed MCP server over stdio (the SDK's StdioServerTransport):
// newline-delimited JSON-RPC on stdin/stdout, what a config's
// `transport: stdio` server is. whoami answers the env the process got;
// crash exits with status 3; --stats-file F records each start and call
// (a supervisor's restarts can be counted). Tools and options: tools.mjs.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { makeServer, options, statsLine } from './tools.mjs';

const opts = options();
statsLine(opts, `start ${process.pid}`);
const server = makeServer(opts, {
  transport: 'stdio',
  onCall: (t) => statsLine(opts, `call ${t}`),
  crash: () => setImmediate(() => process.exit(3)),
});
await server.connect(new StdioServerTransport());
process.stdin.on('end', () => process.exit(0));
