// Sign-in state. The bearer token lives in sessionStorage (one tab, gone when the tab
// closes) and in memory; never in localStorage, never in a cookie. Signed in through the
// gateway's own authorization server, the tab also keeps that server's refresh token
// there, to renew the access token (15 minutes) without leaving the page, and revokes it
// at sign-out (docs/AUTH.md "The console").

const KEY = 'agentpack.console.token';
const PKCE_KEY = 'agentpack.console.pkce';
const REFRESH_KEY = 'agentpack.console.refresh';
const SERVER_KEY = 'agentpack.console.server';

export function getToken() {
  return sessionStorage.getItem(KEY) || '';
}

export function setToken(t) {
  if (t) sessionStorage.setItem(KEY, t);
  else sessionStorage.removeItem(KEY);
}

// signOut forgets the tokens; signed in through the gateway's authorization server, it
// also revokes the sign-in there (RFC 7009), so that its refresh token is dead too.
export function signOut() {
  const rt = sessionStorage.getItem(REFRESH_KEY);
  const s = serverOf();
  sessionStorage.removeItem(REFRESH_KEY);
  setToken('');
  if (rt && s) {
    const body = new URLSearchParams({ token: rt, token_type_hint: 'refresh_token', client_id: s.clientId });
    fetch(s.revokeUrl, { method: 'POST', body }).catch(() => {});
  }
}

// authServer is the sign-in settings of the gateway's own authorization server (config
// authServer: base "" is this page's origin): the console is its first-party client and
// asks for the REST API and the MCP endpoint (Playground, Client setup) as resources.
export function authServer(cfg) {
  if (!cfg) return null;
  const base = cfg.base || location.origin;
  return {
    authorizeUrl: base + cfg.authorizePath,
    tokenUrl: base + cfg.tokenPath,
    revokeUrl: base + cfg.revokePath,
    clientId: cfg.clientId,
    scope: 'mcp',
    resource: [base + '/api', base + '/mcp'],
    server: true,
  };
}

function serverOf() {
  try {
    return JSON.parse(sessionStorage.getItem(SERVER_KEY) || 'null');
  } catch {
    return null;
  }
}

let refreshing = null;

// refresh renews the access token with the kept refresh token (rotated at each use);
// it answers the new access token, or '' when there is none to use or the server refused
// it (the sign-in was revoked, the person left the workspace): then the tab signs in again.
export function refresh() {
  if (!refreshing) refreshing = doRefresh().finally(() => (refreshing = null));
  return refreshing;
}

async function doRefresh() {
  const rt = sessionStorage.getItem(REFRESH_KEY);
  const s = serverOf();
  if (!rt || !s) return '';
  const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: rt, client_id: s.clientId });
  for (const r of s.resource) body.append('resource', r);
  try {
    const r = await fetch(s.tokenUrl, { method: 'POST', body, headers: { Accept: 'application/json' } });
    const j = await r.json();
    if (!r.ok || !j.access_token) {
      sessionStorage.removeItem(REFRESH_KEY);
      return '';
    }
    setToken(j.access_token);
    if (j.refresh_token) sessionStorage.setItem(REFRESH_KEY, j.refresh_token);
    return j.access_token;
  } catch {
    return '';
  }
}

// freshToken is the token to send now: renewed first when it expires within a minute and
// a refresh token is kept.
export async function freshToken() {
  const t = getToken();
  const c = t ? claims(t) : null;
  if (!c || !c.exp || c.exp - Date.now() / 1000 > 60 || !sessionStorage.getItem(REFRESH_KEY)) return t;
  return (await refresh()) || t;
}

