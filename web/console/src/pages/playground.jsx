// Playground: call any tool the signed-in user may call, through the gateway's own MCP
// endpoint (the workspace's, or one connection's) with the user's token, as a client
// would. The form is generated from the tool's inputSchema (nested objects, arrays,
// enums, defaults, required); the result is shown as a client sees it: text, images,
// audio, resources, structuredContent, isError. Resources and prompts can be read too.

import { useEffect, useState } from 'preact/hooks';
import { endpoint, listAll, rpc } from '../mcp.js';
import { ErrorBox, markReady, useLoad } from '../ui.jsx';

// kind is the form control a schema gets.
function kind(s) {
  if (!s || typeof s !== 'object') return 'json';
  if (Array.isArray(s.enum) && s.enum.length) return 'enum';
  let t = s.type;
  if (Array.isArray(t)) t = t.find((x) => x !== 'null');
  if (!t && s.properties) t = 'object';
  return ['object', 'array', 'string', 'number', 'integer', 'boolean'].includes(t) ? t : 'json';
}

// initial is the form state of schema s from its defaults (d overrides s.default).
export function initial(s, d) {
  const v = d !== undefined ? d : s && s.default;
  switch (kind(s)) {
    case 'object': {
      const out = {};
      for (const [k, p] of Object.entries(s.properties || {})) out[k] = initial(p, v && typeof v === 'object' ? v[k] : undefined);
      return out;
    }
    case 'array':
      return Array.isArray(v) ? v.map((x) => initial(s.items || {}, x)) : [];
    case 'boolean':
      return v === undefined ? undefined : !!v;
    case 'enum':
      return v === undefined ? '' : JSON.stringify(v);
    case 'json':
      return v === undefined ? '' : JSON.stringify(v);
    default:
      return v === undefined || v === null ? '' : String(v);
  }
}

// collect turns form state v of schema s into the argument value; problems go to errs by
// path. undefined means "leave the member out".
export function collect(s, v, path, errs, required) {
  const blank = v === undefined || v === '';
  switch (kind(s)) {
    case 'object': {
      const out = {};
      const req = s.required || [];
      for (const [k, p] of Object.entries(s.properties || {})) {
        const c = collect(p, v ? v[k] : undefined, path + '.' + k, errs, req.includes(k));
        if (c !== undefined) out[k] = c;
      }
      return Object.keys(out).length || required || path === '' ? out : undefined;
    }
    case 'array': {
      const items = (v || []).map((x, i) => collect(s.items || {}, x, path + '.' + i, errs, true));
      if (required && s.minItems && items.length < s.minItems) errs[path] = `At least ${s.minItems}.`;
      return items.length || required ? items : undefined;
    }
    case 'boolean':
      return v === undefined ? (required ? false : undefined) : v;
    case 'number':
    case 'integer': {
      if (blank) {
        if (required) errs[path] = 'Required.';
        return undefined;
      }
      const n = Number(v);
      if (!Number.isFinite(n)) errs[path] = 'Enter a number.';
      else if (kind(s) === 'integer' && !Number.isInteger(n)) errs[path] = 'Enter a whole number.';
      return n;
    }
    case 'string':
      if (blank) {
        if (required) errs[path] = 'Required.';
        return undefined;
      }
      return v;
    case 'enum':
      if (blank) {
        if (required) errs[path] = 'Choose a value.';
        return undefined;
      }
      return JSON.parse(v);
    default:
      if (blank) {
        if (required) errs[path] = 'Required.';
        return undefined;
      }
      try {
        return JSON.parse(v);
      } catch {
        errs[path] = 'Not valid JSON.';
        return undefined;
      }
  }
}

const fid = (path) => 'pg' + path.replace(/[^A-Za-z0-9]/g, '-');

