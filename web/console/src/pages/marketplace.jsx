// Marketplace: browse the curated catalog, install into the current workspace, uninstall.

import { useEffect, useRef, useState } from 'preact/hooks';
import { marketplace } from '../api.js';
import { ConnectStep, consoleReturnTo, serverUrlProblem } from '../components/connection.jsx';
import { HealthBadge, SourceBadge, TierBadge, categoryLabel } from '../components/entry.jsx';
import { CardSkills } from '../components/skills.jsx';
import { Badge, ConfirmDialog, Dialog, ErrorBox, Field, Menu, Notice, fieldErrorOf, markReady, outcomeNotice, useAction, useLoad, when } from '../ui.jsx';

const VIEW_KEY = 'agentpack.console.marketplace-view';

const SOURCES = [
  ['', 'All sources'],
  ['curated', 'Curated'],
  ['registry', 'MCP registry'],
  ['admin', 'Added by a superuser'],
];

// InstalledBadge is an install's badge: green "Installed" only when its connection
// connected; a failed first connect reads "Installed · not connected" and a later failure
// "Installed · failing", both red (issue 34: never green after a failure).
function InstalledBadge({ state }) {
  if (state === 'never_connected')
    return (
      <Badge kind="failed" title="The first connect failed: see Connections for the error">
        Installed · not connected
      </Badge>
    );
  if (state === 'failing')
    return (
      <Badge kind="failed" title="The last connect failed: see Connections for the error">
        Installed · failing
      </Badge>
    );
  return <Badge kind="installed">Installed</Badge>;
}

