// A minimal MCP client for the console's playground and client setup: one JSON-RPC POST
// per call to the gateway's own endpoint (/mcp/{workspaceId}, or .../servers/{handle}) with
// the signed-in user's token, as any stateless Streamable HTTP client does (the gateway
// issues no session). An answer may come as JSON or as a one-event text/event-stream.

import { freshToken } from './auth.js';

export const PROTOCOL_VERSION = '2025-11-25';

export class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

let seq = 0;

// endpoint is the MCP URL of workspace ws, or of one of its connections (handle or id).
export function endpoint(ws, server) {
  return location.origin + '/mcp/' + encodeURIComponent(ws) + (server ? '/servers/' + encodeURIComponent(server) : '');
}

// rpc sends method with params to url and returns the JSON-RPC result; a JSON-RPC error
// throws RpcError, an HTTP failure without a JSON-RPC body throws Error with the status.
export async function rpc(url, method, params) {
  const id = ++seq;
  const r = await fetch(url, {
    method: 'POST',
    headers: {
      Authorization: 'Bearer ' + (await freshToken()),
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': PROTOCOL_VERSION,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: params || {} }),
  });
  const text = await r.text();
  let msg = null;
  if ((r.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
    // The answer is the event whose data is the response to our id (notifications may precede it).
    for (const block of text.split(/\r?\n\r?\n/)) {
      const data = block
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n');
      if (!data) continue;
      try {
        const m = JSON.parse(data);
        if (m.id === id) msg = m;
      } catch {
        /* not JSON: skip */
      }
    }
  } else if (text) {
    try {
      msg = JSON.parse(text);
    } catch {
      msg = null;
    }
  }
  if (msg && msg.error) throw new RpcError(msg.error.code, msg.error.message, msg.error.data);
  if (!msg || !('result' in msg)) throw new Error(`HTTP ${r.status}: ${text.slice(0, 200) || 'no answer'}`);
  return msg.result;
}

// listAll follows nextCursor through every page of a list method (tools/list, …).
export async function listAll(url, method, key) {
  const out = [];
  let cursor;
  for (let i = 0; i < 50; i++) {
    const res = await rpc(url, method, cursor ? { cursor } : {});
    out.push(...(res[key] || []));
    if (!res.nextCursor) break;
    cursor = res.nextCursor;
  }
  return out;
}