// SchemaField renders the control(s) for schema s at path; set(v) replaces its state.
function SchemaField({ name, s, v, set, path, required, errs }) {
  const id = fid(path);
  const k = kind(s);
  const err = errs[path];
  const label = (
    <>
      {s.title || name}
      {required ? <span class="req"> (required)</span> : null}
    </>
  );
  const help = s.description ? <small class="help" id={id + '-help'}>{s.description}</small> : null;
  const errEl = err ? <small class="field-error" id={id + '-error'} role="alert">{err}</small> : null;
  const described = [s.description ? id + '-help' : '', err ? id + '-error' : ''].filter(Boolean).join(' ') || undefined;
  if (k === 'object') {
    const req = s.required || [];
    return (
      <fieldset class="schema-object" data-path={path}>
        <legend>{label}</legend>
        {help}
        {Object.entries(s.properties || {}).map(([key, p]) => (
          <SchemaField key={key} name={key} s={p} v={v ? v[key] : undefined} set={(x) => set({ ...(v || {}), [key]: x })} path={path + '.' + key} required={req.includes(key)} errs={errs} />
        ))}
        {Object.keys(s.properties || {}).length === 0 ? <p class="help">No arguments.</p> : null}
      </fieldset>
    );
  }
  if (k === 'array') {
    const items = v || [];
    return (
      <fieldset class="schema-array" data-path={path}>
        <legend>{label}</legend>
        {help}
        {items.map((x, i) => (
          <div class="array-item" key={i}>
            <SchemaField name={`${name} ${i + 1}`} s={s.items || {}} v={x} set={(y) => set(items.map((z, j) => (j === i ? y : z)))} path={path + '.' + i} required errs={errs} />
            <button type="button" class="icon" aria-label={`Remove ${name} ${i + 1}`} onClick={() => set(items.filter((_, j) => j !== i))}>
              ×
            </button>
          </div>
        ))}
        <button type="button" onClick={() => set([...items, initial(s.items || {})])}>
          Add {name}
        </button>
        {errEl}
      </fieldset>
    );
  }
  if (k === 'boolean') {
    return (
      <div class="check">
        <input type="checkbox" id={id} checked={!!v} aria-describedby={described} onChange={(e) => set(e.currentTarget.checked)} />
        <label for={id}>{label}</label>
        {help}
      </div>
    );
  }
  let control;
  if (k === 'enum') {
    control = (
      <select id={id} value={v} aria-invalid={err ? 'true' : undefined} aria-describedby={described} onChange={(e) => set(e.currentTarget.value)}>
        {required ? null : <option value="">(none)</option>}
        {required && v === '' ? <option value="">Choose…</option> : null}
        {s.enum.map((o) => (
          <option key={JSON.stringify(o)} value={JSON.stringify(o)}>
            {String(o)}
          </option>
        ))}
      </select>
    );
  } else if (k === 'json') {
    control = <textarea id={id} rows={3} value={v} placeholder="JSON" aria-invalid={err ? 'true' : undefined} aria-describedby={described} onInput={(e) => set(e.currentTarget.value)} />;
  } else {
    control = (
      <input
        id={id}
        type={k === 'string' ? 'text' : 'number'}
        step={k === 'integer' ? '1' : 'any'}
        value={v}
        aria-invalid={err ? 'true' : undefined}
        aria-describedby={described}
        onInput={(e) => set(e.currentTarget.value)}
      />
    );
  }
  return (
    <div class={'field' + (err ? ' invalid' : '')}>
      <label for={id}>{label}</label>
      {control}
      {help}
      {errEl}
    </div>
  );
}

function collectArgs(schema, v) {
  const errs = {};
  const args = collect({ type: 'object', properties: {}, ...(schema || {}) }, v, '', errs, true);
  return { args, errs };
}

// Content renders one content block as a client shows it.
export function Content({ c }) {
  switch (c.type) {
    case 'text':
      return <pre class="result-text" data-content="text">{c.text}</pre>;
    case 'image':
      return <img class="result-image" data-content="image" src={`data:${c.mimeType};base64,${c.data}`} alt={`Image result (${c.mimeType})`} />;
    case 'audio':
      return <audio data-content="audio" controls src={`data:${c.mimeType};base64,${c.data}`} />;
    case 'resource_link':
      return (
        <p data-content="resource_link">
          Resource link: <code class="mono">{c.uri}</code> {c.name ? `(${c.name})` : null}
        </p>
      );
    case 'resource':
      return (
        <div data-content="resource">
          <p class="muted small mono">{c.resource && c.resource.uri}</p>
          <pre class="result-text">{c.resource && (c.resource.text !== undefined ? c.resource.text : `[${c.resource.mimeType || 'binary'} blob]`)}</pre>
        </div>
      );
    default:
      return <pre class="result-text" data-content={c.type}>{JSON.stringify(c, null, 2)}</pre>;
  }
}

