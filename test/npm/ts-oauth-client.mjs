#!/usr/bin/env node
// ts-oauth-client.mjs — the official TypeScript SDK client signing in by itself: its
// StreamableHTTPClientTransport with an OAuthClientProvider, against the gateway's own
// authorization server (docs/AUTH.md), with no token given. The SDK does the whole MCP
// authorization discovery: the 401 challenge, RFC 9728 and RFC 8414 metadata, client
// registration (RFC 7591 dynamic registration, or a Client ID Metadata Document when
// MCP_CLIENT_METADATA_URL is set and the server supports it), PKCE S256 and `resource`.
//
// The browser step is the Go test's: this script prints the authorization URL the SDK
// asked to open, as one line `AUTHORIZE <url>`, and reads the URL the browser was sent back
// to (the redirect URI with code, state and RFC 9207 iss) from one line of stdin. Then it finishes the flow
// (transport.finishAuth), connects, lists tools, calls one, and prints one line
// `RESULT <json>`: {"clientId", "scope" (the token response's), "authMethod" (the
// registered token_endpoint_auth_method), "hasSecret" (the registration returned a
// client_secret), "tools": [names],
// "call": CallToolResult | {"error"}}.
//
// Inputs: argv[2] the MCP endpoint URL; env MCP_REDIRECT_URL (default
// http://127.0.0.1:9/callback), MCP_CLIENT_METADATA_URL (optional), MCP_TOOL and
// MCP_TOOL_ARGS (JSON) for the call; MCP_TOKEN_AUTH_METHOD (default none): the
// provider's clientMetadata.token_endpoint_auth_method — client_secret_post or
// client_secret_basic make it a confidential client, which the SDK then authenticates at
// the token endpoint with the secret the registration returned; MCP_SDK=v2 runs the v2
// client (@modelcontextprotocol/client) instead of 1.x (@modelcontextprotocol/sdk), with
// the same provider; MCP_NO_STATE=1 leaves out the provider's optional state(), as the
// SDK's own example provider (simpleOAuthClientProvider) does, so the SDK sends no `state`
// at all; MCP_STATE sets the state() value (default a random one).
import readline from 'node:readline';

const v2 = process.env.MCP_SDK === 'v2';
const { Client, StreamableHTTPClientTransport, UnauthorizedError } = v2
  ? await import('@modelcontextprotocol/client')
  : {
    ...(await import('@modelcontextprotocol/sdk/client/index.js')),
    ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
    ...(await import('@modelcontextprotocol/sdk/client/auth.js')),
  };

const url = new URL(process.argv[2]);
const redirectUrl = process.env.MCP_REDIRECT_URL || 'http://127.0.0.1:9/callback';
const metadataUrl = process.env.MCP_CLIENT_METADATA_URL || undefined;
const authMethod = process.env.MCP_TOKEN_AUTH_METHOD || 'none';
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

let info, tokens, verifier, discovery;
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return {
      client_name: 'TypeScript SDK test client', redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      token_endpoint_auth_method: authMethod,
    };
  },
  clientMetadataUrl: metadataUrl,
  clientInformation: () => info,
  saveClientInformation: (i) => { info = i; },
  tokens: () => tokens,
  saveTokens: (t) => { tokens = t; },
  redirectToAuthorization: (u) => { process.stdout.write('AUTHORIZE ' + u.toString() + '\n'); },
  saveCodeVerifier: (v) => { verifier = v; },
  codeVerifier: () => verifier,
  // v2 (SEP-2352): the discovery result kept across the browser leg, to bind the callback to
  // the authorization server it started with.
  saveDiscoveryState: (d) => { discovery = d; },
  discoveryState: () => discovery,
};

if (process.env.MCP_NO_STATE !== '1') {
  provider.state = () => process.env.MCP_STATE || 'st-' + Math.random().toString(36).slice(2, 12);
}

const transport = () => new StreamableHTTPClientTransport(url, { authProvider: provider });
let client = new Client({ name: 'ts-oauth-client', version: '1.0.0' });
try {
  await client.connect(transport());
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
  // The line is the redirect URI the browser was sent back to: code, state, iss.
  const { value: back } = await lines.next();
  const q = new URL(String(back).trim()).searchParams;
  if (v2) {
    await transport().finishAuth(q.get('code'), q.get('iss') ?? undefined);
  } else {
    await transport().finishAuth(q.get('code'));
  }
  client = new Client({ name: 'ts-oauth-client', version: '1.0.0' });
  await client.connect(transport());
}
const out = { clientId: info?.client_id, scope: tokens?.scope, authMethod: info?.token_endpoint_auth_method, hasSecret: typeof info?.client_secret === 'string' };
out.tools = (await client.listTools()).tools.map((t) => t.name);
if (process.env.MCP_TOOL) {
  try {
    out.call = await client.callTool({ name: process.env.MCP_TOOL, arguments: JSON.parse(process.env.MCP_TOOL_ARGS || '{}') });
  } catch (e) {
    out.call = { error: String(e?.message || e) };
  }
}
await client.close();
// Exit once the line is written (a pipe write is asynchronous; exiting at once can cut it).
process.stdout.write('RESULT ' + JSON.stringify(out) + '\n', () => process.exit(0));
