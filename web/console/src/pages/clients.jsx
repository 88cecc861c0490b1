// Connected clients: the MCP clients people authorized at the gateway's own authorization
// server (docs/AUTH.md "Connected clients"; REST: api.js connectedClients). Everyone sees
// their own, in every workspace, and can revoke any of them; an admin also sees every
// client of the current workspace, by person, and can revoke those. A revoked client's
// refresh token is refused and its next /mcp call gets the 401 challenge again.

import { useEffect, useState } from 'preact/hooks';
import { connectedClients, members } from '../api.js';
import { Badge, ConfirmDialog, ErrorBox, Notice, markReady, useAction, useLoad, when } from '../ui.jsx';

export function ConnectedClients({ ctx }) {
  const [list, reload] = useLoad(async () => {
    const [mine, all, people] = await Promise.all([
      connectedClients.mine(),
      ctx.isAdmin ? connectedClients.inWorkspace(ctx.ws) : null,
      // Names for the admin's table; without them the table shows person ids.
      ctx.isAdmin ? members.list(ctx.ws).catch(() => null) : null,
    ]);
    const names = Object.fromEntries(((people && people.members) || []).filter((m) => m.personId).map((m) => [m.personId, m.name || m.email]));
    return { mine: mine.items, all: all ? all.items : null, names };
  }, [ctx.ws]);
  const [act, message, actionError] = useAction(reload);
  const [revoking, setRevoking] = useState(null);
  useEffect(() => {
    if (!list.loading) markReady('clients');
  }, [list]);

  const off = list.error && list.error.status === 404;
  const d = list.data;
  const others = d && d.all ? d.all.filter((g) => g.personId !== ctx.claims.sub) : [];
  const person = (g) => (g.personId === ctx.claims.sub ? 'You' : (d && d.names[g.personId]) || 'Person ' + g.personId.slice(0, 8));
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Connected clients</h1>
      <p>
        MCP clients (Claude, ChatGPT, VS Code, Cursor…) that signed in to this gateway as you and were allowed on the
        consent page. Revoking one signs it out: its next call is refused and it must ask for consent again.
      </p>
      {message ? <Notice kind={message.kind}>{message.text}</Notice> : null}
      {off ? (
        <Notice kind="warn">This gateway's authorization server is not configured, so no client signs in by itself here.</Notice>
      ) : (
        <ErrorBox error={list.error || actionError} />
      )}
      {d ? (
        <>
          <h2 id="mine-title">Yours</h2>
          <ClientTable id="mine" items={d.mine} labelledBy="mine-title" ctx={ctx} onRevoke={setRevoking} />
          {d.mine.length === 0 ? <p data-clients="none">No client is connected as you.</p> : null}
        </>
      ) : null}
      {d && d.all ? (
        <>
          <h2 id="all-title">Everyone else's in this workspace</h2>
          <p class="help">As an admin you see and may revoke every client of this workspace.</p>
          <ClientTable id="all" items={others} labelledBy="all-title" ctx={ctx} person={person} onRevoke={setRevoking} />
          {others.length === 0 ? <p data-clients="none-others">No one else has a connected client here.</p> : null}
        </>
      ) : null}
      {revoking ? (
        <ConfirmDialog
          id="revoke-dialog"
          title={'Revoke ' + revoking.clientName + '?'}
          confirm="Revoke"
          onCancel={() => setRevoking(null)}
          onConfirm={() => act(() => connectedClients.revoke(revoking.id), `${revoking.clientName} was revoked.`)}
        >
          <p>
            Its tokens stop working at its next call (sent back to {revoking.redirectHost}). To use it again, connect it
            again and allow it on the consent page.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

// ClientTable lists connected clients: the client (logo, name, id), where it is sent back
// to, its workspace and scopes, how it was authorized, first and last use, and Revoke;
// person, when given, adds
// whose client it is.
function ClientTable({ id, items, labelledBy, ctx, person, onRevoke }) {
  if (!items.length) return null;
  const ws = (w) => (w === ctx.ws ? ctx.wsName(w) : 'Workspace ' + w.slice(0, 8));
  return (
    <table class="clients stack" id={'clients-' + id} aria-labelledby={labelledBy}>
      <thead>
        <tr>
          <th scope="col">Client</th>
          {person ? <th scope="col">Person</th> : null}
          <th scope="col">Sent back to</th>
          <th scope="col">Workspace</th>
          <th scope="col">Scopes</th>
          <th scope="col">Authorized by</th>
          <th scope="col">Connected</th>
          <th scope="col">Last used</th>
          <th scope="col">
            <span class="sr-only">Action</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {items.map((g) => (
          <tr key={g.id} data-client={g.clientName} data-grant={g.id}>
            <td data-label="Client">
              {/^https:\/\//.test(g.logoUri || '') ? (
                <img class="client-logo" src={g.logoUri} alt="" width="20" height="20" referrerpolicy="no-referrer" loading="lazy" />
              ) : null}
              <strong>{g.clientName || 'An unnamed client'}</strong>
              <div class="muted small mono" title={g.clientId}>
                {g.clientId}
              </div>
            </td>
            {person ? <td data-label="Person">{person(g)}</td> : null}
            <td data-label="Sent back to" class="mono host">
              <Host host={g.redirectHost} />
            </td>
            <td data-label="Workspace">{ws(g.workspaceId)}</td>
            <td data-label="Scopes">
              {(g.scopes || []).map((s) => (
                <Badge kind="source" key={s}>
                  {s}
                </Badge>
              ))}
            </td>
            <td data-label="Authorized by" data-authorized-by={g.authorizedBy}>
              <HowAuthorized grant={g} />
            </td>
            <td data-label="Connected">{when(g.createdAt)}</td>
            <td data-label="Last used">{when(g.lastUsedAt)}</td>
            <td class="actions">
              <button type="button" class="danger" onClick={() => onRevoke(g)}>
                Revoke<span class="sr-only"> {g.clientName}</span>
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

// Host shows host[:port] with line breaks allowed only after a dot, never inside the
// port or a name's label (a narrow column wrapped "127.0.0.1:54" / "321").
function Host({ host }) {
  const parts = String(host || '').split('.');
  return parts.map((p, i) => (
    <span key={i}>
      {p}
      {i < parts.length - 1 ? (
        <>
          .<wbr />
        </>
      ) : null}
    </span>
  ));
}

// HowAuthorized says how a grant was authorized (the API's authorizedBy): "Consent" (the
// person allowed it on the consent page) or "Enterprise grant via <issuer>" (an ID-JAG of a
// trusted identity provider, identityProvider; docs/AUTH.md), no consent page.
function HowAuthorized({ grant }) {
  if (grant.authorizedBy === 'enterprise') {
    return (
      <>
        Enterprise grant via <span class="mono host">{grant.identityProvider || 'an identity provider'}</span>
      </>
    );
  }
  return 'Consent';
}