// urlElicitations returns the URL-mode elicitations an answer asks the user to open: the
// data.elicitations of a -32042 error (URL elicitation required, MCP 2025-11-25), or the
// elicitation/create input requests of an InputRequiredResult (2026-07-28). Only http(s)
// URLs are kept: a link is rendered from them.
export function urlElicitations(res) {
  const out = [];
  const keep = (e) => {
    if (e && e.mode === 'url' && typeof e.url === 'string' && /^https?:\/\//i.test(e.url)) out.push({ url: e.url, message: e.message || '' });
  };
  if (res && res.error && res.error.code === -32042 && res.error.data) (res.error.data.elicitations || []).forEach(keep);
  const ir = res && res.result && res.result.resultType === 'input_required' ? res.result.inputRequests || {} : {};
  Object.values(ir).forEach((r) => r && r.method === 'elicitation/create' && keep(r.params));
  return out;
}

// Elicitations shows each URL elicitation: its message and an Authorize link (a new tab;
// call the tool again after consenting).
function Elicitations({ items }) {
  if (!items.length) return null;
  return (
    <div class="elicitations" id="pg-elicitations">
      {items.map((e, i) => (
        <p class="notice notice-warn" data-elicitation-url={e.url} key={i}>
          {e.message || 'This call needs your authorization.'}{' '}
          <a class="button primary" href={e.url} target="_blank" rel="noopener noreferrer">
            Authorize
          </a>{' '}
          <span class="muted small">then call the tool again.</span>
        </p>
      ))}
    </div>
  );
}

function Result({ res }) {
  if (!res) return null;
  const asks = urlElicitations(res);
  if (res.error)
    return (
      <>
        <ErrorBox error={{ code: res.error.code !== undefined ? 'JSON-RPC ' + res.error.code : '', message: res.error.message }} id="pg-rpc-error" />
        <Elicitations items={asks} />
      </>
    );
  const r = res.result;
  if (r.resultType === 'input_required')
    return (
      <div class="result" id="pg-result" data-input-required="true" role="status">
        <p class="result-flag">
          <strong>The server needs input first</strong> (InputRequiredResult)
        </p>
        <Elicitations items={asks} />
      </div>
    );
  return (
    <div class={'result' + (r.isError ? ' result-error' : '')} id="pg-result" data-is-error={r.isError ? 'true' : 'false'} role="status">
      {r.isError ? <p class="result-flag"><strong>The tool reported an error</strong> (isError: true)</p> : <p class="result-flag ok-text">Result</p>}
      {(r.content || []).map((c, i) => (
        <Content c={c} key={i} />
      ))}
      {r.structuredContent !== undefined ? (
        <>
          <h3>Structured content</h3>
          <pre class="result-text" data-content="structured">{JSON.stringify(r.structuredContent, null, 2)}</pre>
        </>
      ) : null}
      <details>
        <summary>Raw JSON-RPC result</summary>
        <pre class="result-text">{JSON.stringify(r, null, 2)}</pre>
      </details>
    </div>
  );
}

export function Playground({ ctx }) {
  const ws = endpoint(ctx.ws);
  const [servers] = useLoad(async () => {
    const r = await rpc(ws, 'tools/call', { name: 'agentpack_connections_list', arguments: {} });
    const env = r.structuredContent || {};
    return env.ok ? env.data.connections.filter((c) => c.enabled !== false) : [];
  }, [ctx.ws]);
  const [server, setServer] = useState('');
  const [tab, setTab] = useState('tools');
  const url = server ? endpoint(ctx.ws, server) : ws;
  const [tools] = useLoad(() => listAll(url, 'tools/list', 'tools'), [url]);
  const [toolName, setToolName] = useState('');
  // found is the last tool search's answer (agentpack_tools_search: the gateway's own
  // ranking); a hit carries its definition, so a tool the workspace's tools/list does not
  // show (progressive discovery) can still be chosen and called.
  const [query, setQuery] = useState('');
  const [found, setFound] = useState(null);
  const list = tools.data || [];
  const hits = (found && found.tools) || [];
  const tool = list.find((t) => t.name === toolName) || hits.find((t) => t.name === toolName) || null;
  const [form, setForm] = useState({});
  const [errs, setErrs] = useState({});
  const [res, setRes] = useState(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!tools.loading && !servers.loading) markReady('playground');
  }, [tools, servers]);
  // chooseTool starts a fresh form (the tool's defaults) in the same update as the choice,
  // so that nothing typed into the new form can be reset afterwards.
  const chooseTool = (name) => {
    const t = list.find((x) => x.name === name) || hits.find((x) => x.name === name);
    setToolName(name);
    setForm(t ? initial(t.inputSchema || {}) : {});
    setErrs({});
    setRes(null);
  };

  const search = async (ev) => {
    ev.preventDefault();
    if (!query.trim()) return;
    const args = { query: query.trim(), limit: 10 };
    if (server) args.connection = server;
    try {
      const r = await rpc(ws, 'tools/call', { name: 'agentpack_tools_search', arguments: args });
      const env = r.structuredContent || {};
      setFound(env.ok ? env.data : { error: env.error || { message: 'The search failed.' } });
    } catch (err) {
      setFound({ error: { code: err.code, message: err.message } });
    }
  };

  const call = async (ev) => {
    ev.preventDefault();
    if (!tool) return;
    const { args, errs: e } = collectArgs(tool.inputSchema || {}, form);
    setErrs(e);
    if (Object.keys(e).length) return;
    setBusy(true);
    setRes(null);
    try {
      setRes({ result: await rpc(url, 'tools/call', { name: tool.name, arguments: args }) });
    } catch (err) {
      setRes({ error: { code: err.code, message: err.message, data: err.data } });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Playground</h1>
      <p class="help">
        Calls go through the gateway's MCP endpoint with your own token, so you see exactly what your MCP client would:
        the same tools, the same refusals.
      </p>
      <div class="toolbar">
        <div class="field">
          <label for="pg-endpoint">Endpoint</label>
          <select id="pg-endpoint" value={server} onChange={(e) => { setServer(e.currentTarget.value); chooseTool(''); }}>
            <option value="">Whole workspace (all tools)</option>
            {(servers.data || []).map((c) => (
              <option key={c.id} value={c.handle}>
                {c.name} only
              </option>
            ))}
          </select>
        </div>
      </div>
      <div class="tabs" role="group" aria-label="What to try">
        {[['tools', 'Tools'], ['resources', 'Resources'], ['prompts', 'Prompts']].map(([k, l]) => (
          <button type="button" key={k} aria-pressed={tab === k ? 'true' : 'false'} onClick={() => setTab(k)}>
            {l}
          </button>
        ))}
      </div>
      {tab === 'tools' ? (
        <>
          <ErrorBox error={tools.error} />
          <form class="toolbar" id="pg-search" role="search" onSubmit={search}>
            <div class="field">
              <label for="pg-search-q">Find a tool</label>
              <input id="pg-search-q" type="search" value={query} placeholder="what you need, in your words" onInput={(e) => setQuery(e.currentTarget.value)} />
            </div>
            <button type="submit">Search</button>
          </form>
          {found && found.error ? <ErrorBox error={found.error} /> : null}
          {found && !found.error ? (
            <div id="pg-search-results" role="status">
              {hits.length === 0 ? (
                <p class="help">{found.hint || 'No tool matched.'}</p>
              ) : (
                <ul class="rows">
                  {hits.map((h) => (
                    <li class="row" key={h.name} data-hit={h.name}>
                      <button type="button" class="link" onClick={() => chooseTool(h.name)}>
                        {h.title || h.name}
                      </button>{' '}
                      <span class="mono small muted">{h.name}</span> <span class="small muted">from {h.source}; matched {(h.matched || []).join(', ')}</span>
                    </li>
                  ))}
                </ul>
              )}
            </div>
          ) : null}
          <div class="field">
            <label for="pg-tool">Tool</label>
            <select id="pg-tool" value={toolName} onChange={(e) => chooseTool(e.currentTarget.value)}>
              <option value="">{tools.loading ? 'Loading…' : `Choose one of ${list.length} tools`}</option>
              {list.map((t) => (
                <option key={t.name} value={t.name}>
                  {t.name}
                </option>
              ))}
              {tool && !list.some((t) => t.name === tool.name) ? <option value={tool.name}>{tool.name}</option> : null}
            </select>
          </div>
          {tool ? (
            <form class="panel" id="pg-form" onSubmit={call} novalidate data-tool={tool.name}>
              <h2>{tool.title || tool.name}</h2>
              {tool.description ? <p class="desc">{tool.description}</p> : null}
              <SchemaField name="Arguments" s={{ type: 'object', properties: {}, ...(tool.inputSchema || {}) }} v={form} set={setForm} path="" required errs={errs} />
              <div class="actions">
                <button type="submit" class="primary" disabled={busy}>
                  {busy ? 'Calling…' : 'Call tool'}
                </button>
              </div>
            </form>
          ) : null}
          <Result res={res} />
        </>
      ) : (
        <Readables url={url} kind={tab} key={url + tab} />
      )}
    </section>
  );
}

