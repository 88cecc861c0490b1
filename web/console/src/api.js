// The REST client: same origin, bearer token, JSON in and out. Errors become ApiError
// with the API's {code, message, hint, details} and the HTTP status.

import { getToken } from './auth.js';

export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code || '';
    this.hint = e.hint || '';
    this.details = e.details || null;
  }
}

let onUnauthenticated = () => {};
export function setUnauthenticatedHandler(f) {
  onUnauthenticated = f;
}

export async function api(method, path, body) {
  const headers = { Accept: 'application/json', Authorization: 'Bearer ' + getToken() };
  const init = { method, headers };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const text = await r.text();
  let json = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  if (!r.ok) {
    const err = new ApiError(r.status, json);
    if (r.status === 401) onUnauthenticated(err);
    throw err;
  }
  return json;
}

export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, v);
  const s = u.toString();
  return s ? '?' + s : '';
}

// openAuthorization follows an authorizationUrl the API answered. A link to the gateway's
// consent page (…/admin/#/consent/{link}) opens in this console, in this tab, where the
// user is signed in; anything else is followed as is.
export function openAuthorization(u) {
  try {
    const p = new URL(u, location.href);
    if (/^#\/consent\/[^/]+$/.test(p.hash)) {
      location.hash = p.hash;
      return;
    }
  } catch {
    /* not a URL: followed as is below */
  }
  location.assign(u);
}
