// Connections: the workspace's manual and marketplace connections (admin).

import { useEffect, useState } from 'preact/hooks';
import { api, qs, openAuthorization } from '../api.js';
import { Badge, Dialog, ErrorBox, Field, Notice, describedBy, markReady, outcomeNotice, useLoad, when } from '../ui.jsx';
import { ConnectStep, consoleReturnTo } from './marketplace.jsx';
import { ClientConfigs } from './setup.jsx';
import { endpoint } from '../mcp.js';

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
        {st === 'authorized' && az.authorizedBy ? ` by ${az.authorizedBy} · ${when(az.authorizedAt)}` : null}
        {az.mode === 'oauth_per_user' ? ' (your own grant)' : null}
        {az.reason ? <span class="err-text"> · {az.reason}</span> : null}
      </dd>
    </>
  );
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

// fieldErrors checks a connection form in the page (the API checks again) and maps an
// API validation error onto the field it names.
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
  if (apiErr && apiErr.status === 400 && !Object.keys(e).length) {
    const m = apiErr.message.toLowerCase();
    const hdr = apiErr.details && apiErr.details.header;
    if (hdr) {
      const i = v.headers.findIndex((h) => h.name.toLowerCase() === String(hdr).toLowerCase());
      e[i >= 0 ? 'hname' + i : 'form'] = apiErr.message;
    } else if (m.includes('url') || m.includes('host') || m.includes('address')) e.url = apiErr.message;
    else if (m.includes('name')) e.name = apiErr.message;
    else if (m.includes('transport')) e.transport = apiErr.message;
    else e.form = apiErr.message;
  }
  return e;
}

