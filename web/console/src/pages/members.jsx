// Members: the workspace's members and invitations; add (an email that has signed in
// becomes a member at once, any other is invited until its first sign-in), change role,
// remove, withdraw an invitation (admin; docs/AUTH.md). A superuser also creates
// workspaces here (POST /api/workspaces). REST: api.js members, workspaces.

import { useEffect, useState } from 'preact/hooks';
import { members as membersApi, workspaces } from '../api.js';
import { endpoint } from '../mcp.js';
import { AdminOnly, ErrorBox, Field, FormError, Notice, errorText, markReady, useAction, useLoad, when } from '../ui.jsx';

const ROLES = [
  ['member', 'Member'],
  ['admin', 'Admin'],
];

export function Members({ ctx }) {
  const [list, reload] = useLoad(() => membersApi.list(ctx.ws), [ctx.ws]);
  const [act, message, actionError, setMessage] = useAction(reload);
  useEffect(() => {
    if (!list.loading) markReady('members');
  }, [list]);

  if (list.error && list.error.status === 403) {
    return (
      <AdminOnly title="Members" error={list.error}>
        The member list is visible to workspace admins only.
      </AdminOnly>
    );
  }
  const members = list.data ? list.data.members : [];
  const who = (m) => m.name || m.email;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Members</h1>
      <p>
        Who may use this workspace, with which role. People sign in with your organisation's account; removing a member
        takes effect at their next token refresh at the latest.
      </p>
      {message ? <Notice kind={message.kind}>{message.text}</Notice> : null}
      <ErrorBox error={list.error || actionError} />
      <p class="count" aria-live="polite">
        {list.loading ? 'Loading…' : `${members.length} ${members.length === 1 ? 'entry' : 'entries'}`}
      </p>
      {members.length ? (
        <table class="members stack">
          <caption class="sr-only">Members and invitations of this workspace</caption>
          <thead>
            <tr>
              <th scope="col">Person</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="sr-only">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.map((m) => (
              <tr key={m.personId || 'invite:' + m.email} data-member={m.email} data-status={m.status}>
                <td data-label="Person">
                  {who(m)}
                  {m.name ? <span class="muted small"> · {m.email}</span> : null}
                </td>
                <td data-label="Role">
                  {m.source === 'direct' ? (
                    <select
                      aria-label={'Role of ' + who(m)}
                      value={m.role}
                      onChange={(e) =>
                        act(
                          () => membersApi.setRole(ctx.ws, m.personId, e.currentTarget.value),
                          `${who(m)} is now ${e.currentTarget.value}.`
                        )
                      }
                    >
                      {ROLES.map(([v, l]) => (
                        <option key={v} value={v}>
                          {l}
                        </option>
                      ))}
                    </select>
                  ) : (
                    m.role
                  )}
                </td>
                <td data-label="Status">
                  {m.status === 'invited'
                    ? 'Invited, not signed in yet'
                    : m.source === 'group'
                      ? 'Member by group ' + (m.groups || []).join(', ')
                      : m.lastSignInAt
                        ? 'Last sign-in ' + when(m.lastSignInAt)
                        : 'Active'}
                </td>
                <td class="actions">
                  {m.source === 'direct' ? (
                    <button
                      type="button"
                      class="danger"
                      onClick={() => act(() => membersApi.remove(ctx.ws, m.personId), `${who(m)} was removed.`)}
                    >
                      Remove<span class="sr-only"> {who(m)}</span>
                    </button>
                  ) : m.status === 'invited' ? (
                    <button
                      type="button"
                      class="danger"
                      onClick={() =>
                        act(
                          () => membersApi.withdraw(ctx.ws, m.email),
                          `The invitation of ${m.email} was withdrawn.`
                        )
                      }
                    >
                      Withdraw<span class="sr-only"> the invitation of {m.email}</span>
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {ctx.isSuper ? <CreateWorkspace ctx={ctx} /> : null}
      {list.data ? (
        <AddMember
          ws={ctx.ws}
          onDone={(m) => {
            setMessage({
              text: m.status === 'invited' ? `${m.email} was invited.` : `${m.email} is now a member.`,
              kind: 'ok',
            });
            reload();
          }}
        />
      ) : null}
    </section>
  );
}

function AddMember({ ws, onDone }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    if (!/^[^\s@]+@[^\s@]+$/.test(email.trim())) {
      setError('Enter one email address, such as ada@example.com.');
      return;
    }
    setBusy(true);
    try {
      const m = await membersApi.add(ws, { email: email.trim(), role });
      setEmail('');
      onDone(m);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form id="member-add" onSubmit={submit} noValidate>
      <h2>Add or invite</h2>
      <p class="help" id="invite-no-email">
        The gateway sends no email: someone who has signed in before becomes a member at once; anyone else is invited,
        and the invitation waits until they sign in with this address. Tell them yourself, with the console's address.
      </p>
      <Field id="member-email" label="Email" error={error}>
        <input
          id="member-email"
          type="email"
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
      </Field>
      <Field id="member-role" label="Role">
        <select id="member-role" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
          {ROLES.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
      </Field>
      <button type="submit" disabled={busy}>
        Add
      </button>
    </form>
  );
}

// NAME_MAX is the longest workspace name in bytes (UTF-8), as the API enforces it
// (shared/identity WorkspaceCreate: trimmed, 1 to 200 bytes).
const NAME_MAX = 200;

// CreateWorkspace is the superuser's "Create a workspace" form (POST /api/workspaces): a
// name (trimmed, 1 to 200 bytes, checked here first so a bad name sends nothing); the
// created workspace's id and MCP URL, and a button that switches the console to it. A
// refusal of the API (403 for anyone but a superuser) is shown in words under the form.
function CreateWorkspace({ ctx }) {
  const [name, setName] = useState('');
  const [fieldError, setFieldError] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    setFieldError(null);
    setError(null);
    const n = name.trim();
    if (!n) {
      setFieldError('Give the workspace a name.');
      return;
    }
    if (new TextEncoder().encode(n).length > NAME_MAX) {
      setFieldError(`The name is too long: at most ${NAME_MAX} bytes (UTF-8).`);
      return;
    }
    setBusy(true);
    try {
      const w = await workspaces.create(n);
      ctx.nameWs(w.id, w.name);
      setCreated(w);
      setName('');
    } catch (err) {
      if (err.status === 403) setError('Only a superuser may create a workspace; your token is not a superuser\'s.');
      else if (err.details && err.details.field === 'name') setFieldError(errorText(err));
      else setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form id="workspace-create" onSubmit={submit} noValidate>
      <h2>Create a workspace</h2>
      <p class="help">
        Superusers only. The new workspace is empty; you become its admin when you signed in as a person (a development
        token's subject is no person).
      </p>
      <Field id="workspace-name-input" label="Name" error={fieldError}>
        <input id="workspace-name-input" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <FormError error={error} id="workspace-create-error" />
      <button type="submit" disabled={busy}>
        Create workspace
      </button>
      {created ? (
        <div id="workspace-created" data-workspace={created.id} role="status">
          <p>
            <strong>{created.name}</strong> was created{created.creatorIsAdmin ? ', with you as its admin' : ''}.
          </p>
          <dl>
            <dt>Workspace id</dt>
            <dd class="mono">{created.id}</dd>
            <dt>MCP URL</dt>
            <dd class="mono" id="workspace-created-url">
              {endpoint(created.id)}
            </dd>
          </dl>
          {created.id !== ctx.ws ? (
            <button type="button" id="workspace-switch" onClick={() => ctx.chooseWs(created.id)}>
              Switch to {created.name}
            </button>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}