export function Marketplace({ ctx }) {
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  const [category, setCategory] = useState('');
  const [source, setSource] = useState('');
  const [categories, setCategories] = useState([]);
  const [installing, setInstalling] = useState(null);
  const [uninstalling, setUninstalling] = useState(null);
  // compact: one dense line per entry (no description or metadata) — the full cards are
  // several screens long (issue 25).
  // Compact is the default on a narrow screen (a phone: the cards are 17 screens tall at
  // 390 px, issue 34); a choice made with the button is kept for the session.
  const [compact, setCompact] = useState(() => {
    const v = sessionStorage.getItem(VIEW_KEY);
    return v ? v === 'compact' : window.matchMedia('(max-width: 640px)').matches;
  });
  const timer = useRef(0);

  const [list, reload] = useLoad(
    () => marketplace.list({ search: query, category, source, workspaceId: ctx.ws }),
    [query, category, source, ctx.ws]
  );
  const [act, message, actionError, setMessage] = useAction(() => reload());
  useEffect(() => {
    marketplace.categories().then(
      (r) => setCategories(r.categories),
      () => setCategories([])
    );
  }, []);
  useEffect(() => {
    if (!list.loading) markReady('marketplace');
  }, [list]);

  const onSearch = (v) => {
    setSearch(v);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setQuery(v.trim()), 200);
  };

  const uninstall = (e) => act(() => marketplace.uninstall(e.id, ctx.ws), `${e.name} was uninstalled.`);

  const entries = list.data ? list.data.entries : [];
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Marketplace</h1>
      <form class="toolbar" role="search" onSubmit={(ev) => ev.preventDefault()}>
        <Field id="mp-search" label="Search">
          <input id="mp-search" type="search" value={search} onInput={(ev) => onSearch(ev.currentTarget.value)} placeholder="Name or description" />
        </Field>
        <Field id="mp-category" label="Category">
          <select id="mp-category" value={category} onChange={(ev) => setCategory(ev.currentTarget.value)}>
            <option value="">All categories</option>
            {categories.map((c) => (
              <option value={c.name} key={c.name}>
                {categoryLabel(c.name)} ({c.count})
              </option>
            ))}
          </select>
        </Field>
        <Field id="mp-source" label="Source">
          <select id="mp-source" value={source} onChange={(ev) => setSource(ev.currentTarget.value)}>
            {SOURCES.map(([v, l]) => (
              <option value={v} key={v}>
                {l}
              </option>
            ))}
          </select>
        </Field>
      </form>
      {message ? <Notice kind={message.kind}>{message.text}</Notice> : null}
      <ErrorBox error={list.error || actionError} />
      <div class="count-row">
        <p class="count" aria-live="polite">
          {list.loading ? 'Loading…' : `${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}`}
        </p>
        <button
          type="button"
          id="mp-compact"
          aria-pressed={compact ? 'true' : 'false'}
          onClick={() => {
            sessionStorage.setItem(VIEW_KEY, compact ? 'cards' : 'compact');
            setCompact(!compact);
          }}
        >
          Compact view
        </button>
      </div>
      <ul class={'cards' + (compact ? ' compact' : '')} aria-label="Catalog entries">
        {entries.map((e) => (
          <li class="card" key={e.id} data-entry={e.name} data-source={e.source} data-deprecated={e.deprecated ? 'true' : 'false'}>
            <div class="card-head">
              <h2>{e.name}</h2>
              {e.installed ? (
                <div class="installed">
                  <InstalledBadge state={e.installState} />
                  {ctx.isAdmin ? (
                    <Menu id={'menu-' + e.id} label={'Actions for ' + e.name} items={[{ label: 'Uninstall', danger: true, onSelect: () => setUninstalling(e) }]} />
                  ) : null}
                </div>
              ) : null}
            </div>
            <p class="desc">{e.description}</p>
            <div class="badges">
              <TierBadge tier={e.verificationTier} />
              <HealthBadge e={e} />
              <SourceBadge e={e} />
              {e.deprecated ? (
                <Badge kind="deprecated" title="The registry marks this version deprecated: it still installs, but look for a replacement.">
                  Deprecated
                </Badge>
              ) : null}
              {e.category ? (
                <Badge kind="category" title={e.category}>
                  {categoryLabel(e.category)}
                </Badge>
              ) : null}
              {e.isPlaceholder ? <Badge kind="placeholder">Template</Badge> : null}
            </div>
            <dl class="meta">
              {e.version ? (
                <>
                  <dt>Version</dt>
                  <dd class="version">{e.version}</dd>
                </>
              ) : null}
              {e.source === 'registry' && e.registryName && e.registryName !== e.name ? (
                <>
                  <dt>Registry name</dt>
                  <dd class="code-text">{e.registryName}</dd>
                </>
              ) : null}
              <dt>Last check</dt>
              <dd>{when(e.lastHealthCheck)}</dd>
              {e.lastHealthError ? (
                <>
                  <dt>Last error</dt>
                  <dd class="err-text">{e.lastHealthError}</dd>
                </>
              ) : null}
              <dt>Installs</dt>
              <dd>{e.installCount}</dd>
            </dl>
            {e.installed && e.connectionId ? <CardSkills connectionId={e.connectionId} /> : null}
            {ctx.isAdmin && !e.installed ? (
              <button type="button" class="primary" onClick={() => setInstalling(e)}>
                Install<span class="sr-only"> {e.name}</span>
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      {installing ? (
        <InstallDialog
          entry={installing}
          ctx={ctx}
          onClose={() => setInstalling(null)}
          onDone={(name, out, keepOpen) => {
            if (!keepOpen) setInstalling(null);
            setMessage(outcomeNotice(name, 'installed', out));
            reload();
          }}
        />
      ) : null}
      {uninstalling ? (
        <ConfirmDialog
          id="uninstall-dialog"
          title={'Uninstall ' + uninstalling.name + '?'}
          confirm="Uninstall"
          onCancel={() => setUninstalling(null)}
          onConfirm={() => uninstall(uninstalling)}
        >
          <p>
            Its connection is removed from this workspace: its tools leave every chat and client at once, its pins are
            removed and any upstream authorization is revoked. Installing it again later creates a new connection.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

function InstallDialog({ entry, ctx, onClose, onDone }) {
  const names = Object.keys(entry.headers || {});
  const [values, setValues] = useState(Object.fromEntries(names.map((n) => [n, ''])));
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [missing, setMissing] = useState({});
  const [confirmed, setConfirmed] = useState(false);
  const [url, setUrl] = useState('');
  const [urlErr, setUrlErr] = useState('');
  // connectUrl: the install answered authorization_required; the dialog becomes the
  // Connect step (the upstream's consent page, then the callback page links back here).
  const [connectUrl, setConnectUrl] = useState('');
  // vars: the values of a registry entry's URL template variables (docs/REGISTRY.md).
  const urlVars = entry.urlVariables || [];
  const [vars, setVars] = useState(Object.fromEntries(urlVars.map((x) => [x.name, x.default || ''])));
  const [varErr, setVarErr] = useState({});

  const submit = async (ev) => {
    ev.preventDefault();
    if (entry.isPlaceholder) {
      const problem = serverUrlProblem(url);
      if (problem) {
        setUrlErr(problem);
        return;
      }
      setUrlErr('');
    }
    const ve = {};
    for (const x of urlVars) if (x.isRequired && !vars[x.name]) ve[x.name] = 'Required: the server URL is built from it.';
    setVarErr(ve);
    if (Object.keys(ve).length) return;
    const miss = {};
    for (const n of names) if (!values[n]) miss[n] = 'This server declares this header: without it the server will probably refuse the connection.';
    setMissing(miss);
    // A missing header warns once; submitting again installs anyway (the API warns too).
    if (Object.keys(miss).length && !confirmed) {
      setConfirmed(true);
      return;
    }
    setBusy(true);
    setError(null);
    const headers = Object.fromEntries(Object.entries(values).filter(([, v]) => v));
    try {
      const body = { workspaceId: ctx.ws, headers, returnTo: consoleReturnTo() };
      if (entry.isPlaceholder) body.url = url;
      if (urlVars.length) body.variables = Object.fromEntries(Object.entries(vars).filter(([, x]) => x));
      const out = await marketplace.install(entry.id, body);
      // Forget the typed values at once: they are never shown again.
      setValues({});
      const az = out.authorization;
      if (az && az.status === 'authorization_required' && az.authorizationUrl) {
        setConnectUrl(az.authorizationUrl);
        onDone(entry.name, out, true);
        return;
      }
      onDone(entry.name, out);
    } catch (err) {
      const fe = fieldErrorOf(err, (f) => (f === 'url' ? 'url' : urlVars.some((x) => 'variables.' + x.name === f) ? f : ''));
      if (fe && fe.url) setUrlErr(fe.url);
      else if (fe) setVarErr(Object.fromEntries(Object.entries(fe).map(([k, v]) => [k.slice(10), v])));
      else setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (connectUrl) {
    return (
      <Dialog id="install-dialog" title={'Connect ' + entry.name} onClose={onClose}>
        <ConnectStep name={entry.name} url={connectUrl} onLater={onClose} />
      </Dialog>
    );
  }
  return (
    <Dialog id="install-dialog" title={'Install ' + entry.name} onClose={onClose}>
      <form onSubmit={submit} novalidate>
        <p>
          Installs into the current workspace. The gateway sends the header values to this server only; they are
          never shown again, here or in any API answer.
        </p>
        {entry.isPlaceholder ? (
          <>
            <div class="callout" id="placeholder-help">
              <strong>This entry is a template for a server you host yourself.</strong> Its URL ({entry.url}) is a
              placeholder: run the server on your own infrastructure first, then give its MCP endpoint here.
            </div>
            <Field id="tpl-url" label="Your server's URL" error={urlErr} help="Checked like any connection URL (https when deployed).">
              <input
                id="tpl-url"
                type="url"
                value={url}
                required
                onInput={(ev) => setUrl(ev.currentTarget.value)}
              />
            </Field>
          </>
        ) : null}
        {urlVars.map((x, i) => (
          <Field key={x.name} id={'var-' + i} label={'URL variable ' + x.name} error={varErr[x.name]} help={x.description || undefined}>
            {x.choices && x.choices.length ? (
              <select id={'var-' + i} value={vars[x.name] || ''} onChange={(ev) => setVars({ ...vars, [x.name]: ev.currentTarget.value })}>
                <option value="">Choose…</option>
                {x.choices.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={'var-' + i}
                value={vars[x.name] || ''}
                spellcheck={false}
                onInput={(ev) => setVars({ ...vars, [x.name]: ev.currentTarget.value })}
              />
            )}
          </Field>
        ))}
        {names.map((n, i) => (
          <Field
            key={n}
            id={'hdr-' + i}
            label={'Header ' + n}
            error={missing[n]}
            help="Masked as you type; never displayed again."
          >
            <input
              id={'hdr-' + i}
              type="password"
              autocomplete="off"
              spellcheck={false}
              value={values[n] || ''}
              onInput={(ev) => {
                setValues({ ...values, [n]: ev.currentTarget.value });
                if (missing[n]) setMissing({ ...missing, [n]: undefined });
              }}
            />
          </Field>
        ))}
        {names.length === 0 ? <p>This server declares no headers.</p> : null}
        <ErrorBox error={error} />
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Installing…' : confirmed && Object.values(missing).some(Boolean) ? 'Install anyway' : 'Install'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

