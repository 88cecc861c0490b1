// Chats and pins: the workspace's chats, the pinner, and the chat's resolved tool set.

import { useEffect, useState } from 'preact/hooks';
import { chats as chatsApi, connections } from '../api.js';
import { Badge, ErrorBox, Field, Notice, markReady, useLoad } from '../ui.jsx';

export function Chats({ ctx, arg: chatId, go }) {
  const [chats, reload] = useLoad(() => chatsApi.list({ workspaceId: ctx.ws }), [ctx.ws]);
  const [title, setTitle] = useState('');
  const [error, setError] = useState(null);
  const [titleErr, setTitleErr] = useState('');
  useEffect(() => {
    if (!chats.loading && !chatId) markReady('chats');
  }, [chats, chatId]);

  const create = async (ev) => {
    ev.preventDefault();
    setError(null);
    setTitleErr('');
    if (!title.trim()) {
      setTitleErr('Give the chat a title.');
      return;
    }
    if (title.trim().length > 200) {
      setTitleErr('At most 200 characters.');
      return;
    }
    try {
      const c = await chatsApi.create({ workspaceId: ctx.ws, title: title.trim() });
      setTitle('');
      await reload();
      go('#/chats/' + c.id);
    } catch (err) {
      if (err.status === 400) setTitleErr(err.message);
      else setError(err);
    }
  };

  const list = chats.data ? chats.data.chats : [];
  const current = list.find((c) => c.id === chatId);
  return (
    <section aria-labelledby="page-title" class="split">
      <div>
        <h1 id="page-title">Chats and pins</h1>
        <ErrorBox error={chats.error || error} />
        {ctx.isAdmin ? (
          <form class="inline-form" onSubmit={create} novalidate>
            <Field id="chat-title" label="New chat title" error={titleErr}>
              <input id="chat-title" value={title} maxLength={200} onInput={(ev) => setTitle(ev.currentTarget.value)} />
            </Field>
            <button type="submit" class="primary">
              Create chat
            </button>
          </form>
        ) : null}
        <nav aria-label="Chats">
          <ul class="chat-list">
            {list.map((c) => (
              <li key={c.id}>
                <a href={'#/chats/' + c.id} aria-current={c.id === chatId ? 'page' : undefined}>
                  {c.title || 'Untitled chat'}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        {!chats.loading && list.length === 0 ? <p>No chats yet.</p> : null}
      </div>
      <div>{chatId ? <ChatDetail key={chatId} ctx={ctx} chat={current} chatId={chatId} /> : <p>Choose a chat to see its pins and tools.</p>}</div>
    </section>
  );
}

function ChatDetail({ ctx, chat, chatId }) {
  const [data, reload] = useLoad(async () => {
    const [pins, tools, conns] = await Promise.all([
      chatsApi.pins(chatId),
      chatsApi.tools(chatId),
      ctx.isAdmin ? connections.statuses(ctx.ws) : Promise.resolve(null),
    ]);
    return { pins: pins.pins, tools, statuses: conns ? conns.statuses : null };
  }, [chatId, ctx.ws]);
  const [error, setError] = useState(null);
  useEffect(() => {
    if (!data.loading) markReady('chat');
  }, [data]);

  const toggle = async (st, pin) => {
    setError(null);
    try {
      if (pin) await chatsApi.unpin(chatId, pin.id);
      else await chatsApi.pin(chatId, st.connectionId);
      await reload();
    } catch (err) {
      setError(err);
    }
  };

  if (data.error) return <ErrorBox error={data.error} />;
  if (!data.data) return <p aria-live="polite">Loading…</p>;
  const { pins, tools, statuses } = data.data;
  const pinOf = Object.fromEntries(pins.map((p) => [p.connectionId, p]));
  const why = (t) => {
    if (tools.fellBack) return ['fallback', 'Fallback: every pin is disabled or out of scope, so the workspace default applies'];
    const c = tools.connections.find((x) => x.id === t.connectionId);
    if (tools.pinned && c && c.pinned) return ['pinned', 'Pinned'];
    if (c && c.scope === 'workspace') return ['always', 'Always included'];
    return ['default', 'Workspace default'];
  };
  return (
    <div>
      <h2>{(chat && chat.title) || 'Untitled chat'}</h2>
      <ErrorBox error={error} />
      <h3 id="pinner-title">Pinned connections</h3>
      <PinsExplained />
      {statuses ? (
        <fieldset class="pinner" aria-labelledby="pinner-title">
          {statuses.map((s) => (
            <div class="check" key={s.connectionId} data-scope={s.workspaceId ? 'workspace' : 'global'}>
              <input
                type="checkbox"
                id={'pin-' + s.connectionId}
                checked={!!pinOf[s.connectionId]}
                onChange={() => toggle(s, pinOf[s.connectionId])}
              />
              <label for={'pin-' + s.connectionId}>
                {s.name} <span class="muted">({s.tools.active} tools{s.enabled ? '' : ', disabled'})</span>
              </label>
              {s.workspaceId ? (
                <Badge kind="why-always" title="A workspace connection: in every chat of the workspace, pinned or not">
                  Always included
                </Badge>
              ) : (
                <Badge kind="source" title="Shared by every workspace: in a chat with pins only when pinned">
                  Global
                </Badge>
              )}
            </div>
          ))}
          {statuses.length === 0 ? <p>No connections in this workspace.</p> : null}
        </fieldset>
      ) : (
        <ul class="pin-list">
          {pins.map((p) => (
            <li key={p.id}>{p.connectionName}</li>
          ))}
          {pins.length === 0 ? <li>No pins: the workspace default applies.</li> : null}
        </ul>
      )}
      <h3>Resolved tool set</h3>
      {tools.fellBack ? <Notice>Every pin is disabled or out of scope: the chat falls back to the workspace default.</Notice> : null}
      <table class="toolset">
        <caption class="sr-only">Tools this chat sees</caption>
        <thead>
          <tr>
            <th scope="col">Tool</th>
            <th scope="col">Source</th>
            <th scope="col">Why</th>
          </tr>
        </thead>
        <tbody>
          {tools.tools.map((t) => {
            const [kind, label] = why(t);
            return (
              <tr key={t.name} data-tool={t.name}>
                <td class="mono">{t.name}</td>
                <td>{t.source}</td>
                <td>
                  <Badge kind={'why-' + kind}>{label}</Badge>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p class="help">Plus the gateway's built-in agentpack_* tools, which every chat sees.</p>
    </div>
  );
}

// PinsExplained says what pins do (docs/DESIGN.md §7): they add connections and never
// remove the workspace's own. Only global connections come and go with pins.
function PinsExplained() {
  return (
    <div class="callout pins-explained" id="pins-explained">
      <p>
        <strong>Pins add connections; they never remove this workspace's own.</strong> Every enabled connection of the
        workspace is always in the chat, pinned or not. Pins decide about <em>global</em> connections (shared by every
        workspace): with no pins the chat gets all of them; once it has a pin, only the pinned ones.
      </p>
      <p class="help">If every pin is disabled or out of scope, the chat falls back to the no-pins set.</p>
    </div>
  );
}
