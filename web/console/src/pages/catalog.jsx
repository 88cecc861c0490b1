// Catalog admin (superuser): create, edit and delete catalog entries, with their header
// templates and their authorization (auth mode, OAuth settings, pre-registered client:
// PUT /api/mcp-marketplace/{id}/auth; docs/UPSTREAM-AUTH.md).

import { useEffect, useState } from 'preact/hooks';
import { marketplace } from '../api.js';
import { TierBadge } from '../components/entry.jsx';
import { ConfirmDialog, Dialog, ErrorBox, Field, Notice, describedBy, markReady, useLoad } from '../ui.jsx';

const FIELDS = [
  ['name', 'Name', 'text'],
  ['url', 'URL', 'url'],
  ['category', 'Category', 'text'],
  ['description', 'Description', 'textarea'],
  ['version', 'Version', 'text'],
  ['author', 'Author', 'text'],
];

export function Catalog({ ctx }) {
  const [list, reload] = useLoad(() => marketplace.list(), []);
  const [editing, setEditing] = useState(null);
  const [deleting, setDeleting] = useState(null);
  const [message, setMessage] = useState('');
  const [error, setError] = useState(null);
  useEffect(() => {
    if (!list.loading) markReady('catalog');
  }, [list]);
  if (!ctx.isSuper) {
    return (
      <section aria-labelledby="page-title">
        <h1 id="page-title">Catalog admin</h1>
        <Notice kind="warn">Editing the shared catalog needs the superuser role.</Notice>
      </section>
    );
  }
  const entries = list.data ? list.data.entries : [];
  const remove = async (e) => {
    setDeleting(null);
    setError(null);
    try {
      await marketplace.remove(e.id);
      setMessage(`${e.name} was deleted.`);
      reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Catalog admin</h1>
      {message ? <Notice>{message}</Notice> : null}
      <ErrorBox error={list.error || error} />
      <button type="button" class="primary" onClick={() => setEditing({})}>
        New entry
      </button>
      <table class="catalog stack">
        <caption class="sr-only">Catalog entries</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Category</th>
            <th scope="col">Tier</th>
            <th scope="col">Installs</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.id} data-entry={e.name}>
              <td data-label="Name">{e.name}</td>
              <td data-label="Category">{e.category}</td>
              <td data-label="Tier">
                <TierBadge tier={e.verificationTier} />
              </td>
              <td data-label="Installs">{e.installCount}</td>
              <td class="actions">
                <button type="button" onClick={() => setEditing(e)}>
                  Edit<span class="sr-only"> {e.name}</span>
                </button>
                <button type="button" class="danger" onClick={() => setDeleting(e)}>
                  Delete<span class="sr-only"> {e.name}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {editing ? (
        <EntryDialog
          entry={editing}
          onClose={() => setEditing(null)}
          onDone={(name) => {
            setEditing(null);
            setMessage(`${name} was saved.`);
            reload();
          }}
        />
      ) : null}
      {deleting ? (
        <ConfirmDialog
          id="delete-entry"
          title={'Delete ' + deleting.name + '?'}
          confirm="Delete"
          onCancel={() => setDeleting(null)}
          onConfirm={() => remove(deleting)}
        >
          <p>Workspaces that installed it keep their connections; the entry leaves the marketplace.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

const MODES = [
  ['none', 'None'],
  ['headers', 'Headers (an API key or token each installer enters)'],
  ['oauth', 'OAuth, one grant shared by the workspace'],
  ['oauth_per_user', 'OAuth, each member their own account'],
  ['client_credentials', 'OAuth client credentials (no user)'],
];
const OAUTH_MODES = ['oauth', 'oauth_per_user', 'client_credentials'];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const PARAM = /^[A-Za-z0-9_.-]{1,64}$/;

// authForm is the editable form of an EntryAuth answer (GET …/{id}/auth).
function authForm(a) {
  const o = (a && a.oauth) || {};
  const c = (a && a.client) || {};
  return {
    mode: (a && a.authMode) || 'none',
    issuer: o.issuer || '',
    metadataUrl: o.metadataUrl || '',
    scopes: (o.scopes || []).join(' '),
    params: Object.entries(o.authorizationParams || {})
      .map(([k, v]) => k + '=' + v)
      .join('\n'),
    clientId: c.clientId || '',
    clientSecret: '',
    clientAuth: c.tokenEndpointAuth || '',
    hasSecret: !!c.hasSecret,
  };
}

// authErrors checks the authorization fields in the page (the API checks again).
function authErrors(a) {
  const e = {};
  if (!OAUTH_MODES.includes(a.mode)) return e;
  for (const [k, label] of [
    ['issuer', 'The issuer'],
    ['metadataUrl', 'The metadata URL'],
  ]) {
    if (!a[k]) continue;
    try {
      const u = new URL(a[k]);
      if (u.protocol !== 'https:' && u.protocol !== 'http:') e[k] = label + ' must be an http(s) URL.';
    } catch {
      e[k] = label + ' must be a full URL.';
    }
  }
  for (const line of a.params.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const i = line.indexOf('=');
    if (i < 1 || !PARAM.test(line.slice(0, i))) {
      e.params = `“${line}” is not name=value (names of letters, digits, _ . -).`;
      break;
    }
  }
  if (a.clientSecret && !a.clientId.trim()) e.clientId = 'A client secret needs its client ID.';
  return e;
}

// authBody is the PUT …/{id}/auth body of form a; the client goes only when it changed
// (a new ID or a secret typed), so that saving other fields keeps the stored secret.
function authBody(a, before) {
  const body = { authMode: a.mode };
  if (!OAUTH_MODES.includes(a.mode)) return body;
  const params = {};
  for (const line of a.params.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const i = line.indexOf('=');
    params[line.slice(0, i)] = line.slice(i + 1);
  }
  const scopes = a.scopes.split(/\s+/).filter(Boolean);
  body.oauth = {};
  if (a.issuer) body.oauth.issuer = a.issuer;
  if (a.metadataUrl) body.oauth.metadataUrl = a.metadataUrl;
  if (scopes.length) body.oauth.scopes = scopes;
  if (Object.keys(params).length) body.oauth.authorizationParams = params;
  const id = a.clientId.trim();
  if (id && (id !== before.clientId || a.clientSecret || a.clientAuth !== before.clientAuth)) {
    body.client = { clientId: id };
    if (a.clientSecret) body.client.clientSecret = a.clientSecret;
    if (a.clientAuth) body.client.tokenEndpointAuth = a.clientAuth;
  }
  return body;
}

function EntryDialog({ entry, onClose, onDone }) {
  const isNew = !entry.id;
  const [v, setV] = useState(Object.fromEntries(FIELDS.map(([k]) => [k, entry[k] || ''])));
  const [transport, setTransport] = useState(entry.transportType || 'streamable-http');
  const [placeholder, setPlaceholder] = useState(!!entry.isPlaceholder);
  const [hdrs, setHdrs] = useState(() => {
    const rows = Object.entries(entry.headers || {}).map(([name, value]) => ({ name, value }));
    return rows.length ? rows : [{ name: '', value: '' }];
  });
  const [az, setAz] = useState(authForm(null));
  const [azBefore, setAzBefore] = useState(authForm(null));
  const [azLoad, setAzLoad] = useState({ loading: !isNew, error: null });
  useEffect(() => {
    if (isNew) return;
    marketplace.auth(entry.id).then(
      (a) => {
        setAz(authForm(a));
        setAzBefore(authForm(a));
        setAzLoad({ loading: false, error: null });
      },
      (err) => setAzLoad({ loading: false, error: err })
    );
  }, [entry.id]);
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  const setA = (k) => (ev) => setAz({ ...az, [k]: ev.currentTarget.value });
  const submit = async (ev) => {
    ev.preventDefault();
    const e = authErrors(az);
    if (!v.name.trim()) e.name = 'A name is required.';
    try {
      new URL(v.url);
    } catch {
      e.url = 'Enter a full URL.';
    }
    const headers = {};
    hdrs.forEach((h, i) => {
      if (!h.name && !h.value) return;
      if (!HEADER_NAME.test(h.name)) e['hname' + i] = 'Not a valid header name.';
      else headers[h.name] = h.value;
    });
    setErrors(e);
    if (Object.keys(e).length) return;
    const body = { ...v, name: v.name.trim(), transportType: transport, isPlaceholder: placeholder, headers };
    try {
      const saved = await (isNew ? marketplace.create(body) : marketplace.update(entry.id, body));
      const id = isNew ? saved.id : entry.id;
      const ab = authBody(az, azBefore);
      if (!azLoad.error && (!isNew || ab.authMode !== 'none')) {
        try {
          await marketplace.setAuth(id, ab);
        } catch (err) {
          if (err.status === 400 && /issuer/i.test(err.message)) setErrors({ issuer: err.message });
          else if (err.status === 400 && /metadataurl/i.test(err.message)) setErrors({ metadataUrl: err.message });
          else if (err.status === 400 && /scope/i.test(err.message)) setErrors({ scopes: err.message });
          else if (err.status === 400 && /authorizationparams/i.test(err.message)) setErrors({ params: err.message });
          else if (err.status === 400 && /client/i.test(err.message)) setErrors({ clientId: err.message });
          else setError(err);
          return;
        }
      }
      onDone(body.name);
    } catch (err) {
      const m = err.message.toLowerCase();
      if (err.status === 400 && m.includes('url')) setErrors({ url: err.message });
      else if (err.status === 400 && m.includes('name')) setErrors({ name: err.message });
      else setError(err);
    }
  };
  return (
    <Dialog id="entry-dialog" title={isNew ? 'New catalog entry' : 'Edit ' + entry.name} onClose={onClose}>
      <form onSubmit={submit} novalidate>
        {FIELDS.map(([k, label, type]) => (
          <Field key={k} id={'e-' + k} label={label} error={errors[k]}>
            {type === 'textarea' ? (
              <textarea id={'e-' + k} value={v[k]} rows={3} onInput={(ev) => setV({ ...v, [k]: ev.currentTarget.value })} />
            ) : (
              <input
                id={'e-' + k}
                type={type}
                value={v[k]}
                aria-invalid={errors[k] ? 'true' : undefined}
                aria-describedby={describedBy('e-' + k, errors[k])}
                onInput={(ev) => setV({ ...v, [k]: ev.currentTarget.value })}
              />
            )}
          </Field>
        ))}
        <Field id="e-transport" label="Transport">
          <select id="e-transport" value={transport} onChange={(ev) => setTransport(ev.currentTarget.value)}>
            <option value="streamable-http">Streamable HTTP</option>
            <option value="sse">SSE (legacy)</option>
          </select>
        </Field>
        <div class="check">
          <input type="checkbox" id="e-placeholder" checked={placeholder} onChange={(ev) => setPlaceholder(ev.currentTarget.checked)} />
          <label for="e-placeholder">Template for a self-hosted server (its URL is a placeholder)</label>
        </div>
        <fieldset class="headers">
          <legend>Headers</legend>
          <p class="help">
            Sent to the server by every install. Write <code>{'{{NAME}}'}</code> where each installer enters a value, e.g.{' '}
            <code>Authorization</code> = <code>{'Bearer {{TOKEN}}'}</code>.
          </p>
          {hdrs.map((h, i) => (
            <div class="header-row" key={i}>
              <Field id={'e-hname' + i} label="Header name" error={errors['hname' + i]}>
                <input
                  id={'e-hname' + i}
                  value={h.name}
                  aria-invalid={errors['hname' + i] ? 'true' : undefined}
                  aria-describedby={describedBy('e-hname' + i, errors['hname' + i])}
                  onInput={(ev) => setHdrs(hdrs.map((x, j) => (j === i ? { ...x, name: ev.currentTarget.value.trim() } : x)))}
                />
              </Field>
              <Field id={'e-hvalue' + i} label="Value template">
                <input id={'e-hvalue' + i} value={h.value} onInput={(ev) => setHdrs(hdrs.map((x, j) => (j === i ? { ...x, value: ev.currentTarget.value } : x)))} />
              </Field>
              <button type="button" onClick={() => setHdrs(hdrs.length > 1 ? hdrs.filter((_, j) => j !== i) : [{ name: '', value: '' }])}>
                Remove<span class="sr-only"> header {i + 1}</span>
              </button>
            </div>
          ))}
          <button type="button" id="e-add-header" onClick={() => setHdrs([...hdrs, { name: '', value: '' }])}>
            Add a header
          </button>
        </fieldset>
        <fieldset class="auth" data-loading={azLoad.loading ? 'true' : undefined}>
          <legend>Authorization</legend>
          <ErrorBox error={azLoad.error} />
          <Field id="e-authmode" label="Auth mode" help="The default of new installs; existing connections keep theirs.">
            <select id="e-authmode" value={az.mode} aria-describedby="e-authmode-help" onChange={setA('mode')}>
              {MODES.map(([m, label]) => (
                <option key={m} value={m}>
                  {label}
                </option>
              ))}
            </select>
          </Field>
          {OAUTH_MODES.includes(az.mode) ? (
            <>
              <p class="help">Leave these empty to discover everything from the server, as the MCP specification says.</p>
              <Field id="e-issuer" label="Expected issuer" error={errors.issuer} help="Discovery refuses any other authorization server.">
                <input id="e-issuer" type="url" value={az.issuer} aria-invalid={errors.issuer ? 'true' : undefined}
                  aria-describedby={describedBy('e-issuer', errors.issuer, true)} onInput={setA('issuer')} />
              </Field>
              <Field id="e-metadata" label="Authorization server metadata URL" error={errors.metadataUrl}>
                <input id="e-metadata" type="url" value={az.metadataUrl} aria-invalid={errors.metadataUrl ? 'true' : undefined}
                  aria-describedby={describedBy('e-metadata', errors.metadataUrl)} onInput={setA('metadataUrl')} />
              </Field>
              <Field id="e-scopes" label="Scopes (space-separated)" error={errors.scopes}>
                <input id="e-scopes" value={az.scopes} aria-invalid={errors.scopes ? 'true' : undefined}
                  aria-describedby={describedBy('e-scopes', errors.scopes)} onInput={setA('scopes')} />
              </Field>
              <Field id="e-params" label="Extra authorization parameters (name=value, one a line)" error={errors.params}>
                <textarea id="e-params" rows={2} value={az.params} aria-invalid={errors.params ? 'true' : undefined}
                  aria-describedby={describedBy('e-params', errors.params)} onInput={setA('params')} />
              </Field>
              <Field id="e-client-id" label="Pre-registered client ID (optional)" error={errors.clientId}>
                <input id="e-client-id" value={az.clientId} autocomplete="off" aria-invalid={errors.clientId ? 'true' : undefined}
                  aria-describedby={describedBy('e-client-id', errors.clientId)} onInput={setA('clientId')} />
              </Field>
              <Field id="e-client-secret" label="Client secret" help={az.hasSecret ? 'A secret is stored; leave empty to keep it. It is never shown.' : 'Stored encrypted, never shown again.'}>
                <input id="e-client-secret" type="password" autocomplete="new-password" value={az.clientSecret}
                  aria-describedby="e-client-secret-help" onInput={setA('clientSecret')} />
              </Field>
              <Field id="e-client-auth" label="Token endpoint authentication">
                <select id="e-client-auth" value={az.clientAuth} onChange={setA('clientAuth')}>
                  <option value="">From the server's metadata</option>
                  <option value="client_secret_post">client_secret_post</option>
                  <option value="client_secret_basic">client_secret_basic</option>
                  <option value="none">none (public client)</option>
                </select>
              </Field>
            </>
          ) : null}
        </fieldset>
        <ErrorBox error={error} />
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary">
            Save
          </button>
        </div>
      </form>
    </Dialog>
  );
}
