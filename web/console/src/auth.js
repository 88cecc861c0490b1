// Sign-in state. The bearer token lives in sessionStorage (one tab, gone when the tab
// closes) and in memory; never in localStorage, never in a cookie.

const KEY = 'agentpack.console.token';
const PKCE_KEY = 'agentpack.console.pkce';

export function getToken() {
  return sessionStorage.getItem(KEY) || '';
}

export function setToken(t) {
  if (t) sessionStorage.setItem(KEY, t);
  else sessionStorage.removeItem(KEY);
}

export function signOut() {
  setToken('');
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
  sessionStorage.setItem(PKCE_KEY, JSON.stringify({ verifier, state }));
  const u = new URL(o.authorizeUrl);
  u.searchParams.set('response_type', 'code');
  u.searchParams.set('client_id', o.clientId);
  u.searchParams.set('redirect_uri', redirectURI());
  u.searchParams.set('scope', o.scope || 'openid');
  u.searchParams.set('state', state);
  u.searchParams.set('code_challenge', b64url(digest));
  u.searchParams.set('code_challenge_method', 'S256');
  if (o.audience) u.searchParams.set('audience', o.audience);
  location.assign(u.toString());
}

// finishOAuth completes the flow when the page is loaded with ?code=&state=: it checks
// the state, exchanges the code at the token endpoint (a public client: no secret) and
// keeps the access token. It returns an error message, or '' when there was nothing to
// finish or it succeeded.
export async function finishOAuth(o) {
  const q = new URLSearchParams(location.search);
  if (!q.has('code') && !q.has('error')) return '';
  const saved = JSON.parse(sessionStorage.getItem(PKCE_KEY) || '{}');
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
  try {
    const r = await fetch(o.tokenUrl, { method: 'POST', body, headers: { Accept: 'application/json' } });
    const j = await r.json();
    if (!r.ok || !j.access_token) return 'Sign-in failed: ' + (j.error_description || j.error || r.status);
    setToken(j.access_token);
    return '';
  } catch (e) {
    return 'Sign-in failed: ' + e.message;
  }
}
