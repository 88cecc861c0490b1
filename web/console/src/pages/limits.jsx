// Rate limits: the workspace's limits and quotas with their usage in the current UTC
// minute and day; create and delete (admin; docs/RATE-LIMITS.md). REST:
// GET/POST /api/rate-limits, DELETE /api/rate-limits/{id}.

import { useEffect, useState } from 'preact/hooks';
import { connections, rateLimits } from '../api.js';
import { AdminOnly, ConfirmDialog, ErrorBox, Field, FormError, Notice, fieldErrorOf, markReady, useAction, useLoad } from '../ui.jsx';

const WINDOWS = [
  ['minute', 'perMinute', 'This minute'],
  ['day', 'perDay', 'Today (UTC)'],
];

// scopeText names what a limit covers: the whole workspace, one connection or one tool.
function scopeText(l, conns) {
  if (l.tool) return 'Tool ' + l.tool;
  if (l.connectionId) {
    const c = conns.find((x) => x.id === l.connectionId);
    return 'Connection ' + (c ? c.name : l.connectionId.slice(0, 8));
  }
  return 'Whole workspace';
}

function whoText(p) {
  if (p === '') return 'Shared by all members';
  if (p === '*') return 'Each member';
  return 'Member ' + p;
}

// UsageCell shows one window of a limit: used / limit per subject (a shared or
// one-member limit has at most one subject; "each member" one per member who called).
function UsageCell({ l, win, key2, label }) {
  const max = l[key2];
  if (max == null) return <td data-label={label} class="muted">no limit</td>;
  const rows = l.usage.filter((u) => u.window === win);
  const shown = rows.length ? rows : [{ subject: '', used: 0, limit: max }];
  return (
    <td data-label={label} data-window={win}>
      {shown.map((u) => (
        <div class="usage" key={u.subject} data-used={u.used} data-limit={u.limit}>
          <meter min="0" max={u.limit} value={u.used} aria-hidden="true" />{' '}
          <span>
            {u.used} / {u.limit}
            {u.subject && l.principal === '*' ? <span class="muted"> · {u.subject}</span> : null}
          </span>
          {u.resetsAt ? (
            <span class="muted small"> · resets {new Date(u.resetsAt).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })}</span>
          ) : null}
        </div>
      ))}
    </td>
  );
}

