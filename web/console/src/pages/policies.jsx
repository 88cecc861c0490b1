// Access policies: the workspace's Cedar document with validation at the line, templates
// and a "what if" pad (admin; docs/POLICIES.md). REST: api.js policies.

import { useEffect, useState } from 'preact/hooks';
import { policies } from '../api.js';
import { AdminOnly, ErrorBox, Notice, markReady, useLoad } from '../ui.jsx';

const BASE = '@id("base") permit(principal, action, resource);\n';

// TEMPLATES: [id, label, text to append]. Each keeps the base permit the Cedar rule needs.
const TEMPLATES = [
  ['read-only-members', 'Read-only members',
    '@id("members-read-only")\nforbid(principal in Role::"member", action == Action::"call", resource)\nunless { resource.readOnly };\n'],
  ['no-destructive', 'No destructive tools for members',
    '@id("members-no-destructive")\nforbid(principal in Role::"member", action, resource)\nwhen { resource.destructive };\n'],
  ['allow-list', 'Argument allow-list',
    '@id("allow-list")\nforbid(principal, action == Action::"call", resource == Tool::"TOOL")\nunless { context.arguments has ARG && ["a", "b"].contains(context.arguments.ARG) };\n'],
];

// Problems lists a refusal's problems, each with its line and column, and marks the line
// in the editor's gutter.
function Problems({ problems }) {
  if (!problems || !problems.length) return null;
  return (
    <ul class="problems" id="policy-problems" role="alert">
      {problems.map((p, i) => (
        <li key={i} data-line={p.line} data-column={p.column}>
          Line {p.line}, column {p.column}: {p.message}
        </li>
      ))}
    </ul>
  );
}

// Gutter shows the line numbers beside the editor, the lines with problems marked.
function Gutter({ text, problems }) {
  const bad = new Set((problems || []).map((p) => p.line));
  const n = text.split('\n').length;
  const lines = [];
  for (let i = 1; i <= n; i++) {
    lines.push(
      <div key={i} class={bad.has(i) ? 'bad' : ''} data-bad={bad.has(i) ? 'true' : undefined}>
        {i}
      </div>,
    );
  }
  return (
    <div class="gutter" aria-hidden="true">
      {lines}
    </div>
  );
}