export function Connections({ ctx }) {
  // A member never gets here from the navigation; one who opens the address anyway sees
  // the API's refusal (the page asks, the API decides).
  const [list, reload] = useLoad(async () => {
    const [c, s] = await Promise.all([
      api('GET', '/api/mcp-connections' + qs({ workspaceId: ctx.ws })),
      api('GET', '/api/mcp-connections/statuses' + qs({ workspaceId: ctx.ws })),
    ]);
    const st = Object.fromEntries(s.statuses.map((x) => [x.connectionId, x]));
    return c.connections.map((x) => ({ ...x, status: st[x.id] }));
  }, [ctx.ws]);
  const [message, setMessage] = useState(null);
  const [actionError, setActionError] = useState(null);
  const [setup, setSetup] = useState(null);
  const [editing, setEditing] = useState(null);
  const [deleting, setDeleting] = useState(null);
  const [tests, setTests] = useState({});
  const [open, setOpen] = useState({});
  const [connecting, setConnecting] = useState(null);

  useEffect(() => {
    if (!list.loading) markReady('connections');
  }, [list]);

  if (list.error && list.error.status === 403) {
    return (
      <section aria-labelledby="page-title">
        <h1 id="page-title">Connections</h1>
        <ErrorBox error={list.error} />
        <Notice kind="warn">Connections, their URLs and their headers are visible to workspace admins only.</Notice>
      </section>
    );
  }

  const act = async (f, okMsg) => {
    setActionError(null);
    setMessage(null);
    try {
      await f();
      if (okMsg) setMessage({ text: okMsg, kind: 'ok' });
      reload();
    } catch (err) {
      setActionError(err);
    }
  };
  const test = async (c) => {
    setTests({ ...tests, [c.id]: { busy: true } });
    const t0 = performance.now();
    try {
      const r = await api('POST', `/api/mcp-connections/${c.id}/test`);
      setTests((t) => ({ ...t, [c.id]: { result: r, ms: Math.round(performance.now() - t0) } }));
      reload();
    } catch (err) {
      setTests((t) => ({ ...t, [c.id]: { error: err } }));
    }
  };

  // authorize (re-)starts the upstream consent and leaves for the authorization page; the
  // callback page links back here.
  const authorize = (c) =>
    act(async () => {
      const r = await api('POST', `/api/mcp-connections/${c.id}/authorize`, { returnTo: consoleReturnTo() });
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
        {conns.map((c) => {
          const s = c.status || {};
          const t = tests[c.id];
          const drifted = (s.tools && (s.tools.drifted || 0) + (s.tools.pending || 0)) || 0;
          // A global connection (no workspace) is written by superusers only; an admin
          // sees it without the actions the API would refuse.
          const canWrite = ctx.isSuper || !!c.workspaceId;
          return (
            <li class="row" key={c.id} data-connection={c.name}>
              <div class="row-head">
                <h2>{c.name}</h2>
                <Badge kind="source">{c.source === 'marketplace' ? 'Marketplace' : 'Manual'}</Badge>
                <StateBadge live={s.live} lastError={c.lastError} lastConnectedAt={c.lastConnectedAt} />
                {drifted ? <Badge kind="drift">{drifted} to review</Badge> : null}
                {!c.workspaceId ? <Badge kind="source">Global</Badge> : null}
                <label class="switch">
                  <input
                    type="checkbox"
                    role="switch"
                    checked={c.enabled}
                    disabled={!canWrite}
                    aria-label={'Enabled: ' + c.name}
                    onChange={() => act(() => api('POST', `/api/mcp-connections/${c.id}/toggle`), `${c.name} was ${c.enabled ? 'disabled' : 'enabled'}.`)}
                  />
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
                    <button type="button" class={s.authorization.authorization === 'authorized' ? '' : 'primary'} onClick={() => authorize(c)}>
                      {s.authorization.authorization === 'required' ? 'Authorize' : 'Re-authorize'}
                      <span class="sr-only"> {c.name}</span>
                    </button>
                  ) : null}
                  <button type="button" onClick={() => test(c)} disabled={t && t.busy}>
                    Test<span class="sr-only"> {c.name}</span>
                  </button>
                  <button type="button" onClick={() => setEditing(c)}>
                    Edit<span class="sr-only"> {c.name}</span>
                  </button>
                  <button type="button" aria-expanded={open[c.id] ? 'true' : 'false'} onClick={() => setOpen({ ...open, [c.id]: !open[c.id] })}>
                    Tools<span class="sr-only"> of {c.name}</span>
                  </button>
                  <button type="button" onClick={() => setSetup(c)}>
                    Client setup<span class="sr-only"> for {c.name}</span>
                  </button>
                  <button type="button" class="danger" onClick={() => setDeleting(c)}>
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
              {open[c.id] ? <ToolList ctx={ctx} conn={c} onChange={reload} /> : null}
            </li>
          );
        })}
      </ul>
      {!list.loading && conns.length === 0 ? <p>No connections yet: install one from the Marketplace or add one below.</p> : null}
      <AddConnection
        ctx={ctx}
        onDone={(name, out) => {
          const az = out && out.authorization;
          if (az && az.status === 'authorization_required' && az.authorizationUrl) setConnecting({ name, url: az.authorizationUrl });
          setMessage(outcomeNotice(name, 'added', out));
          reload();
        }}
      />
      {connecting ? (
        <Dialog id="connect-dialog" title={'Connect ' + connecting.name} onClose={() => setConnecting(null)}>
          <ConnectStep name={connecting.name} url={connecting.url} onLater={() => setConnecting(null)} />
        </Dialog>
      ) : null}
      {setup ? (
        <Dialog id="setup-dialog" title={'Client setup: ' + setup.name} onClose={() => setSetup(null)}>
          <ClientConfigs url={endpoint(ctx.ws, setup.handle || setup.id)} id="conn-setup" />
        </Dialog>
      ) : null}
      {editing ? <EditDialog conn={editing} onClose={() => setEditing(null)} onDone={() => { setEditing(null); setMessage({ text: 'Saved.', kind: 'ok' }); reload(); }} /> : null}
      {deleting ? (
        <Dialog id="delete-dialog" title={'Delete ' + deleting.name + '?'} onClose={() => setDeleting(null)}>
          <p>Its tools disappear from every chat of the workspace, and its pins are removed.</p>
          <div class="actions">
            <button type="button" onClick={() => setDeleting(null)}>
              Cancel
            </button>
            <button
              type="button"
              class="danger"
              onClick={() => {
                const c = deleting;
                setDeleting(null);
                act(() => api('DELETE', `/api/mcp-connections/${c.id}`), `${c.name} was deleted.`);
              }}
            >
              Delete
            </button>
          </div>
        </Dialog>
      ) : null}
    </section>
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
        api('GET', `/api/mcp-connections/${conn.id}/tools`),
        api('GET', `/api/mcp-connections/${conn.id}/overrides` + qs({ workspaceId: ctx.ws })),
      ]).then(([t, o]) => ({ tools: t.tools, overrides: o.overrides })),
    [conn.id, ctx.ws],
  );
  const [error, setError] = useState(null);
  const [editing, setEditing] = useState(null);
  const [shown, setShown] = useState({});
  const approve = async (t) => {
    setError(null);
    try {
      await api('POST', `/api/mcp-connections/${conn.id}/tools/${encodeURIComponent(t.upstreamName)}/approve`);
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
  const path = `/api/mcp-connections/${conn.id}/tools/${encodeURIComponent(tool.upstreamName)}/override`;
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
      await api('PUT', path, body);
      onSaved();
    } catch (err) {
      const f = err.details && err.details.field;
      if (f && ['name', 'title', 'description'].includes(f)) setErrors({ [f]: err.message });
      else setError(err);
    }
  };
  const remove = async () => {
    setError(null);
    try {
      await api('DELETE', path + qs({ workspaceId: ctx.ws }));
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
            aria-describedby={describedBy(id + '-name', errors.name, true)}
            onInput={(e) => setV({ ...v, name: e.currentTarget.value })}
          />
        </Field>
        <Field id={id + '-title'} label="Title" error={errors.title} help="Blank keeps the upstream's">
          <input
            id={id + '-title'}
            value={v.title}
            maxLength={200}
            aria-describedby={describedBy(id + '-title', errors.title, true)}
            onInput={(e) => setV({ ...v, title: e.currentTarget.value })}
          />
        </Field>
        <Field id={id + '-description'} label="Description" error={errors.description} help="Blank keeps the upstream's">
          <textarea
            id={id + '-description'}
            value={v.description}
            rows={4}
            aria-describedby={describedBy(id + '-description', errors.description, true)}
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
              aria-describedby={describedBy(id + '-ann-title', null, true)}
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
              aria-invalid={errors['hname' + i] ? 'true' : undefined}
              aria-describedby={describedBy(p + '-h-name-' + i, errors['hname' + i])}
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
        <input id={p + '-name'} value={v.name} required aria-invalid={errors.name ? 'true' : undefined} aria-describedby={describedBy(p + '-name', errors.name)} onInput={(ev) => set({ ...v, name: ev.currentTarget.value })} />
      </Field>
      <Field id={p + '-url'} label="URL" error={errors.url}>
        <input id={p + '-url'} type="url" value={v.url} required aria-invalid={errors.url ? 'true' : undefined} aria-describedby={describedBy(p + '-url', errors.url)} onInput={(ev) => set({ ...v, url: ev.currentTarget.value })} />
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
      const out = await api('POST', '/api/mcp-connections', {
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
      {errors.form ? <p class="field-error" role="alert">{errors.form}</p> : null}
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
      await api('PUT', `/api/mcp-connections/${conn.id}`, { name: v.name.trim(), url: v.url, transportType: v.transport, headers: toHeaders(v.headers) });
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
        {errors.form ? <p class="field-error" role="alert">{errors.form}</p> : null}
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
