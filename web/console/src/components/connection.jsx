// What several pages show of a connection: its connect state, its upstream authorization,
// and the upstream consent step of an install or an add (docs/UPSTREAM-AUTH.md).

import { openAuthorization } from '../api.js';
import { Badge, when } from '../ui.jsx';

// StateBadge is a connection's connect state: Live (this gateway process holds an open
// session to it), Failing (its last connect failed; "Never connected" when none ever
// succeeded), else Ready (it connected and nothing failed since; the gateway opens a
// session on the next call — a stateless gateway keeps none between requests, so a
// connection that just connected is Ready, not "idle": issue 34). Each badge's title says
// so; STATE_LEGEND explains them on the page. A failure is never shown as ready (issue 25).
export function StateBadge({ live, lastError, lastConnectedAt }) {
  if (live)
    return (
      <Badge kind="live" title="A session to this server is open in the gateway now">
        Live
      </Badge>
    );
  if (lastError) return <Badge kind="failed" title={lastError}>{lastConnectedAt ? 'Failing' : 'Never connected'}</Badge>;
  return (
    <Badge kind="idle" title="Connected without error; the gateway opens a session on the next call">
      Ready
    </Badge>
  );
}

// STATE_LEGEND says what the state badges mean.
export const STATE_LEGEND =
  'Live: a session to the server is open in the gateway now. Ready: it connected without error; a session opens on the next call (the gateway keeps none between requests). Failing or Never connected: the last connect failed (the error is shown).';

const AZ_LABEL = { authorized: 'Authorized', required: 'Authorization required', expired: 'Authorization expired' };

// AuthorizationState shows an OAuth connection's upstream authorization: authorized (by
// whom, when), required or expired (with the reason). Nothing for other auth modes.
export function AuthorizationState({ az }) {
  if (!az) return null;
  const st = az.authorization;
  return (
    <>
      <dt>Authorization</dt>
      <dd data-authorization={st}>
        <Badge kind={'az-' + st}>{AZ_LABEL[st] || st}</Badge>
        {st === 'authorized' && az.authorizedBy ? (
          <>
            {' '}by <span data-authorized-by={az.authorizedBy}>{az.authorizedByName || az.authorizedBy}</span> · {when(az.authorizedAt)}
          </>
        ) : null}
        {az.mode === 'oauth_per_user' ? ' (your own grant)' : null}
        {az.reason ? <span class="err-text"> · {az.reason}</span> : null}
      </dd>
    </>
  );
}

// consoleReturnTo is where the upstream-auth callback page links back to: the console's
// Connections page on this origin (the callback is served by the same gateway).
export function consoleReturnTo() {
  return location.origin + '/admin/#/connections';
}

// ConnectStep is the upstream consent step (docs/UPSTREAM-AUTH.md): the connection exists
// but its server answers only with a token, which the gateway gets once someone consents at
// the server's authorization page. Connect leaves the console (same tab); the callback page
// links back to Connections.
export function ConnectStep({ name, url, onLater }) {
  return (
    <div id="connect-step">
      <div class="callout">
        <strong>{name} needs your consent.</strong> Its server uses OAuth: the gateway can call it only after
        someone authorizes it at the server's own sign-in page. Connect opens that page here; afterwards the
        gateway's confirmation page links back to the console.
      </div>
      <p class="help">The link is valid for 10 minutes. You can also authorize later from Connections.</p>
      <div class="actions">
        <button type="button" onClick={onLater}>
          Later
        </button>
        <button type="button" class="primary" id="connect-button" onClick={() => openAuthorization(url)}>
          Connect<span class="sr-only"> {name}</span>
        </button>
      </div>
    </div>
  );
}

// serverUrlProblem says what is wrong with url as an MCP server's URL, or '' when nothing
// the page can see is: empty; no http(s):// scheme (the REST API's "url must use http or
// https"); the catalog's YOUR-HOST placeholder; this gateway's own REST API (same origin,
// /api…), which is not an MCP server. The API checks the same and more.
export function serverUrlProblem(url) {
  const v = url.trim();
  if (!v) return "Enter your server's MCP URL, e.g. https://mcp.example.com/mcp.";
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(v);
  if (!m) return `The URL must start with https:// (or http:// locally): “${v}” has no scheme. For example https://${v.replace(/^\/+/, '')}.`;
  if (!/^https?$/i.test(m[1])) return `The URL must start with https:// (or http:// locally), not ${m[1]}://.`;
  let u;
  try {
    u = new URL(v);
  } catch {
    return 'Enter a full URL, e.g. https://mcp.example.com/mcp.';
  }
  if (/YOUR-HOST/i.test(v)) return "Replace YOUR-HOST with your server's host name.";
  if (u.origin === location.origin && /^\/api(\/|$)/.test(u.pathname)) {
    return "This is the gateway's own REST API URL, not an MCP server's. Enter the URL of the MCP server to connect, e.g. https://mcp.example.com/mcp.";
  }
  return '';
}
