// Client setup: ready-to-copy configuration of each MCP client for the workspace endpoint
// and for each connection's own endpoint (/mcp/{workspaceId}/servers/{handle}): the URL and
// each client's URL-only set-up first, then, for clients without OAuth, the header set-up
// with an MCP access token created on this page (masked until revealed; Copy copies the
// real text), and the person's tokens with Revoke. Never the console's own token.
// shared/clientsetup builds the same text for the `make run` banner (the browser test
// compares them).

import { useEffect, useState } from 'preact/hooks';
import { ClientConfigs } from '../components/clientconfigs.jsx';
import { TokenList } from '../components/mcptokens.jsx';
import { endpoint, rpc } from '../mcp.js';
import { ErrorBox, markReady, useLoad } from '../ui.jsx';

export function Setup({ ctx }) {
  const ws = endpoint(ctx.ws);
  // Each connection's own endpoint, from the gateway's agentpack_connections_list (members
  // may call it; the REST list is for admins).
  const [conns] = useLoad(async () => {
    const r = await rpc(ws, 'tools/call', { name: 'agentpack_connections_list', arguments: {} });
    const env = r.structuredContent || {};
    if (!env.ok) throw Object.assign(new Error((env.error && env.error.message) || 'connections unavailable'), { code: env.error && env.error.code });
    return env.data.connections.filter((c) => c.enabled !== false);
  }, [ctx.ws]);
  const [which, setWhich] = useState('');
  const [made, setMade] = useState(0);
  useEffect(() => {
    if (!conns.loading) markReady('setup');
  }, [conns]);
  const list = conns.data || [];
  const url = which ? endpoint(ctx.ws, which) : ws;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Client setup</h1>
      <p>
        Point an MCP client at the gateway's URL. The workspace endpoint serves every tool you may call here (built-ins
        and every connection); a connection's own endpoint serves only that server, with its resources and prompts.
      </p>
      <ErrorBox error={conns.error} />
      <div class="field">
        <label for="setup-endpoint">Endpoint</label>
        <select id="setup-endpoint" value={which} onChange={(e) => setWhich(e.currentTarget.value)}>
          <option value="">Whole workspace (all tools)</option>
          {list.map((c) => (
            <option key={c.id} value={c.handle}>
              {c.name} only (servers/{c.handle})
            </option>
          ))}
        </select>
      </div>
      <ClientConfigs url={url} id="setup" key={url} ws={ctx.ws} onTokenCreated={() => setMade((n) => n + 1)} />
      <TokenList reloadKey={made} />
    </section>
  );
}
