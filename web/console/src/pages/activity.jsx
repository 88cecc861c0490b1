// Activity: the workspace's event_log, filterable by entity and action (admin).

import { useEffect, useState } from 'preact/hooks';
import { events as eventLog } from '../api.js';
import { ErrorBox, Field, Notice, markReady, useLoad, when } from '../ui.jsx';

const ENTITIES = [
  ['', 'All entities'],
  ['mcp_connection', 'Connections'],
  ['mcp_catalog_entry', 'Catalog entries'],
  ['chat', 'Chats'],
];

export function Activity({ ctx }) {
  const [entityType, setEntity] = useState('');
  const [action, setAction] = useState('');
  const [applied, setApplied] = useState('');
  const [more, setMore] = useState([]);
  const [moreErr, setMoreErr] = useState(null);
  const [page, reload] = useLoad(
    () => eventLog.list({ workspaceId: ctx.ws, entityType, action: applied }),
    [ctx.ws, entityType, applied]
  );
  useEffect(() => {
    setMore([]);
    if (!page.loading) markReady('activity');
  }, [page]);
  if (page.error && page.error.status === 403) {
    return (
      <section aria-labelledby="page-title">
        <h1 id="page-title">Activity</h1>
        <ErrorBox error={page.error} />
        <Notice kind="warn">The activity log is visible to workspace admins only.</Notice>
      </section>
    );
  }
  const pages = page.data ? [page.data, ...more] : [];
  const events = pages.flatMap((p) => p.events);
  const last = pages[pages.length - 1];
  const loadMore = async () => {
    try {
      const next = await eventLog.list({ workspaceId: ctx.ws, entityType, action: applied, before: last.nextBefore });
      setMore([...more, next]);
    } catch (err) {
      setMoreErr(err);
    }
  };
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Activity</h1>
      <form class="toolbar" onSubmit={(ev) => { ev.preventDefault(); setApplied(action.trim()); }}>
        <Field id="ev-entity" label="Entity">
          <select id="ev-entity" value={entityType} onChange={(ev) => setEntity(ev.currentTarget.value)}>
            {ENTITIES.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </Field>
        <Field id="ev-action" label="Action">
          <input id="ev-action" value={action} placeholder="e.g. mcp.installed" onInput={(ev) => setAction(ev.currentTarget.value)} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={page.error || moreErr} />
      <table class="events stack">
        <caption class="sr-only">Events, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">Action</th>
            <th scope="col">Entity</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => (
            <tr key={e.id}>
              <td data-label="When">{when(e.occurredAt)}</td>
              <td data-label="Who">{e.actor}</td>
              <td data-label="Action" class="code-text">{e.action}</td>
              <td data-label="Entity">
                {e.entityType} <span class="code-text muted">{e.entityId.slice(0, 8)}</span>
              </td>
              <td data-label="Details" class="code-text small details">{summary(e.payload)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!page.loading && events.length === 0 ? <p>No events match.</p> : null}
      {last && last.hasMore ? (
        <button type="button" onClick={loadMore}>
          Load older events
        </button>
      ) : null}
    </section>
  );
}

function summary(p) {
  if (!p) return '';
  return Object.entries(p)
    .filter(([, v]) => typeof v !== 'object')
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}