export function Limits({ ctx }) {
  const [list, reload] = useLoad(async () => {
    const [l, c] = await Promise.all([
      rateLimits.list(ctx.ws),
      connections.list(ctx.ws),
    ]);
    return { limits: l.limits, connections: c.connections };
  }, [ctx.ws]);
  const [act, message, actionError, setMessage] = useAction(reload);
  const [deleting, setDeleting] = useState(null);
  useEffect(() => {
    if (!list.loading) markReady('limits');
  }, [list]);

  if (list.error && list.error.status === 403) {
    return (
      <AdminOnly title="Rate limits" error={list.error}>
        Rate limits and their usage are visible to workspace admins only.
      </AdminOnly>
    );
  }
  const limits = list.data ? list.data.limits : [];
  const conns = list.data ? list.data.connections : [];
  const remove = (l) => act(() => rateLimits.remove(l.id, ctx.ws), 'The limit was deleted.');
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Rate limits</h1>
      <p>
        Caps on the calls this workspace's clients make to upstream tools, counted in fixed UTC windows across every
        gateway instance. A call over a limit is refused with <code>RATE_LIMITED</code> and the wait; built-in tools are
        never limited.
      </p>
      {message ? <Notice kind={message.kind}>{message.text}</Notice> : null}
      <ErrorBox error={list.error || actionError} />
      <div class="count-row">
        <p class="count" aria-live="polite">
          {list.loading ? 'Loading…' : `${limits.length} ${limits.length === 1 ? 'limit' : 'limits'}`}
        </p>
        <button type="button" id="rl-refresh" onClick={reload}>
          Refresh usage
        </button>
      </div>
      {limits.length ? (
        <table class="limits stack">
          <caption class="sr-only">Rate limits with their usage in the current minute and day (UTC)</caption>
          <thead>
            <tr>
              <th scope="col">Applies to</th>
              <th scope="col">Who</th>
              <th scope="col">This minute</th>
              <th scope="col">Today (UTC)</th>
              <th scope="col">
                <span class="sr-only">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {limits.map((l) => (
              <tr key={l.id} data-limit={l.id}>
                <td data-label="Applies to">{scopeText(l, conns)}</td>
                <td data-label="Who">{whoText(l.principal)}</td>
                {WINDOWS.map(([w, k, label]) => (
                  <UsageCell key={w} l={l} win={w} key2={k} label={label} />
                ))}
                <td class="actions">
                  <button type="button" class="danger" onClick={() => setDeleting(l)}>
                    Delete<span class="sr-only"> limit on {scopeText(l, conns)}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : !list.loading ? (
        <p>No limits: calls are unlimited.</p>
      ) : null}
      {list.data ? (
        <AddLimit
          ctx={ctx}
          conns={conns}
          onDone={(created) => {
            setMessage({ text: created ? 'The limit was created.' : 'The limit of that scope was replaced.', kind: 'ok' });
            reload();
          }}
        />
      ) : null}
      {deleting ? (
        <ConfirmDialog
          id="limit-delete-dialog"
          title="Delete this limit?"
          confirm="Delete"
          onCancel={() => setDeleting(null)}
          onConfirm={() => remove(deleting)}
        >
          <p>
            {scopeText(deleting, conns)}, {whoText(deleting.principal).toLowerCase()}: calls are no longer counted against
            it.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

// limitErrors checks the form in the page (the API checks again) and maps an API
// validation error onto the field its details name.
function limitErrors(v, apiErr) {
  const e = {};
  if (v.scope === 'connection' && !v.connectionId) e.connection = 'Choose a connection.';
  if (v.scope === 'tool' && !v.tool.trim()) e.tool = 'Choose a tool.';
  if (v.who === 'member' && !v.member.trim()) e.member = "Enter the member's token subject.";
  for (const k of ['perMinute', 'perDay']) {
    if (v[k].trim() !== '' && !/^-?\d+$/.test(v[k].trim())) e[k] = 'Enter a whole number of calls.';
  }
  if (!Object.keys(e).length && v.perMinute.trim() === '' && v.perDay.trim() === '') e.perMinute = 'Give calls per minute, per day, or both.';
  if (apiErr && !Object.keys(e).length) {
    const map = { perMinute: 'perMinute', perDay: 'perDay', connectionId: 'connection', tool: 'tool' };
    if (v.who === 'member') map.principal = 'member';
    Object.assign(e, fieldErrorOf(apiErr, map) || { form: apiErr });
  }
  return e;
}

function AddLimit({ ctx, conns, onDone }) {
  const empty = { scope: 'workspace', connectionId: '', toolConn: '', tool: '', who: 'shared', member: '', perMinute: '', perDay: '' };
  const [v, setV] = useState(empty);
  const [errors, setErrors] = useState({});
  const [busy, setBusy] = useState(false);
  const [tools, setTools] = useState([]);
  useEffect(() => {
    if (v.scope !== 'tool' || !v.toolConn) {
      setTools([]);
      return;
    }
    connections.tools(v.toolConn).then(
      (r) => setTools(r.tools.filter((t) => t.exposedName).map((t) => t.exposedName)),
      () => setTools([])
    );
  }, [v.scope, v.toolConn]);
  const set = (patch) => setV({ ...v, ...patch });
  const submit = async (ev) => {
    ev.preventDefault();
    const e = limitErrors(v);
    setErrors(e);
    if (Object.keys(e).length) return;
    const body = { workspaceId: ctx.ws };
    if (v.scope === 'connection') body.connectionId = v.connectionId;
    if (v.scope === 'tool') body.tool = v.tool.trim();
    if (v.who === 'each') body.principal = '*';
    if (v.who === 'member') body.principal = v.member.trim();
    if (v.perMinute.trim() !== '') body.perMinute = Number(v.perMinute.trim());
    if (v.perDay.trim() !== '') body.perDay = Number(v.perDay.trim());
    setBusy(true);
    try {
      const out = await rateLimits.put(body);
      setV(empty);
      onDone(!!out && out.createdAt === out.updatedAt);
    } catch (err) {
      setErrors(limitErrors(v, err));
    } finally {
      setBusy(false);
    }
  };
  const num = (k, label, help) => (
    <Field id={'rl-' + k} label={label} error={errors[k]} help={help}>
      <input
        id={'rl-' + k}
        inputmode="numeric"
        value={v[k]}
        onInput={(ev) => set({ [k]: ev.currentTarget.value })}
      />
    </Field>
  );
  return (
    <form class="panel" id="limit-form" onSubmit={submit} novalidate aria-labelledby="rl-title">
      <h2 id="rl-title">Add a limit</h2>
      <p class="help">Setting a limit for a scope that already has one replaces its values.</p>
      <Field id="rl-scope" label="Applies to">
        <select id="rl-scope" value={v.scope} onChange={(ev) => set({ scope: ev.currentTarget.value })}>
          <option value="workspace">The whole workspace (every upstream tool)</option>
          <option value="connection">One connection</option>
          <option value="tool">One tool</option>
        </select>
      </Field>
      {v.scope === 'connection' ? (
        <Field id="rl-connection" label="Connection" error={errors.connection}>
          <select
            id="rl-connection"
            value={v.connectionId}
            onChange={(ev) => set({ connectionId: ev.currentTarget.value })}
          >
            <option value="">Choose…</option>
            {conns.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </Field>
      ) : null}
      {v.scope === 'tool' ? (
        <>
          <Field id="rl-toolconn" label="Tools of" help="Pick a connection to list its tools, or type an exposed name below.">
            <select id="rl-toolconn" value={v.toolConn} aria-describedby="rl-toolconn-help" onChange={(ev) => set({ toolConn: ev.currentTarget.value })}>
              <option value="">Choose…</option>
              {conns.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          </Field>
          <Field id="rl-tool" label="Exposed tool name" error={errors.tool}>
            <input
              id="rl-tool"
              list="rl-tool-names"
              value={v.tool}
              spellcheck={false}
              onInput={(ev) => set({ tool: ev.currentTarget.value })}
            />
            <datalist id="rl-tool-names">
              {tools.map((n) => (
                <option key={n} value={n} />
              ))}
            </datalist>
          </Field>
        </>
      ) : null}
      <Field id="rl-who" label="Who">
        <select id="rl-who" value={v.who} onChange={(ev) => set({ who: ev.currentTarget.value })}>
          <option value="shared">Shared: one count for all members</option>
          <option value="each">Each member: a count per member</option>
          <option value="member">One member only</option>
        </select>
      </Field>
      {v.who === 'member' ? (
        <Field id="rl-member" label="Member (token subject)" error={errors.member}>
          <input
            id="rl-member"
            value={v.member}
            spellcheck={false}
            onInput={(ev) => set({ member: ev.currentTarget.value })}
          />
        </Field>
      ) : null}
      <div class="row-fields">
        {num('perMinute', 'Calls per minute', 'UTC minute; 1 to 1,000,000.')}
        {num('perDay', 'Calls per day', 'UTC day; 1 to 100,000,000.')}
      </div>
      <FormError error={errors.form} id="rl-form-error" />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Add limit'}
        </button>
      </div>
    </form>
  );
}
