// Authorizations: the signed-in user's own upstream authorization of each OAuth connection
// of the workspace (api.js connections.authorizations; docs/UPSTREAM-AUTH.md). Any
// role: for an oauth_per_user connection each member consents with their own account;
// Authorize asks the API for the member's consent link (POST …/{id}/authorize), which is
// bound to them, and opens it; the callback page links back here.

import { useEffect, useState } from 'preact/hooks';
import { connections, openAuthorization } from '../api.js';
import { Badge, ErrorBox, Notice, markReady, useLoad, when } from '../ui.jsx';

const LABEL = { authorized: 'Authorized', required: 'Authorization required', expired: 'Authorization expired' };
const MODE = {
  oauth_per_user: 'your own account',
  oauth: 'shared by the workspace',
  client_credentials: 'the gateway’s own client',
};

export function Authorizations({ ctx }) {
  const [message, setMessage] = useState(null);
  const [busy, setBusy] = useState('');
  const [list] = useLoad(async () => {
    const r = await connections.authorizations(ctx.ws);
    return r.authorizations;
  }, [ctx.ws]);
  useEffect(() => {
    if (!list.loading) markReady('authorizations');
  }, [list.loading]);

  const authorize = async (a) => {
    setBusy(a.connectionId);
    setMessage(null);
    try {
      const r = await connections.authorize(a.connectionId, location.origin + '/admin/#/authorizations');
      if (r.status === 'authorization_required' && r.authorizationUrl) {
        openAuthorization(r.authorizationUrl);
        return;
      }
      if (r.status === 'authorized') setMessage({ kind: 'ok', text: `${a.name} is authorized.` });
      else setMessage({ kind: 'error', text: `${a.name}: the authorization could not start: ${r.reason || 'unknown error'}` });
    } catch (e) {
      setMessage({ kind: 'error', text: `${a.name}: ${e.code ? e.code + ': ' : ''}${e.message}` });
    } finally {
      setBusy('');
    }
  };

  const items = list.data || [];
  const needed = items.filter((a) => a.authorization.authorization !== 'authorized' && a.canAuthorize).length;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Authorizations</h1>
      <p class="help">
        Servers that use OAuth answer only with a token. For those marked <em>your own account</em>, each member
        authorizes once with their own account; your calls then reach the server as you. Until then a call answers with
        a link to this consent.
      </p>
      {message ? <Notice kind={message.kind}>{message.text}</Notice> : null}
      <ErrorBox error={list.error} />
      {list.data && !items.length ? <p data-authorizations="none">No connection of this workspace uses OAuth.</p> : null}
      {needed ? (
        <Notice kind="warn">
          {needed === 1 ? 'One connection needs' : `${needed} connections need`} your authorization.
        </Notice>
      ) : null}
      {items.length ? (
        <ul class="authorizations">
          {items.map((a) => {
            const st = a.authorization.authorization;
            return (
              <li key={a.connectionId} data-connection={a.name} data-authorization={st}>
                <div class="az-head">
                  <strong>{a.name}</strong> <code class="mono">{a.handle}</code>
                  {!a.enabled ? <Badge kind="idle">Disabled</Badge> : null}
                </div>
                <div class="az-state">
                  <Badge kind={'az-' + st}>{LABEL[st] || st}</Badge>{' '}
                  <span class="help">{MODE[a.authorization.mode] || a.authorization.mode}</span>
                  {st === 'authorized' && a.authorization.authorizedBy ? (
                    <span>
                      {' '}· by <span data-authorized-by={a.authorization.authorizedBy}>{a.authorization.authorizedByName || a.authorization.authorizedBy}</span> ·{' '}
                      {when(a.authorization.authorizedAt)}
                    </span>
                  ) : null}
                  {a.authorization.reason ? <span class="err-text"> · {a.authorization.reason}</span> : null}
                </div>
                {a.canAuthorize ? (
                  <button
                    type="button"
                    class={st === 'authorized' ? '' : 'primary'}
                    disabled={busy === a.connectionId}
                    onClick={() => authorize(a)}
                    aria-label={(st === 'authorized' ? 'Authorize again: ' : 'Authorize: ') + a.name}
                  >
                    {st === 'authorized' ? 'Authorize again' : 'Authorize'}
                  </button>
                ) : st !== 'authorized' ? (
                  <p class="help">A workspace admin authorizes this shared connection.</p>
                ) : null}
              </li>
            );
          })}
        </ul>
      ) : null}
    </section>
  );
}
