// ts-sdk2-client.mjs drives the TypeScript SDK v2 client (@modelcontextprotocol/client, pinned
// in package.json) against an MCP endpoint at protocol revision 2026-07-28, for the Go tests
// (cmd/local/stack TestTypeScriptSDK2Client). It is a plain user of the SDK's public API:
//
//   - Client with versionNegotiation {mode: {pin: "2026-07-28"}} and the URL-mode elicitation
//     capability, over StreamableHTTPClientTransport with the bearer token in requestInit;
//   - its elicitation/create handler serves the InputRequiredResult rounds the SDK's
//     multi round-trip driver (ClientOptions.inputRequired, auto-fulfil) dispatches to it: it
//     writes {"elicit":{mode,url,message}} as one line on stdout, waits for one line on stdin
//     (the Go test's consent in the member's "browser": "accept" or "decline") and answers
//     that action; the SDK then retries the call with the byte-exact requestState;
//   - tools via client.callTool, resources via client.listResources / client.readResource;
//   - tasks via @modelcontextprotocol/ext-tasks (createTaskSessionFromClient), whose
//     2026-07-28 form needs a host-owned rawDispatch (see rawDispatch below).
//
// Environment: MCP_URL (required), MCP_TOKEN (bearer), PLAN (JSON array of steps):
//   {"op":"callTool","name":..., "arguments":{...}}
//   {"op":"listResources"}                   every page
//   {"op":"readResource","uri":...}
//   {"op":"taskTool","name":..., "arguments":{...}}   through ext-tasks, settled
// Output: one final line {"done":{"protocolVersion":..., "era":..., "steps":[{op, result|error}]}}.
import { createInterface } from "node:readline";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const url = process.env.MCP_URL;
const token = process.env.MCP_TOKEN || "";
const plan = JSON.parse(process.env.PLAN || "[]");

const lines = createInterface({ input: process.stdin });
const waiting = [];
lines.on("line", (l) => {
  const w = waiting.shift();
  if (w) w(l.trim());
});
const nextLine = () => new Promise((resolve) => waiting.push(resolve));
const emit = (o) => process.stdout.write(JSON.stringify(o) + "\n");

const errorOf = (e) => ({
  name: e?.constructor?.name,
  code: e?.code,
  message: String(e?.message ?? e),
  data: e?.data,
  ...(e?.cause ? { cause: errorOf(e.cause) } : {}),
});

const clientInfo = { name: "agentpack-ts-sdk2-test", version: "1.0.0" };
const capabilities = { elicitation: { url: {} } };
const client = new Client(clientInfo, {
  capabilities,
  versionNegotiation: { mode: { pin: "2026-07-28" } },
});

client.setRequestHandler("elicitation/create", async (request) => {
  const p = request.params;
  emit({ elicit: { mode: p.mode, url: p.url, message: p.message } });
  const action = await nextLine();
  return { action: action === "accept" ? "accept" : "decline" };
});

const headers = token ? { Authorization: "Bearer " + token } : {};
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });

// rawDispatch is ext-tasks' RawClientDispatch, which a 2026-07-28 Tasks server requires
// (sdk-client-adapter.d.ts: "Host-owned request coordinator used when SDK wire codecs reject
// V2 task traffic"). The SDK Client cannot carry it: Client.request rejects any resultType
// other than "complete" / "input_required" (SdkError UNSUPPORTED_RESULT_TYPE "Unsupported
// result type 'task' for tools/call"), even with a schema that accepts anything. So the
// request ext-tasks framed (its _meta declares the tasks extension) goes out on a second SDK
// StreamableHTTPClientTransport: the SDK still derives the MCP-Protocol-Version, Mcp-Method
// and Mcp-Name headers from the body and parses the JSON or SSE answer; this host only picks
// the request id and matches the response to it.
const rawTransport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
const pending = new Map();
rawTransport.onmessage = (m) => {
  const resolve = pending.get(m.id);
  if (resolve) {
    pending.delete(m.id);
    resolve(m);
  }
};
rawTransport.onerror = (e) => {
  for (const resolve of pending.values()) resolve({ transportError: e });
  pending.clear();
};
let rawId = 0;
async function rawDispatch(request, options = {}) {
  const id = "ext-tasks-" + ++rawId;
  const answer = new Promise((resolve) => pending.set(id, resolve));
  options.signal?.addEventListener("abort", () => pending.get(id)?.({ transportError: options.signal.reason }));
  await rawTransport.send({ ...request, jsonrpc: "2.0", id });
  const m = await answer;
  if (process.env.SDK2_DEBUG) process.stderr.write(JSON.stringify({ sent: request, got: m }) + "\n");
  if (m.transportError) throw m.transportError;
  return m.error ? { kind: "error", error: m.error } : { kind: "result", result: m.result };
}

const out = { steps: [] };
try {
  await client.connect(transport);
  await rawTransport.start();
  out.protocolVersion = client.getNegotiatedProtocolVersion?.();
  out.era = client.getProtocolEra?.();
  for (const step of plan) {
    try {
      let result;
      switch (step.op) {
        case "callTool":
          result = await client.callTool({ name: step.name, arguments: step.arguments ?? {} });
          break;
        case "listResources": {
          const all = [];
          let cursor;
          do {
            const page = await client.listResources(cursor ? { cursor } : undefined);
            all.push(...page.resources);
            cursor = page.nextCursor;
          } while (cursor);
          result = { resources: all };
          break;
        }
        case "readResource":
          result = await client.readResource({ uri: step.uri });
          break;
        case "taskTool": {
          const { createTaskSessionFromClient, resultFromTaskOutcome } = await import("@modelcontextprotocol/ext-tasks/client");
          const session = createTaskSessionFromClient(client, {
            endpointId: url,
            rawDispatch,
            v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo, clientCapabilities: capabilities },
          });
          try {
            const execution = await session.callTool(step.name, step.arguments ?? {});
            const { outcome } = await execution.settle();
            result = { outcome, result: resultFromTaskOutcome(outcome) };
          } finally {
            await session.close();
          }
          break;
        }
        default:
          throw new Error("unknown op " + step.op);
      }
      out.steps.push({ op: step.op, result });
    } catch (e) {
      out.steps.push({ op: step.op, error: errorOf(e) });
    }
  }
} catch (e) {
  out.connectError = errorOf(e);
} finally {
  await client.close().catch(() => {});
  await rawTransport.close().catch(() => {});
  // Exit once the last line is written (a pipe write is asynchronous; exiting at once can cut it).
  process.stdout.write(JSON.stringify({ done: out }) + "\n", () => process.exit(0));
}
