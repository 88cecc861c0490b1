// Usage: the workspace's calls, errors (every call that did not succeed) and p50/p95 latency per tool,
// connection, principal or chat over 24 h or 7 d, from the audit log (admin; docs/POLICIES.md
// "Usage"). REST: api.js usage (csv for the export).

import { useEffect, useState } from 'preact/hooks';
import { usage as usageApi } from '../api.js';
import { AdminOnly, ErrorBox, markReady, useLoad } from '../ui.jsx';

const ms = (v) => (v == null ? '—' : v.toFixed(1) + ' ms');
// The API's keys for "no connection" (built-ins) and "no chat" read as words here.
const label = (by, key) => (by === 'chat' && key === 'none' ? '(no chat)' : by === 'connection' && key === 'builtin' ? '(built-in)' : key);
// who is a principal row's person: their email (else name, the API's label), the token
// subject under it; a subject the gateway has no person for as it is.
const who = (r) =>
  r.label ? (
    <>
      <span class="person">{r.label}</span>
      <span class="muted small mono subject">{r.key}</span>
    </>
  ) : (
    <span class="mono">{r.key}</span>
  );

export function Usage({ ctx }) {
  const [by, setBy] = useState('tool');
  const [win, setWin] = useState('24h');
  const [usage, reload] = useLoad(() => usageApi.get({ workspaceId: ctx.ws, by, window: win }), [ctx.ws, by, win]);
  useEffect(() => {
    if (!usage.loading) markReady('usage');
  }, [usage]);
  const csv = async () => {
    const blob = await usageApi.csv({ workspaceId: ctx.ws, by, window: win });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `usage-${by}-${win}.csv`;
    a.click();
    URL.revokeObjectURL(a.href);
  };
  if (usage.error && usage.error.status === 403) {
    return (
      <AdminOnly title="Usage" error={usage.error}>
        Usage is visible to workspace admins only.
      </AdminOnly>
    );
  }
  const rows = usage.data ? usage.data.rows : [];
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Usage</h1>
      <div class="row" role="group" aria-label="Grouping and window">
        <label>Per{' '}
          <select id="usage-by" value={by} onChange={(e) => setBy(e.currentTarget.value)}>
            <option value="tool">tool</option>
            <option value="connection">connection</option>
            <option value="principal">principal</option>
            <option value="chat">chat</option>
          </select>
        </label>
        <label>Over{' '}
          <select id="usage-window" value={win} onChange={(e) => setWin(e.currentTarget.value)}>
            <option value="24h">24 h</option>
            <option value="7d">7 d</option>
          </select>
        </label>
        <button type="button" onClick={reload} id="usage-refresh">Refresh</button>
        <button type="button" onClick={csv} id="usage-csv">Export CSV</button>
      </div>
      <ErrorBox error={usage.error} />
      <table class="list stack" id="usage-table">
        <thead>
          <tr><th scope="col">{by}</th><th scope="col">Calls</th><th scope="col">Errors</th><th scope="col">p50</th><th scope="col">p95</th></tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key} data-key={r.key} data-calls={r.calls}>
              <th scope="row" data-label={by}>{by === 'principal' ? who(r) : label(by, r.key)}</th>
              <td data-label="Calls">{r.calls}</td>
              <td data-label="Errors">{r.errors}</td>
              <td data-label="p50">{ms(r.p50Ms)}</td>
              <td data-label="p95">{ms(r.p95Ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!usage.loading && !rows.length ? <p class="muted">No audited calls in this window.</p> : null}
      <p class="muted small" id="usage-errors-defined">
        Read from the audit log when the page loads: every audited call is counted at once. Errors are the calls that did
        not succeed: refused by an access policy, answered with a tool error (isError), refused by the server (a JSON-RPC
        error), timed out, or failed to reach the server. A tool is counted under its exposed name whichever endpoint
        called it (the workspace's or the server's own).
      </p>
    </section>
  );
}
