// Connections: the workspace's manual and marketplace connections (admin): state, test,
// enable, edit, delete, upstream authorization, tools with drift and overrides, and the add
// form.

import { useEffect, useReducer, useState } from 'preact/hooks';
import { connections, openAuthorization } from '../api.js';
import { ClientConfigs } from '../components/clientconfigs.jsx';
import { AuthorizationState, ConnectStep, STATE_LEGEND, StateBadge, consoleReturnTo } from '../components/connection.jsx';
import { endpoint } from '../mcp.js';
import {
  AdminOnly,
  Badge,
  ConfirmDialog,
  Dialog,
  ErrorBox,
  Field,
  FormError,
  Notice,
  fieldErrorOf,
  markReady,
  outcomeNotice,
  useAction,
  useLoad,
  when,
} from '../ui.jsx';

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

// CONNECTION_FIELDS maps the API's details.field of a connection write (shared/connections)
// onto the form's fields.
const CONNECTION_FIELDS = { name: 'name', url: 'url', transportType: 'transport' };

// fieldErrors checks a connection form in the page (the API checks again) and places an
// API error on the field it names: details.header on that header's row, details.field
// (CONNECTION_FIELDS) on its field, anything else on the form.
export function fieldErrors(v, apiErr) {
  const e = {};
  if (!v.name.trim()) e.name = 'A name is required.';
  else if (v.name.trim().length > 100) e.name = 'At most 100 characters.';
  try {
    const u = new URL(v.url);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') e.url = 'The URL must start with https:// (or http:// locally).';
  } catch {
    e.url = 'Enter a full URL, e.g. https://mcp.example.com/mcp.';
  }
  v.headers.forEach((h, i) => {
    if (!h.name && !h.value) return;
    if (!HEADER_NAME.test(h.name)) e['hname' + i] = 'Not a valid header name.';
  });
  if (apiErr && !Object.keys(e).length) {
    const hdr = apiErr.details && apiErr.details.header;
    const i = hdr ? v.headers.findIndex((h) => h.name.toLowerCase() === String(hdr).toLowerCase()) : -1;
    if (i >= 0) e['hname' + i] = apiErr.message;
    else Object.assign(e, fieldErrorOf(apiErr, CONNECTION_FIELDS) || { form: apiErr });
  }
  return e;
}

// rowsReducer keeps what the page shows per connection row, by id: the last test (busy,
// result and time, or error) and whether its tools are open.
function rowsReducer(rows, a) {
  const r = rows[a.id] || {};
  switch (a.type) {
    case 'test':
      return { ...rows, [a.id]: { ...r, test: a.test } };
    case 'tools':
      return { ...rows, [a.id]: { ...r, open: !r.open } };
  }
  return rows;
}

