// ts-xaa-client.mjs drives the TypeScript SDK v2 client's Enterprise-Managed Authorization
// (Cross App Access, SEP-990) against an MCP endpoint, for the Go tests (cmd/local/stack
// TestTypeScriptSDK2CrossAppAccess). It is a plain user of the SDK's public API:
//
//   1. single sign-on at the identity provider by OpenID Connect (authorization code, the
//      extension's §3): the ID token;
//   2. CrossAppAccessProvider's assertion callback: discoverAndRequestJwtAuthGrant, the
//      RFC 8693 token exchange of that ID token for an ID-JAG at the identity provider,
//      naming the authorization server and the resource the SDK discovered (RFC 9728);
//   3. the SDK presents the ID-JAG at the authorization server's token endpoint (RFC 7523
//      jwt-bearer) and uses the access token: tools/list and one tools/call.
//
// Environment: IDP_URL, IDP_CLIENT_ID, IDP_CLIENT_SECRET, IDP_LOGIN (login_hint),
// MCP_CLIENT_ID (the client's id at the gateway), MCP_CLIENT_SECRET (its secret, for a
// confidential client: the SDK then authenticates with client_secret_basic), MCP_ISSUER (expectedIssuer), MCP_TOOL,
// MCP_TOOL_ARGS (JSON). Argument: the MCP URL.
// Output: one line RESULT {"tools":[...],"call":{...},"exchanges":N,"grantType":...}, or
// ERROR {...} and exit 1.
import { Client, CrossAppAccessProvider, StreamableHTTPClientTransport, discoverAndRequestJwtAuthGrant } from "@modelcontextprotocol/client";

const mcpURL = process.argv[2];
const env = process.env;

// 1. Single sign-on at the identity provider (its /authorize signs in login_hint at once).
async function signIn() {
  const redirect = "http://127.0.0.1:9/callback";
  const md = await (await fetch(new URL("/.well-known/openid-configuration", env.IDP_URL))).json();
  const q = new URLSearchParams({ response_type: "code", client_id: env.IDP_CLIENT_ID, redirect_uri: redirect,
    scope: "openid email", state: "st-" + Date.now(), nonce: "n-" + Date.now(), login_hint: env.IDP_LOGIN });
  const auth = await fetch(md.authorization_endpoint + "?" + q, { redirect: "manual" });
  const code = new URL(auth.headers.get("location")).searchParams.get("code");
  if (!code) throw new Error("the identity provider returned no code: " + auth.status);
  const tok = await fetch(md.token_endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirect,
      client_id: env.IDP_CLIENT_ID, client_secret: env.IDP_CLIENT_SECRET }),
  });
  const body = await tok.json();
  if (!body.id_token) throw new Error("no ID token: " + JSON.stringify(body));
  return body.id_token;
}

let exchanges = 0;
let tokenRequests = [];
// The fetch the SDK uses: records the grant type of each token request (never the
// assertion), so that the test can tell which grant the SDK used.
const recordingFetch = async (input, init) => {
  const u = String(input instanceof Request ? input.url : input);
  if (init?.method === "POST" && u.endsWith("/oauth/token")) {
    tokenRequests.push(new URLSearchParams(String(init.body)).get("grant_type"));
  }
  return fetch(input, init);
};

try {
  const idToken = await signIn();
  const provider = new CrossAppAccessProvider({
    assertion: async (ctx) => {
      exchanges++;
      const r = await discoverAndRequestJwtAuthGrant({
        idpUrl: env.IDP_URL,
        audience: ctx.authorizationServerUrl,
        resource: ctx.resourceUrl,
        idToken,
        clientId: env.IDP_CLIENT_ID,
        clientSecret: env.IDP_CLIENT_SECRET,
        scope: ctx.scope,
        fetchFn: ctx.fetchFn,
      });
      return r.jwtAuthGrant;
    },
    clientId: env.MCP_CLIENT_ID,
    clientSecret: env.MCP_CLIENT_SECRET || undefined,
    expectedIssuer: env.MCP_ISSUER,
    fetchFn: recordingFetch,
  });
  const client = new Client({ name: "agentpack-xaa-test", version: "1.0.0" }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider, fetch: recordingFetch });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const call = await client.callTool({ name: env.MCP_TOOL, arguments: JSON.parse(env.MCP_TOOL_ARGS || "{}") });
  await client.close();
  // Exit once the line is written (a pipe write is asynchronous; exiting at once can cut it).
  await new Promise(() => process.stdout.write("RESULT " + JSON.stringify({ tools, call, exchanges, tokenRequests,
    refreshToken: Boolean(provider.tokens()?.refresh_token) }) + "\n", () => process.exit(0)));
} catch (e) {
  process.stdout.write("ERROR " + JSON.stringify({ message: String(e?.message ?? e), stack: String(e?.stack ?? "") }) + "\n", () => process.exit(1));
}
