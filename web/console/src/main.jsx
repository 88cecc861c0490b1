// The admin console: boot (sign-in), the frame (navigation, workspace switcher) and the
// hash router. Every page uses the public REST API of the same origin.

import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { chats, me, setUnauthenticatedHandler } from './api.js';
import { authServer, claims as readClaims, finishOAuth, getToken, signOut, startOAuth, takeTokenFromHash } from './auth.js';
import { ErrorBox } from './ui.jsx';
import { PAGES } from './pages/index.js';

const WS_KEY = 'agentpack.console.workspace';
// RESUME_KEY keeps a consent link (#/consent/…) across the sign-in, which lands on
// #/marketplace.
const RESUME_KEY = 'agentpack.console.resume';

function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  if (parts[0] === 'consent' && parts[1]) return { page: 'consent', arg: parts[1] };
  const page = PAGES.some((p) => p.route === parts[0] && p.who !== 'none') ? parts[0] : 'marketplace';
  return { page, arg: parts[1] || '' };
}

function SignIn({ config, error }) {
  const consent = /^#\/consent\/[^/]+$/.test(location.hash);
  if (consent) sessionStorage.setItem(RESUME_KEY, location.hash);
  return (
    <main id="main" class="signin">
      <h1>Agentpack console</h1>
      <ErrorBox error={error ? { message: error } : null} />
      {consent ? <p data-consent="signin">Sign in to continue the authorization this link is for.</p> : null}
      {config.authServer ? (
        <button type="button" class="primary" id="sign-in" onClick={() => startOAuth(authServer(config.authServer))}>
          Sign in
        </button>
      ) : null}
      {config.oauth ? (
        <button type="button" class={config.authServer ? '' : 'primary'} id="sign-in-external" onClick={() => startOAuth(config.oauth)}>
          {config.authServer ? 'Sign in with the external provider' : 'Sign in'}
        </button>
      ) : null}
      {!config.authServer && !config.oauth && config.devSignIn ? (
        <p>
          Local development: open one of the sign-in links that <code>make run</code> printed.
        </p>
      ) : null}
      {!config.authServer && !config.oauth && !config.devSignIn ? <p>Sign-in is not configured for this deployment (see docs/CONSOLE.md).</p> : null}
    </main>
  );
}