export function Connections({ ctx }) {
  // A member never gets here from the navigation; one who opens the address anyway sees
  // the API's refusal (the page asks, the API decides).
  const [list, reload] = useLoad(async () => {
    const [c, s] = await Promise.all([connections.list(ctx.ws), connections.statuses(ctx.ws)]);
    const st = Object.fromEntries(s.statuses.map((x) => [x.connectionId, x]));
    return c.connections.map((x) => ({ ...x, status: st[x.id] }));
  }, [ctx.ws]);
  const [act, message, actionError, setMessage] = useAction(reload);
  // dialog: the one dialog open, {kind: 'setup' | 'edit' | 'delete', conn} or
  // {kind: 'connect', name, url}; null when none is.
  const [dialog, setDialog] = useState(null);
  const [rows, dispatch] = useReducer(rowsReducer, {});

  useEffect(() => {
    if (!list.loading) markReady('connections');
  }, [list]);

  if (list.error && list.error.status === 403) {
    return (
      <AdminOnly title="Connections" error={list.error}>
        Connections, their URLs and their headers are visible to workspace admins only.
      </AdminOnly>
    );
  }

  const close = () => setDialog(null);
  const test = async (c) => {
    dispatch({ type: 'test', id: c.id, test: { busy: true } });
    const t0 = performance.now();
    try {
      const r = await connections.test(c.id);
      dispatch({ type: 'test', id: c.id, test: { result: r, ms: Math.round(performance.now() - t0) } });
      reload();
    } catch (err) {
      dispatch({ type: 'test', id: c.id, test: { error: err } });
    }
  };
  // authorize (re-)starts the upstream consent and leaves for the authorization page; the
  // callback page links back here.
  const authorize = (c) =>
    act(async () => {
      const r = await connections.authorize(c.id, consoleReturnTo());
      if (r.status === 'authorization_required' && r.authorizationUrl) {
        openAuthorization(r.authorizationUrl);
        return;
      }
      if (r.status === 'authorized') setMessage({ text: `${c.name} is authorized.`, kind: 'ok' });
      else setMessage({ text: `${c.name}: authorization could not start: ${r.reason || 'unknown error'}`, kind: 'error' });
    });

  const conns = list.data || [];
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Connections</h1>
      <p class="help" id="state-legend">{STATE_LEGEND}</p>
      {message ? <Notice kind={message.kind}>{message.text}</Notice> : null}
      <ErrorBox error={list.error || actionError} />
      <ul class="rows" aria-label="Connections">
        {conns.map((c) => (
          <ConnectionRow
            key={c.id}
            ctx={ctx}
            c={c}
            row={rows[c.id] || {}}
            onToggle={() => act(() => connections.toggle(c.id), `${c.name} was ${c.enabled ? 'disabled' : 'enabled'}.`)}
            onAuthorize={() => authorize(c)}
            onTest={() => test(c)}
            onTools={() => dispatch({ type: 'tools', id: c.id })}
            onDialog={(kind) => setDialog({ kind, conn: c })}
            onChange={reload}
          />
        ))}
      </ul>
      {!list.loading && conns.length === 0 ? <p>No connections yet: install one from the Marketplace or add one below.</p> : null}
      <AddConnection
        ctx={ctx}
        onDone={(name, out) => {
          const az = out && out.authorization;
          if (az && az.status === 'authorization_required' && az.authorizationUrl) setDialog({ kind: 'connect', name, url: az.authorizationUrl });
          setMessage(outcomeNotice(name, 'added', out));
          reload();
        }}
      />
      {dialog && dialog.kind === 'connect' ? (
        <Dialog id="connect-dialog" title={'Connect ' + dialog.name} onClose={close}>
          <ConnectStep name={dialog.name} url={dialog.url} onLater={close} />
        </Dialog>
      ) : null}
      {dialog && dialog.kind === 'setup' ? (
        <Dialog id="setup-dialog" title={'Client setup: ' + dialog.conn.name} onClose={close}>
          <ClientConfigs url={endpoint(ctx.ws, dialog.conn.handle || dialog.conn.id)} id="conn-setup" ws={ctx.ws} />
        </Dialog>
      ) : null}
      {dialog && dialog.kind === 'edit' ? (
        <EditDialog
          conn={dialog.conn}
          onClose={close}
          onDone={() => {
            close();
            setMessage({ text: 'Saved.', kind: 'ok' });
            reload();
          }}
        />
      ) : null}
      {dialog && dialog.kind === 'delete' ? (
        <ConfirmDialog
          id="delete-dialog"
          title={'Delete ' + dialog.conn.name + '?'}
          confirm="Delete"
          onCancel={close}
          onConfirm={() => act(() => connections.remove(dialog.conn.id), `${dialog.conn.name} was deleted.`)}
        >
          <p>Its tools disappear from every chat of the workspace, and its pins are removed.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

// ConnectionRow is one connection: its badges, facts, actions and (open) tools. A global
// connection (no workspace) is written by superusers only; an admin sees it without the
// actions the API would refuse.
function ConnectionRow({ ctx, c, row, onToggle, onAuthorize, onTest, onTools, onDialog, onChange }) {
  const s = c.status || {};
  const t = row.test;
  const drifted = (s.tools && (s.tools.drifted || 0) + (s.tools.pending || 0)) || 0;
  const canWrite = ctx.isSuper || !!c.workspaceId;
  return (
    <li class="row" data-connection={c.name}>
      <div class="row-head">
        <h2>{c.name}</h2>
        <Badge kind="source">{c.source === 'marketplace' ? 'Marketplace' : 'Manual'}</Badge>
        <StateBadge live={s.live} lastError={c.lastError} lastConnectedAt={c.lastConnectedAt} />
        {drifted ? <Badge kind="drift">{drifted} to review</Badge> : null}
        {!c.workspaceId ? <Badge kind="source">Global</Badge> : null}
        <label class="switch">
          <input type="checkbox" role="switch" checked={c.enabled} disabled={!canWrite} aria-label={'Enabled: ' + c.name} onChange={onToggle} />
          <span>{c.enabled ? 'Enabled' : 'Disabled'}</span>
        </label>
      </div>
      <dl class="meta">
        <dt>URL</dt>
        <dd class="mono">{c.url}</dd>
        <dt>Transport</dt>
        <dd>{c.workingTransport || c.transportType}</dd>
        <dt>Tools</dt>
        <dd>{s.tools ? s.tools.active : 0} active</dd>
        <dt>Last connected</dt>
        <dd>{when(c.lastConnectedAt)}</dd>
        {c.lastError ? (
          <>
            <dt>Last error</dt>
            <dd class="err-text">{c.lastError}</dd>
          </>
        ) : null}
        <AuthorizationState az={s.authorization} />
      </dl>
      {canWrite ? (
        <div class="actions">
          {s.authorization && ctx.isAdmin ? (
            <button type="button" class={s.authorization.authorization === 'authorized' ? '' : 'primary'} onClick={onAuthorize}>
              {s.authorization.authorization === 'required' ? 'Authorize' : 'Re-authorize'}
              <span class="sr-only"> {c.name}</span>
            </button>
          ) : null}
          <button type="button" onClick={onTest} disabled={t && t.busy}>
            Test<span class="sr-only"> {c.name}</span>
          </button>
          <button type="button" onClick={() => onDialog('edit')}>
            Edit<span class="sr-only"> {c.name}</span>
          </button>
          <button type="button" aria-expanded={row.open ? 'true' : 'false'} onClick={onTools}>
            Tools<span class="sr-only"> of {c.name}</span>
          </button>
          <button type="button" onClick={() => onDialog('setup')}>
            Client setup<span class="sr-only"> for {c.name}</span>
          </button>
          <button type="button" class="danger" onClick={() => onDialog('delete')}>
            Delete<span class="sr-only"> {c.name}</span>
          </button>
        </div>
      ) : (
        <p class="help">Shared by every workspace; managed by a superuser.</p>
      )}
      {t && !t.busy ? (
        <p class={'test-result' + (t.error || !t.result.success ? ' err-text' : ' ok-text')} role="status">
          {t.error
            ? 'Test failed: ' + t.error.message
            : t.result.success
              ? `${t.result.toolCount} tools · ${t.ms} ms`
              : `Test failed: ${t.result.error} · ${t.ms} ms`}
        </p>
      ) : null}
      {row.open ? <ToolList ctx={ctx} conn={c} onChange={onChange} /> : null}
    </li>
  );
}

// ToolList is a connection's tools with their drift status and the workspace's overrides
// (docs/OVERRIDES.md): an overridden tool shows the name clients call with a "Modified"
// badge, the upstream's original one click away (Original), and Override opens the form
// to rename, retitle, redescribe or hide it. Overrides whose tool the upstream no longer
// lists are shown as dormant below the table.
function ToolList({ ctx, conn, onChange }) {
  const [tools, reload] = useLoad(
    () =>
      Promise.all([
        connections.tools(conn.id),
        connections.overrides(conn.id, ctx.ws),
      ]).then(([t, o]) => ({ tools: t.tools, overrides: o.overrides })),
    [conn.id, ctx.ws],
  );
  const [error, setError] = useState(null);
  const [editing, setEditing] = useState(null);
  const [shown, setShown] = useState({});
  const approve = async (t) => {
    setError(null);
    try {
      await connections.approve(conn.id, t.upstreamName);
      reload();
      onChange();
    } catch (err) {
      setError(err);
    }
  };
  const list = tools.data ? tools.data.tools : [];
  const overrides = tools.data ? tools.data.overrides : [];
  const byTool = Object.fromEntries(overrides.map((o) => [o.tool, o]));
  const dormant = overrides.filter((o) => o.dormant);
  return (
    <div class="tools">
      <ErrorBox error={tools.error || error} />
      <table>
        <caption class="sr-only">Tools of {conn.name}</caption>
        <thead>
          <tr>
            <th scope="col">Exposed name</th>
            <th scope="col">Upstream name</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span class="sr-only">Action</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.map((t) => {
            const o = byTool[t.upstreamName];
            return (
              <tr key={t.upstreamName} data-tool={t.upstreamName} data-modified={o ? 'true' : 'false'}>
                <td class="mono">
                  {o ? o.exposedName : t.exposedName}{' '}
                  {o ? (
                    <Badge kind="modified" title="Overridden in this workspace">
                      {o.hidden ? 'Hidden' : 'Modified'}
                    </Badge>
                  ) : null}
                  {o && annotationBadge(o.annotations) ? (
                    <Badge kind="annotations" title="Annotations overridden in this workspace">
                      {annotationBadge(o.annotations)}
                    </Badge>
                  ) : null}
                  {o && shown[t.upstreamName] ? (
                    <dl class="original" data-original={t.upstreamName}>
                      <dt>Upstream name</dt>
                      <dd>{t.exposedName}</dd>
                      <dt>Title</dt>
                      <dd>{t.title || '—'}</dd>
                      <dt>Description</dt>
                      <dd>{t.description || '—'}</dd>
                    </dl>
                  ) : null}
                </td>
                <td class="mono">{t.upstreamName}</td>
                <td>
                  <Badge kind={'tool-' + t.status}>{t.status === 'drifted' ? 'Changed upstream' : t.status}</Badge>
                </td>
                <td>
                  {t.status !== 'active' ? (
                    <button type="button" class="approve" onClick={() => approve(t)}>
                      Approve<span class="sr-only"> {t.upstreamName}</span>
                    </button>
                  ) : null}
                  {o ? (
                    <button
                      type="button"
                      aria-expanded={shown[t.upstreamName] ? 'true' : 'false'}
                      onClick={() => setShown({ ...shown, [t.upstreamName]: !shown[t.upstreamName] })}
                    >
                      Original<span class="sr-only"> of {t.upstreamName}</span>
                    </button>
                  ) : null}
                  <button type="button" onClick={() => setEditing({ tool: t, override: o || null })}>
                    Override<span class="sr-only"> {t.upstreamName}</span>
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {!tools.loading && list.length === 0 ? <p>No tools listed yet: run Test.</p> : null}
      {dormant.length > 0 ? (
        <div class="dormant">
          <h3>Dormant overrides</h3>
          <p class="help">The upstream no longer lists these tools; each override applies again if its tool returns.</p>
          <ul>
            {dormant.map((o) => (
              <li key={o.tool} data-dormant={o.tool}>
                <span class="mono">{o.tool}</span> → <span class="mono">{o.exposedName || o.tool}</span>
                {o.hidden ? ' (hidden)' : ''}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {editing ? (
        <OverrideDialog
          ctx={ctx}
          conn={conn}
          tool={editing.tool}
          override={editing.override}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            reload();
          }}
        />
      ) : null}
    </div>
  );
}

// HINTS are the boolean MCP tool annotations (MCP spec, ToolAnnotations) the override form
// edits, with their labels.
const HINTS = [
  ['readOnlyHint', 'Read-only hint'],
  ['destructiveHint', 'Destructive hint'],
  ['idempotentHint', 'Idempotent hint'],
  ['openWorldHint', 'Open-world hint'],
];

// annotationBadge names an override's hint members in a short badge (e.g. "readOnlyHint: false").
function annotationBadge(ann) {
  if (!ann) return null;
  const parts = HINTS.filter(([k]) => typeof ann[k] === 'boolean').map(([k]) => k + ': ' + ann[k]);
  return parts.length ? parts.join(', ') : null;
}

// OverrideDialog is the form of one tool's override in the workspace: a new exposed name,
// title and description (blank: the upstream's), hidden, and the annotations override: its
// title (blank: the upstream's) and each hint as upstream's / true / false. Save replaces the
// whole override, sending `annotations` as docs/OVERRIDES.md describes (merged one level over
// the upstream's; members the form does not edit, e.g. a vendor's, are sent back unchanged);
// Remove override deletes it.
function OverrideDialog({ ctx, conn, tool, override, onClose, onSaved }) {
  const o = override || {};
  const a = o.annotations || {};
  const tri = (x) => (x === true ? 'true' : x === false ? 'false' : '');
  const [v, setV] = useState({
    name: o.name || '',
    title: o.title ?? '',
    description: o.description ?? '',
    hidden: !!o.hidden,
    annTitle: typeof a.title === 'string' ? a.title : '',
    ...Object.fromEntries(HINTS.map(([k]) => [k, tri(a[k])])),
  });
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  const save = async (ev) => {
    ev.preventDefault();
    setError(null);
    setErrors({});
    const body = { workspaceId: ctx.ws, hidden: v.hidden };
    if (v.name.trim()) body.name = v.name.trim();
    if (v.title.trim()) body.title = v.title.trim();
    if (v.description.trim()) body.description = v.description.trim();
    const ann = { ...a };
    delete ann.title;
    if (v.annTitle.trim()) ann.title = v.annTitle.trim();
    for (const [k] of HINTS) {
      delete ann[k];
      if (v[k]) ann[k] = v[k] === 'true';
    }
    if (Object.keys(ann).length) body.annotations = ann;
    try {
      await connections.putOverride(conn.id, tool.upstreamName, body);
      onSaved();
    } catch (err) {
      const fe = fieldErrorOf(err, { name: 'name', title: 'title', description: 'description' });
      if (fe) setErrors(fe);
      else setError(err);
    }
  };
  const remove = async () => {
    setError(null);
    try {
      await connections.deleteOverride(conn.id, tool.upstreamName, ctx.ws);
      onSaved();
    } catch (err) {
      setError(err);
    }
  };
  const id = 'ovr';
  return (
    <Dialog title={'Override ' + tool.upstreamName} onClose={onClose} id="override-dialog">
      <form onSubmit={save} noValidate>
        <ErrorBox error={error} />
        <p class="help">
          Only this workspace sees the override; calls still reach the upstream as <span class="mono">{tool.upstreamName}</span>.
        </p>
        <Field id={id + '-name'} label="Exposed name" error={errors.name} help={'Blank keeps ' + tool.exposedName}>
          <input
            id={id + '-name'}
            value={v.name}
            maxLength={64}
            onInput={(e) => setV({ ...v, name: e.currentTarget.value })}
          />
        </Field>
        <Field id={id + '-title'} label="Title" error={errors.title} help="Blank keeps the upstream's">
          <input
            id={id + '-title'}
            value={v.title}
            maxLength={200}
            onInput={(e) => setV({ ...v, title: e.currentTarget.value })}
          />
        </Field>
        <Field id={id + '-description'} label="Description" error={errors.description} help="Blank keeps the upstream's">
          <textarea
            id={id + '-description'}
            value={v.description}
            rows={4}
            onInput={(e) => setV({ ...v, description: e.currentTarget.value })}
          />
        </Field>
        <fieldset>
          <legend>Annotations</legend>
          <Field id={id + '-ann-title'} label="Annotation title" help="Blank keeps the upstream's">
            <input
              id={id + '-ann-title'}
              value={v.annTitle}
              maxLength={200}
              onInput={(e) => setV({ ...v, annTitle: e.currentTarget.value })}
            />
          </Field>
          {HINTS.map(([k, label]) => {
            const up = tool.annotations ? tool.annotations[k] : undefined;
            return (
              <Field key={k} id={id + '-' + k} label={label}>
                <select id={id + '-' + k} value={v[k]} onChange={(e) => setV({ ...v, [k]: e.currentTarget.value })}>
                  <option value="">{"Upstream's" + (typeof up === 'boolean' ? ' (' + up + ')' : '')}</option>
                  <option value="true">true</option>
                  <option value="false">false</option>
                </select>
              </Field>
            );
          })}
        </fieldset>
        <div class="field">
          <label>
            <input id={id + '-hidden'} type="checkbox" checked={v.hidden} onChange={(e) => setV({ ...v, hidden: e.currentTarget.checked })} /> Hide
            this tool (neither listed nor callable)
          </label>
        </div>
        <div class="actions">
          {override ? (
            <button type="button" class="danger" onClick={remove}>
              Remove override
            </button>
          ) : null}
          <button type="submit" class="primary">
            Save
          </button>
        </div>
      </form>
    </Dialog>
  );
}

// HeaderRows and ConnectionFields take an id prefix p: the Add form and the Edit dialog
// are on the page at once, and ids must stay unique for labels and messages.
function HeaderRows({ p, rows, setRows, errors, redacted }) {
  return (
    <fieldset>
      <legend>Headers</legend>
      {redacted ? <p class="help">Saved values are never shown. Leave [REDACTED] to keep a value; type a new one to replace it.</p> : null}
      {rows.map((h, i) => (
        <div class="header-row" key={i}>
          <Field id={p + '-h-name-' + i} label="Name" error={errors['hname' + i]}>
            <input
              id={p + '-h-name-' + i}
              value={h.name}
              onInput={(ev) => setRows(rows.map((r, j) => (j === i ? { ...r, name: ev.currentTarget.value } : r)))}
            />
          </Field>
          <Field id={p + '-h-value-' + i} label="Value">
            <input
              id={p + '-h-value-' + i}
              type="password"
              autocomplete="off"
              value={h.value}
              onInput={(ev) => setRows(rows.map((r, j) => (j === i ? { ...r, value: ev.currentTarget.value } : r)))}
            />
          </Field>
          <button type="button" class="icon" aria-label={'Remove header ' + (h.name || i + 1)} onClick={() => setRows(rows.filter((_, j) => j !== i))}>
            ×
          </button>
        </div>
      ))}
      <button type="button" onClick={() => setRows([...rows, { name: '', value: '' }])}>
        Add header
      </button>
    </fieldset>
  );
}

function ConnectionFields({ p, v, set, errors }) {
  return (
    <>
      <Field id={p + '-name'} label="Name" error={errors.name}>
        <input id={p + '-name'} value={v.name} required onInput={(ev) => set({ ...v, name: ev.currentTarget.value })} />
      </Field>
      <Field id={p + '-url'} label="URL" error={errors.url}>
        <input id={p + '-url'} type="url" value={v.url} required onInput={(ev) => set({ ...v, url: ev.currentTarget.value })} />
      </Field>
      <Field id={p + '-transport'} label="Transport" error={errors.transport}>
        <select id={p + '-transport'} value={v.transport} onChange={(ev) => set({ ...v, transport: ev.currentTarget.value })}>
          <option value="streamable-http">Streamable HTTP</option>
          <option value="sse">SSE (legacy)</option>
        </select>
      </Field>
    </>
  );
}

const toHeaders = (rows) => Object.fromEntries(rows.filter((h) => h.name).map((h) => [h.name, h.value]));

function AddConnection({ ctx, onDone }) {
  const empty = { name: '', url: '', transport: 'streamable-http', authMode: 'headers', headers: [] };
  const [v, setV] = useState(empty);
  const [errors, setErrors] = useState({});
  const [busy, setBusy] = useState(false);
  const submit = async (ev) => {
    ev.preventDefault();
    const e = fieldErrors(v);
    setErrors(e);
    if (Object.keys(e).length) return;
    setBusy(true);
    try {
      const out = await connections.create({
        name: v.name.trim(), url: v.url, transportType: v.transport, headers: toHeaders(v.headers), workspaceId: ctx.ws,
        authMode: v.authMode, returnTo: consoleReturnTo(),
      });
      setV(empty);
      onDone(v.name.trim(), out);
    } catch (err) {
      setErrors(fieldErrors(v, err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={submit} novalidate aria-labelledby="add-title">
      <h2 id="add-title">Add connection</h2>
      <ConnectionFields p="add" v={v} set={setV} errors={errors} />
      <Field id="add-auth" label="Upstream authorization" help="OAuth: the server's own consent page, once for the workspace (shared) or by each member.">
        <select id="add-auth" value={v.authMode} aria-describedby="add-auth-help" onChange={(ev) => setV({ ...v, authMode: ev.currentTarget.value })}>
          <option value="headers">Headers (static values below)</option>
          <option value="none">None</option>
          <option value="oauth">OAuth, shared (an admin consents)</option>
          <option value="oauth_per_user">OAuth, per user (each member consents)</option>
        </select>
      </Field>
      <HeaderRows p="add" rows={v.headers} setRows={(h) => setV({ ...v, headers: h })} errors={errors} />
      <FormError error={errors.form} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Adding…' : 'Add connection'}
        </button>
      </div>
    </form>
  );
}

function EditDialog({ conn, onClose, onDone }) {
  const [v, setV] = useState({
    name: conn.name, url: conn.url, transport: conn.transportType,
    headers: Object.entries(conn.headers || {}).map(([name, value]) => ({ name, value })),
  });
  const [errors, setErrors] = useState({});
  const submit = async (ev) => {
    ev.preventDefault();
    const e = fieldErrors(v);
    setErrors(e);
    if (Object.keys(e).length) return;
    try {
      await connections.update(conn.id, { name: v.name.trim(), url: v.url, transportType: v.transport, headers: toHeaders(v.headers) });
      onDone();
    } catch (err) {
      setErrors(fieldErrors(v, err));
    }
  };
  return (
    <Dialog id="edit-dialog" title={'Edit ' + conn.name} onClose={onClose}>
      <form onSubmit={submit} novalidate>
        <ConnectionFields p="edit" v={v} set={setV} errors={errors} />
        <HeaderRows p="edit" rows={v.headers} setRows={(h) => setV({ ...v, headers: h })} errors={errors} redacted />
        <FormError error={errors.form} />
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
