// Catalog admin (superuser): create, edit and delete catalog entries.

import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Dialog, ErrorBox, Field, Notice, describedBy, markReady, useLoad } from '../ui.jsx';
import { TierBadge } from './marketplace.jsx';

const FIELDS = [
  ['name', 'Name', 'text'],
  ['url', 'URL', 'url'],
  ['category', 'Category', 'text'],
  ['description', 'Description', 'textarea'],
  ['version', 'Version', 'text'],
  ['author', 'Author', 'text'],
];

export function Catalog({ ctx }) {
  const [list, reload] = useLoad(() => api('GET', '/api/mcp-marketplace'), []);
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
      await api('DELETE', '/api/mcp-marketplace/' + e.id);
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
        <Dialog id="delete-entry" title={'Delete ' + deleting.name + '?'} onClose={() => setDeleting(null)}>
          <p>Workspaces that installed it keep their connections; the entry leaves the marketplace.</p>
          <div class="actions">
            <button type="button" onClick={() => setDeleting(null)}>
              Cancel
            </button>
            <button type="button" class="danger" onClick={() => remove(deleting)}>
              Delete
            </button>
          </div>
        </Dialog>
      ) : null}
    </section>
  );
}

function EntryDialog({ entry, onClose, onDone }) {
  const isNew = !entry.id;
  const [v, setV] = useState(Object.fromEntries(FIELDS.map(([k]) => [k, entry[k] || ''])));
  const [transport, setTransport] = useState(entry.transportType || 'streamable-http');
  const [placeholder, setPlaceholder] = useState(!!entry.isPlaceholder);
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  const submit = async (ev) => {
    ev.preventDefault();
    const e = {};
    if (!v.name.trim()) e.name = 'A name is required.';
    try {
      new URL(v.url);
    } catch {
      e.url = 'Enter a full URL.';
    }
    setErrors(e);
    if (Object.keys(e).length) return;
    const body = { ...v, name: v.name.trim(), transportType: transport, isPlaceholder: placeholder };
    try {
      await api(isNew ? 'POST' : 'PUT', '/api/mcp-marketplace' + (isNew ? '' : '/' + entry.id), body);
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
