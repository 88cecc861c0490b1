// MCP access tokens (docs/AUTH.md "MCP access tokens"; REST /api/mcp-tokens): a person's
// own bearer tokens for MCP clients that take only a header. TokenMaker creates one (a name
// and a lifetime from an hour to 90 days) and shows it once; TokenList lists the person's
// tokens (never the token itself) with Revoke.

import { useState } from 'preact/hooks';
import { mcpTokens } from '../api.js';
import { ConfirmDialog, ErrorBox, Field, FormError, Notice, fieldErrorOf, useLoad, when } from '../ui.jsx';

// LIFETIMES are the lifetimes offered, in seconds (the API takes 3600 to 7776000).
export const LIFETIMES = [
  [3600, '1 hour'],
  [86400, '1 day'],
  [7 * 86400, '7 days'],
  [30 * 86400, '30 days'],
  [90 * 86400, '90 days'],
];

// ownAuthServer reports whether this gateway runs its own authorization server (the
// console's configuration, in the page's meta tag), without which there are no MCP access
// tokens.
export function ownAuthServer() {
  try {
    const m = document.querySelector('meta[name="agentpack-console-config"]');
    return !!(m && JSON.parse(m.content).authServer);
  } catch {
    return false;
  }
}

// TokenMaker is the creation form; onCreated gets the API's answer (with the token).
export function TokenMaker({ id, ws, onCreated }) {
  const [name, setName] = useState('');
  const [life, setLife] = useState(String(30 * 86400));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [made, setMade] = useState(null);
  if (!ownAuthServer()) {
    return <Notice kind="warn">MCP access tokens need this gateway's own authorization server, which is not configured here (docs/AUTH.md).</Notice>;
  }
  const fields = error ? fieldErrorOf(error, { name: 'name', lifetimeSeconds: 'life', workspaceId: 'ws' }) : null;
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const t = await mcpTokens.create({ name: name.trim(), workspaceId: ws, lifetimeSeconds: Number(life) });
      setMade(t);
      onCreated(t);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="token-maker" id={id} onSubmit={submit}>
      <Field id={id + '-name'} label="Token name" help="To recognise it later, e.g. the client and machine it is for." error={fields && fields.name}>
        <input id={id + '-name'} value={name} maxLength={100} placeholder="MCP access token" onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Field id={id + '-life'} label="Lifetime" error={fields && fields.life}>
        <select id={id + '-life'} value={life} onChange={(e) => setLife(e.currentTarget.value)}>
          {LIFETIMES.map(([s, label]) => (
            <option key={s} value={String(s)}>
              {label}
            </option>
          ))}
        </select>
      </Field>
      {error && !fields ? <FormError error={error} id={id + '-error'} /> : null}
      {fields && fields.ws ? <FormError error={fields.ws} id={id + '-error'} /> : null}
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Creating…' : 'Create MCP access token'}
      </button>
      {made ? (
        <Notice kind="warn">
          Token “{made.name}” created, valid until {when(made.expiresAt)} at this workspace's MCP endpoint only. Copy it
          now from a snippet below: it is shown this once and cannot be read again.
        </Notice>
      ) : null}
    </form>
  );
}

// TokenList lists the person's MCP access tokens with Revoke; reloadKey changes reload it.
export function TokenList({ reloadKey }) {
  const [list, reload] = useLoad(() => (ownAuthServer() ? mcpTokens.list() : Promise.resolve({ items: [] })), [reloadKey]);
  const [confirm, setConfirm] = useState(null);
  const [error, setError] = useState(null);
  const [done, setDone] = useState('');
  if (!ownAuthServer()) return null;
  const items = (list.data && list.data.items) || [];
  const revoke = async (t) => {
    setError(null);
    setDone('');
    try {
      await mcpTokens.revoke(t.id);
      setDone(`Revoked “${t.name}”: its next call is refused.`);
      reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section class="mcp-tokens" aria-labelledby="mcp-tokens-title">
      <h2 id="mcp-tokens-title">Your MCP access tokens</h2>
      <ErrorBox error={list.error || error} />
      {done ? <Notice>{done}</Notice> : null}
      {!list.loading && items.length === 0 ? <p class="muted">You have no MCP access tokens.</p> : null}
      {items.length ? (
        <ul class="tokens">
          {items.map((t) => (
            <li key={t.id} data-token={t.id}>
              <strong>{t.name}</strong>{' '}
              <span class="muted small">
                · {t.role} in workspace {t.workspaceId.slice(0, 8)} · created {when(t.createdAt)} · expires {when(t.expiresAt)}
              </span>{' '}
              <button type="button" class="danger" onClick={() => setConfirm(t)}>
                Revoke
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {confirm ? (
        <ConfirmDialog id="revoke-token-dialog" title={'Revoke “' + confirm.name + '”?'} confirm="Revoke"
          onCancel={() => setConfirm(null)} onConfirm={() => revoke(confirm)}>
          <p>A client using this token is refused at its next call. This cannot be undone; create a new token instead.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
