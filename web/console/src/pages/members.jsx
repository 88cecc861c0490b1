// Members: the workspace's members and invitations; add (an email that has signed in
// becomes a member at once, any other is invited until its first sign-in), change role,
// remove, withdraw an invitation (admin; docs/AUTH.md). REST: api.js members.

import { useEffect, useState } from 'preact/hooks';
import { members as membersApi } from '../api.js';
import { AdminOnly, ErrorBox, Field, Notice, errorText, markReady, useAction, useLoad, when } from '../ui.jsx';

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