// claims decodes the token's payload for display and for hiding actions the role
// cannot take. It verifies nothing: the API decides every request.
export function claims(token) {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const json = decodeURIComponent(
      atob(part).split('').map((c) => '%' + c.charCodeAt(0).toString(16).padStart(2, '0')).join('')
    );
    const c = JSON.parse(json);
    return {
      sub: String(c.sub || ''),
      role: ['member', 'admin', 'superuser'].includes(c.role) ? c.role : 'member',
      workspaces: Array.isArray(c.workspaces) ? c.workspaces.filter((w) => typeof w === 'string') : [],
      exp: typeof c.exp === 'number' ? c.exp : 0,
    };
  } catch {
    return null;
  }
}

// takeTokenFromHash moves a token handed over by the development sign-in
// (/admin/#token=…) into sessionStorage and removes it from the address bar and history.
export function takeTokenFromHash() {
  const m = /^#token=([^&]+)$/.exec(location.hash);
  if (!m) return false;
  setToken(decodeURIComponent(m[1]));
  history.replaceState(null, '', location.pathname + '#/marketplace');
  return true;
}

function b64url(bytes) {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function random(n) {
  const a = new Uint8Array(n);
  crypto.getRandomValues(a);
  return b64url(a);
}

function redirectURI() {
  return location.origin + location.pathname.replace(/\/?$/, '/');
}

// startOAuth begins the OAuth 2.1 authorization code flow with PKCE (S256): the verifier
// and state stay in sessionStorage until the provider sends the browser back.
export async function startOAuth(o) {
  const verifier = random(32);
  const state = random(16);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  sessionStorage.setItem(PKCE_KEY, JSON.stringify({ verifier, state, server: !!o.server }));
  const u = new URL(o.authorizeUrl);
  u.searchParams.set('response_type', 'code');
  u.searchParams.set('client_id', o.clientId);
  u.searchParams.set('redirect_uri', redirectURI());
  u.searchParams.set('scope', o.scope || 'openid');
  u.searchParams.set('state', state);
  u.searchParams.set('code_challenge', b64url(digest));
  u.searchParams.set('code_challenge_method', 'S256');
  if (o.audience) u.searchParams.set('audience', o.audience);
  for (const r of o.resource || []) u.searchParams.append('resource', r);
  if (o.workspaceHint) u.searchParams.set('workspace_hint', o.workspaceHint);
  location.assign(u.toString());
}

// finishOAuth completes the flow when the page is loaded with ?code=&state=: it checks
// the state, exchanges the code at the token endpoint (a public client: no secret) and
// keeps the access token (and, from the gateway's authorization server, the refresh
// token). servers is {server, external}: the settings of the gateway's authorization
// server and of the external provider, whichever the flow was started with. It returns an
// error message, or '' when there was nothing to finish or it succeeded.
export async function finishOAuth(servers) {
  const q = new URLSearchParams(location.search);
  if (!q.has('code') && !q.has('error')) return '';
  const saved = JSON.parse(sessionStorage.getItem(PKCE_KEY) || '{}');
  const o = saved.server ? servers.server : servers.external;
  sessionStorage.removeItem(PKCE_KEY);
  history.replaceState(null, '', location.pathname + '#/marketplace');
  if (q.has('error')) return 'Sign-in failed: ' + (q.get('error_description') || q.get('error'));
  if (!o || !saved.verifier || q.get('state') !== saved.state) return 'Sign-in failed: the answer does not match this sign-in attempt.';
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code: q.get('code'),
    redirect_uri: redirectURI(),
    client_id: o.clientId,
    code_verifier: saved.verifier,
  });
  for (const r of o.resource || []) body.append('resource', r);
  try {
    const r = await fetch(o.tokenUrl, { method: 'POST', body, headers: { Accept: 'application/json' } });
    const j = await r.json();
    if (!r.ok || !j.access_token) return 'Sign-in failed: ' + (j.error_description || j.error || r.status);
    setToken(j.access_token);
    if (o.server && j.refresh_token) {
      sessionStorage.setItem(REFRESH_KEY, j.refresh_token);
      sessionStorage.setItem(SERVER_KEY, JSON.stringify(o));
    }
    return '';
  } catch (e) {
    return 'Sign-in failed: ' + e.message;
  }
}