function WhatIf({ ctx, text }) {
  const [form, setForm] = useState({ subject: 'someone', role: 'member', groups: '', action: 'call', tool: '', arguments: '{}' });
  const [out, setOut] = useState(null);
  const [error, setError] = useState(null);
  const set = (k) => (e) => setForm({ ...form, [k]: e.currentTarget.value });
  const run = async (e) => {
    e.preventDefault();
    setError(null);
    setOut(null);
    let args;
    try {
      args = JSON.parse(form.arguments || '{}');
    } catch {
      setError({ message: 'arguments must be a JSON object' });
      return;
    }
    try {
      const groups = form.groups.split(',').map((g) => g.trim()).filter(Boolean);
      setOut(await policies.whatIf({ workspaceId: ctx.ws, text, subject: form.subject, role: form.role,
        groups, action: form.action, tool: form.tool, arguments: args }));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="whatif" onSubmit={run} aria-labelledby="whatif-title">
      <h2 id="whatif-title">What if</h2>
      <div class="row">
        <label>Subject <input id="wi-subject" value={form.subject} onInput={set('subject')} /></label>
        <label>Role
          <select id="wi-role" value={form.role} onChange={set('role')}>
            <option value="member">member</option>
            <option value="admin">admin</option>
            <option value="superuser">superuser</option>
          </select>
        </label>
        <label>Groups <input id="wi-groups" value={form.groups} onInput={set('groups')} placeholder="eng, ops" /></label>
        <label>Action
          <select id="wi-action" value={form.action} onChange={set('action')}>
            <option value="call">call</option>
            <option value="list">list</option>
          </select>
        </label>
      </div>
      <div class="field">
        <label for="wi-tool">Tool</label>
        <input id="wi-tool" value={form.tool} onInput={set('tool')} placeholder="mcp_handle_tool or agentpack_…" required />
      </div>
      <div class="field">
        <label for="wi-args">Arguments (JSON)</label>
        <textarea id="wi-args" rows="2" value={form.arguments} onInput={set('arguments')} />
      </div>
      <button type="submit" id="wi-run">Decide</button>
      <ErrorBox error={error} />
      {out ? (
        <p id="wi-decision" data-allowed={String(out.allowed)}>
          <strong>{out.allowed ? 'Allowed' : 'Denied'}</strong> ({out.reason}
          {out.policyIds && out.policyIds.length ? ': ' + out.policyIds.join(', ') : ''})
        </p>
      ) : null}
    </form>
  );
}

export function Policies({ ctx }) {
  const [doc] = useLoad(() => policies.get(ctx.ws), [ctx.ws]);
  const [text, setText] = useState(null);
  const [problems, setProblems] = useState(null);
  const [error, setError] = useState(null);
  const [saved, setSaved] = useState(null);
  // warned: the text the last check warned about (policy warnings: a role left with no
  // tool); saving that same text again goes ahead.
  const [warned, setWarned] = useState(null);
  useEffect(() => {
    if (doc.data && text === null) setText(doc.data.text || BASE);
    if (!doc.loading) markReady('policies');
  }, [doc]);
  if (doc.error) {
    return (
      <AdminOnly title="Access policies" error={doc.error}>
        Access policies are visible to workspace admins only.
      </AdminOnly>
    );
  }
  const current = text === null ? '' : text;
  const save = async (e) => {
    e.preventDefault();
    setError(null);
    setProblems(null);
    setSaved(null);
    try {
      if (!warned || warned.text !== current) {
        const check = await policies.validate(ctx.ws, current);
        if (check.warnings && check.warnings.length) {
          setWarned({ text: current, warnings: check.warnings });
          return;
        }
      }
      const v = await policies.put(ctx.ws, current);
      setWarned(null);
      setSaved(v);
    } catch (err) {
      if (err.details && err.details.problems) setProblems(err.details.problems);
      setError(err);
    }
  };
  const add = (t) => setText((current || BASE).replace(/\n*$/, '\n') + t);
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Access policies</h1>
      <p class="muted">
        Cedar policies decide who may list and call which tool with which arguments, on top of the roles. Start from
        the base permit; a forbid that applies wins. See docs/POLICIES.md for the entity model.
      </p>
      <div class="templates" role="group" aria-label="Templates">
        {TEMPLATES.map(([id, label, t]) => (
          <button type="button" key={id} data-template={id} onClick={() => add(t)}>
            + {label}
          </button>
        ))}
      </div>
      <form onSubmit={save}>
        <div class="editor">
          <Gutter text={current} problems={problems} />
          <textarea id="policy-text" aria-label="Policy document" spellcheck={false} rows="16" value={current}
            onInput={(e) => setText(e.currentTarget.value)} aria-describedby={problems ? 'policy-problems' : undefined} />
        </div>
        <Problems problems={problems} />
        <ErrorBox error={problems ? null : error} />
        {warned && warned.text === current ? (
          <Notice kind="warn">
            <ul id="policy-warnings">
              {warned.warnings.map((w, i) => (
                <li key={i}>{w}</li>
              ))}
            </ul>
            Nothing was saved yet: Save anyway to keep it.
          </Notice>
        ) : null}
        <button type="submit" class="primary" id="policy-save">
          {warned && warned.text === current ? 'Save anyway' : 'Save'}
        </button>
        {saved ? (
          <Notice kind={saved.catalogPending ? 'warn' : 'ok'}>
            <span id="policy-saved">Saved {saved.policyIds.length} policies{saved.catalogPending ? '; the gateway picks them up at the next catalog rebuild' : ''}.</span>
          </Notice>
        ) : null}
      </form>
      <WhatIf ctx={ctx} text={current} />
    </section>
  );
}
