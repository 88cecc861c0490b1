#!/usr/bin/env node
// ts-client.mjs — "the official TypeScript SDK client" for the Go end-to-end tests.
//
// Connects to an MCP server over Streamable HTTP with @modelcontextprotocol/sdk's Client and
// StreamableHTTPClientTransport, runs a plan of steps, prints one JSON document to stdout and
// exits 0 (exit 1 when the connect itself failed; the JSON then has "connectError").
//
// Inputs (argv wins over env):
//   argv[2] | MCP_URL               the MCP endpoint, e.g. http://127.0.0.1:8080/mcp
//   argv[3] | MCP_PLAN              JSON array of steps (default [{"op":"listTools"}])
//   MCP_AUTHORIZATION               value of the Authorization header (e.g. "Bearer eyJ…"), optional
//   MCP_HEADERS                     JSON object of extra request headers, optional
//   MCP_PROTOCOL_VERSION            protocol version to offer in initialize, optional
//                                   (default: the SDK's latest)
//
// Steps: {"op":"listTools"} (follows nextCursor) | {"op":"callTool","name":"echo","arguments":{…}}
//        | {"op":"listResources"} | {"op":"readResource","uri":"…"} | {"op":"listPrompts"}
//        | {"op":"getPrompt","name":"…","arguments":{…}} | {"op":"ping"}
//        | {"op":"request","method":"…","params":{…}} (any method, through Client.request)
//        | {"op":"callToolTask","name":"…","arguments":{…},"ttl":ms} (the SDK's task API:
//          records every stream message — taskCreated, taskStatus, result, error — with atMs)
//
// Output: {"serverInfo":{…},"protocolVersion":"…","steps":[{"op":"…","result":…} |
//          {"op":"…","error":{"code":…,"message":"…","data":…,"mcpError":true|false}}]}
// mcpError tells a JSON-RPC error (the SDK's McpError) from a transport error.
// A failing step does not stop the plan.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, McpError, ResultSchema } from '@modelcontextprotocol/sdk/types.js';

// finish writes text to stdout and exits with code once it is written: stdout is a pipe
// here, and a pipe write is asynchronous, so process.exit right after a large write (a
// tools/list with every schema is over 64 KiB) would cut the output short.
const finish = (text, code) => process.stdout.write(text, () => process.exit(code));

const url = process.argv[2] || process.env.MCP_URL;
const plan = JSON.parse(process.argv[3] || process.env.MCP_PLAN || '[{"op":"listTools"}]');
if (!url || !Array.isArray(plan)) {
  process.stderr.write('usage: node ts-client.mjs URL [PLAN_JSON]  (env MCP_AUTHORIZATION, MCP_HEADERS, MCP_PROTOCOL_VERSION)\n');
  process.exit(2);
}

const headers = JSON.parse(process.env.MCP_HEADERS || '{}');
if (process.env.MCP_AUTHORIZATION) headers.Authorization = process.env.MCP_AUTHORIZATION;

const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
const wantVersion = process.env.MCP_PROTOCOL_VERSION;
if (wantVersion) {
  // The SDK always offers its latest version; rewrite the initialize request to offer ours.
  const send = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    if (msg && msg.method === 'initialize') {
      msg = { ...msg, params: { ...msg.params, protocolVersion: wantVersion } };
    }
    return send(msg, opts);
  };
}

const client = new Client({ name: 'agentpack-ts-client', version: '1.0.0' });

function errorJSON(err) {
  return { code: err?.code ?? null, message: String(err?.message ?? err), data: err?.data ?? null,
    mcpError: err instanceof McpError };
}

async function runStep(step) {
  switch (step.op) {
    case 'listTools': {
      const tools = [];
      let cursor;
      for (let page = 0; page < 100; page++) {
        const res = await client.listTools(cursor ? { cursor } : undefined);
        tools.push(...res.tools);
        if (!res.nextCursor || res.nextCursor === cursor) break;
        cursor = res.nextCursor;
      }
      return { tools };
    }
    case 'callTool':
      return client.callTool({ name: step.name, arguments: step.arguments ?? {} });
    case 'listResources':
      return client.listResources();
    case 'readResource':
      return client.readResource({ uri: step.uri });
    case 'listPrompts':
      return client.listPrompts();
    case 'getPrompt':
      return client.getPrompt({ name: step.name, arguments: step.arguments ?? {} });
    case 'ping':
      return client.ping();
    case 'request':
      return client.request({ method: step.method, params: step.params ?? {} }, ResultSchema);
    case 'callToolTask': {
      // The SDK's task API (experimental in 2025-11-25): a task-augmented tools/call, then
      // tasks/get polling and tasks/result. Every message of the stream is recorded with
      // the milliseconds since the call started.
      const t0 = Date.now();
      const messages = [];
      const stream = client.experimental.tasks.callToolStream(
        { name: step.name, arguments: step.arguments ?? {} }, CallToolResultSchema,
        { task: { ttl: step.ttl ?? 60000 }, timeout: step.timeout ?? 120000 });
      for await (const m of stream) {
        messages.push({ ...m, error: m.error ? errorJSON(m.error) : undefined, atMs: Date.now() - t0 });
      }
      return { messages };
    }
    default:
      throw new Error(`unknown op ${JSON.stringify(step.op)}`);
  }
}

const out = { serverInfo: null, protocolVersion: null, steps: [] };
try {
  await client.connect(transport);
} catch (err) {
  out.connectError = errorJSON(err);
  await new Promise(() => finish(JSON.stringify(out) + '\n', 1));
}
out.serverInfo = client.getServerVersion() ?? null;
out.protocolVersion = transport.protocolVersion ?? null;
for (const step of plan) {
  try {
    out.steps.push({ op: step.op, result: await runStep(step) });
  } catch (err) {
    out.steps.push({ op: step.op, error: errorJSON(err) });
  }
}
await client.close().catch(() => {});
finish(JSON.stringify(out) + '\n', 0);