function App({ config, bootError }) {
  const [token, setTok] = useState(getToken());
  const [route, setRoute] = useState(parseRoute());
  const [expired, setExpired] = useState('');
  const c = token ? readClaims(token) : null;
  const [ws, setWs] = useState(() => {
    const saved = sessionStorage.getItem(WS_KEY);
    if (c && saved && (c.workspaces.includes(saved) || c.role === 'superuser')) return saved;
    return c && c.workspaces.length ? c.workspaces[0] : '';
  });
  const heading = useRef(null);
  // names: workspace id → display name (GET /api/chats answers its workspace), so the
  // header names the workspace instead of an id prefix (issue 25).
  const [names, setNames] = useState({});
  const wsKey = c ? c.workspaces.join(',') : '';
  useEffect(() => {
    if (!token || !c) return;
    // After the page's own requests (they decide when it is interactive).
    const t = setTimeout(() => {
      for (const w of c.workspaces.length ? c.workspaces : ws ? [ws] : []) {
        chats.list({ workspaceId: w, limit: 1 }).then(
          (r) => r.workspace && setNames((n) => ({ ...n, [w]: r.workspace.name })),
          () => {}
        );
      }
    }, 300);
    return () => clearTimeout(t);
  }, [token, wsKey]);
  const wsName = (w) => names[w] || 'Workspace ' + w.slice(0, 8);
  // who: the signed-in person's email (else name) from GET /api/me, so the header names
  // them rather than their token subject (a person id for the gateway's own sign-in).
  const [who, setWho] = useState(null);
  useEffect(() => {
    if (!token || !c) return;
    let live = true;
    me().then((m) => live && setWho(m.email || m.name || null), () => {});
    return () => {
      live = false;
    };
  }, [token]);
  const person = who || c?.sub || '';

  useEffect(() => {
    const f = () => setRoute(parseRoute());
    addEventListener('hashchange', f);
    setUnauthenticatedHandler(() => {
      signOut();
      setExpired('Your session ended or the token was refused. Sign in again.');
      setTok('');
    });
    return () => removeEventListener('hashchange', f);
  }, []);
  const firstRoute = useRef(true);
  useEffect(() => {
    // On a route change (not the first load, where the skip link comes first), move focus
    // to the new page's heading so that keyboard and screen-reader users land there.
    if (firstRoute.current) {
      firstRoute.current = false;
      return;
    }
    const h = document.querySelector('main h1');
    if (h) {
      h.setAttribute('tabindex', '-1');
      h.focus({ preventScroll: true });
    }
  }, [route.page]);

  if (!token || !c) return <SignIn config={config} error={bootError || expired} />;

  const chooseWs = (v) => {
    setWs(v);
    sessionStorage.setItem(WS_KEY, v);
  };
  // nameWs records a workspace's name the page learnt (a workspace just created).
  const nameWs = (w, name) => setNames((n) => ({ ...n, [w]: name }));
  const ctx = { ws, claims: c, isAdmin: c.role === 'admin' || c.role === 'superuser', isSuper: c.role === 'superuser', wsName, chooseWs, nameWs };
  // A superuser may switch to a workspace their token does not name (one just created).
  const choices = c.workspaces.includes(ws) || !ws ? c.workspaces : [...c.workspaces, ws];
  const go = (h) => {
    location.hash = h;
  };
  const seen = { member: true, admin: ctx.isAdmin, superuser: ctx.isSuper, none: false };
  const pages = PAGES.filter((p) => seen[p.who]);
  const { Page, perWorkspace } = PAGES.find((p) => p.route === route.page);
  const page = <Page ctx={ctx} arg={route.arg} go={go} key={perWorkspace ? ws : route.arg} />;
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main').focus(); }}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Agentpack</span>
        <nav aria-label="Console">
          <ul>
            {pages.map((p) => (
              <li key={p.route}>
                <a href={'#/' + p.route} aria-current={route.page === p.route ? 'page' : undefined}>
                  {p.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          {choices.length > 1 ? (
            <label>
              <span class="sr-only">Workspace</span>
              <select id="workspace" value={ws} onChange={(e) => chooseWs(e.currentTarget.value)}>
                {choices.map((w) => (
                  <option key={w} value={w}>
                    {wsName(w)}
                  </option>
                ))}
              </select>
            </label>
          ) : c.workspaces.length === 0 ? (
            <label>
              <span class="sr-only">Workspace id</span>
              <input id="workspace" placeholder="Workspace id" value={ws} onChange={(e) => chooseWs(e.currentTarget.value.trim())} />
            </label>
          ) : (
            <span class="ws-name" id="workspace-name" title={ws}>
              {wsName(ws)}
            </span>
          )}
          <span class="role" data-role={c.role} title={person + ' · ' + c.role}>
            <span class="sub" id="signed-in-as" data-subject={c.sub}>{person} · </span>
            {c.role}
          </span>
          <button
            type="button"
            onClick={() => {
              signOut();
              setTok('');
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabindex="-1" ref={heading}>
        {page}
      </main>
    </>
  );
}

async function boot() {
  // The server writes the public sign-in settings into a <meta> tag (no inline script
  // under the CSP, and one round trip fewer than fetching /admin/config.json).
  let config = { authServer: null, oauth: null, devSignIn: false };
  try {
    const m = document.querySelector('meta[name="agentpack-console-config"]');
    if (m) config = JSON.parse(m.content);
  } catch {
    /* a malformed tag: the sign-in screen says what it can */
  }
  takeTokenFromHash();
  const bootError = await finishOAuth({ server: authServer(config.authServer), external: config.oauth });
  // /admin/#/sign-in (make run's "Sign in with the identity provider" link) starts the
  // sign-in through the gateway's authorization server at once.
  if (location.hash === '#/sign-in') {
    history.replaceState(null, '', location.pathname + '#/marketplace');
    if (!getToken() && !bootError && config.authServer) {
      await startOAuth(authServer(config.authServer));
      return;
    }
  }
  const resume = sessionStorage.getItem(RESUME_KEY);
  if (resume && getToken() && !/^#\/consent\//.test(location.hash)) {
    sessionStorage.removeItem(RESUME_KEY);
    history.replaceState(null, '', location.pathname + resume);
  } else if (/^#\/consent\//.test(location.hash) && getToken()) {
    sessionStorage.removeItem(RESUME_KEY);
  }
  const root = document.getElementById('app');
  root.textContent = ''; // the "Loading" placeholder: render() adds to what is there
  render(<App config={config} bootError={bootError} />, root);
}

boot();