// Readables lists resources (resources/list → resources/read) or prompts (prompts/list →
// prompts/get with its arguments). The workspace endpoint serves neither from upstreams;
// choose a connection's endpoint.
function Readables({ url, kind: what }) {
  const isRes = what === 'resources';
  const [items] = useLoad(() => listAll(url, isRes ? 'resources/list' : 'prompts/list', isRes ? 'resources' : 'prompts'), [url, what]);
  const [out, setOut] = useState(null);
  const [args, setArgs] = useState({});
  const read = async (it) => {
    setOut(null);
    try {
      const r = isRes ? await rpc(url, 'resources/read', { uri: it.uri }) : await rpc(url, 'prompts/get', { name: it.name, arguments: args[it.name] || {} });
      setOut({ name: it.name || it.uri, r });
    } catch (err) {
      setOut({ name: it.name || it.uri, error: { code: err.code, message: err.message, data: err.data } });
    }
  };
  const list = items.data || [];
  return (
    <div class="readables">
      <ErrorBox error={items.error} />
      {!items.loading && !items.error && list.length === 0 ? <p>This endpoint lists no {what}. A connection's own endpoint serves its server's {what}.</p> : null}
      <ul class="rows">
        {list.map((it) => (
          <li class="row" key={it.uri || it.name} data-item={it.uri || it.name}>
            <div class="row-head">
              <h2>{it.title || it.name}</h2>
              {it.uri ? <span class="mono small muted">{it.uri}</span> : null}
            </div>
            {it.description ? <p class="desc">{it.description}</p> : null}
            {(it.arguments || []).map((a) => (
              <div class="field" key={a.name}>
                <label for={'pa-' + it.name + '-' + a.name}>
                  {a.name}
                  {a.required ? <span class="req"> (required)</span> : null}
                </label>
                <input
                  id={'pa-' + it.name + '-' + a.name}
                  value={(args[it.name] || {})[a.name] || ''}
                  onInput={(e) => setArgs({ ...args, [it.name]: { ...(args[it.name] || {}), [a.name]: e.currentTarget.value } })}
                />
              </div>
            ))}
            <div class="actions">
              <button type="button" onClick={() => read(it)}>
                {isRes ? 'Read' : 'Get prompt'}
                <span class="sr-only"> {it.name || it.uri}</span>
              </button>
            </div>
          </li>
        ))}
      </ul>
      {out ? (
        <div class="result" id="pg-read" role="status">
          <h3>{out.name}</h3>
          {out.error ? <ErrorBox error={{ code: 'JSON-RPC ' + out.error.code, message: out.error.message }} /> : null}
          <Elicitations items={urlElicitations(out.error ? { error: out.error } : { result: out.r })} />
          {out.r && out.r.contents ? out.r.contents.map((c, i) => <Content key={i} c={{ type: 'resource', resource: c }} />) : null}
          {out.r && out.r.messages
            ? out.r.messages.map((m, i) => (
                <div key={i} data-role={m.role}>
                  <p class="muted small">{m.role}</p>
                  <Content c={m.content} />
                </div>
              ))
            : null}
        </div>
      ) : null}
    </div>
  );
}
