// The REST client: every path of the REST API the console calls is written here, once,
// grouped by resource (functions/marketplace/api/routes_*.go have the routes; openapi.json the
// shapes). Same origin, bearer token, JSON in and out. Errors become ApiError with the
// API's {code, message, hint, details} and the HTTP status; pages map details.field onto
// their fields with ui.jsx's apiFieldErrors.

import { freshToken, refresh } from './auth.js';

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

// request is the transport every call below goes through: method, a same-origin path,
// an optional JSON body; it answers the parsed JSON (null for an empty body) or throws
// ApiError. A 401 also calls the unauthenticated handler (the frame signs out).
// A token the server refuses (expired) is renewed once with the refresh token of the
// gateway's authorization server, when the tab has one, and the request sent again.
async function request(method, path, body) {
  const headers = { Accept: 'application/json', Authorization: 'Bearer ' + (await freshToken()) };
  const init = { method, headers };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let r = await fetch(path, init);
  if (r.status === 401) {
    const t = await refresh();
    if (t) {
      headers.Authorization = 'Bearer ' + t;
      r = await fetch(path, init);
    }
  }
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

const enc = encodeURIComponent;
const ws = (workspaceId) => qs({ workspaceId });

// Marketplace: the catalog (GET for everyone, writes for superusers) and installs.
export const marketplace = {
  list: (params = {}) => request('GET', '/api/mcp-marketplace' + qs(params)),
  categories: () => request('GET', '/api/mcp-marketplace/categories'),
  install: (id, body) => request('POST', `/api/mcp-marketplace/${id}/install`, body),
  uninstall: (id, workspaceId) => request('DELETE', `/api/mcp-marketplace/${id}/install` + ws(workspaceId)),
  create: (body) => request('POST', '/api/mcp-marketplace', body),
  update: (id, body) => request('PUT', `/api/mcp-marketplace/${id}`, body),
  remove: (id) => request('DELETE', `/api/mcp-marketplace/${id}`),
  auth: (id) => request('GET', `/api/mcp-marketplace/${id}/auth`),
  setAuth: (id, body) => request('PUT', `/api/mcp-marketplace/${id}/auth`, body),
};

// Connections of a workspace, their tools, overrides, skills and upstream authorization.
export const connections = {
  list: (workspaceId) => request('GET', '/api/mcp-connections' + ws(workspaceId)),
  statuses: (workspaceId) => request('GET', '/api/mcp-connections/statuses' + ws(workspaceId)),
  authorizations: (workspaceId) => request('GET', '/api/mcp-connections/authorizations' + ws(workspaceId)),
  create: (body) => request('POST', '/api/mcp-connections', body),
  update: (id, body) => request('PUT', `/api/mcp-connections/${id}`, body),
  remove: (id) => request('DELETE', `/api/mcp-connections/${id}`),
  test: (id) => request('POST', `/api/mcp-connections/${id}/test`),
  toggle: (id) => request('POST', `/api/mcp-connections/${id}/toggle`),
  authorize: (id, returnTo) => request('POST', `/api/mcp-connections/${id}/authorize`, { returnTo }),
  tools: (id) => request('GET', `/api/mcp-connections/${id}/tools`),
  approve: (id, tool) => request('POST', `/api/mcp-connections/${id}/tools/${enc(tool)}/approve`),
  overrides: (id, workspaceId) => request('GET', `/api/mcp-connections/${id}/overrides` + ws(workspaceId)),
  putOverride: (id, tool, body) => request('PUT', `/api/mcp-connections/${id}/tools/${enc(tool)}/override`, body),
  deleteOverride: (id, tool, workspaceId) =>
    request('DELETE', `/api/mcp-connections/${id}/tools/${enc(tool)}/override` + ws(workspaceId)),
  skills: (id) => request('GET', `/api/mcp-connections/${id}/skills`),
};

// Chats and their pins (the pins function's API).
export const chats = {
  list: (params) => request('GET', '/api/chats' + qs(params)),
  create: (body) => request('POST', '/api/chats', body),
  pins: (id) => request('GET', `/api/chats/${id}/pins`),
  tools: (id) => request('GET', `/api/chats/${id}/tools`),
  pin: (id, connectionId) => request('POST', `/api/chats/${id}/pins`, { connectionId }),
  unpin: (id, pinId) => request('DELETE', `/api/chats/${id}/pins/${pinId}`),
};

// Who the caller is: subject, role, and their email and name when the gateway knows them.
export const me = () => request('GET', '/api/me');

// Members and invitations of a workspace (admin).
// workspaces: POST /api/workspaces {name} (superuser) → 201 {id, name, defaultProjectId, creatorIsAdmin}.
export const workspaces = {
  create: (name) => request('POST', '/api/workspaces', { name }),
};

export const members = {
  list: (workspaceId) => request('GET', `/api/workspaces/${enc(workspaceId)}/members`),
  add: (workspaceId, body) => request('POST', `/api/workspaces/${enc(workspaceId)}/members`, body),
  setRole: (workspaceId, personId, role) => request('PUT', `/api/workspaces/${enc(workspaceId)}/members/${personId}`, { role }),
  remove: (workspaceId, personId) => request('DELETE', `/api/workspaces/${enc(workspaceId)}/members/${personId}`),
  withdraw: (workspaceId, email) => request('DELETE', `/api/workspaces/${enc(workspaceId)}/invitations/${enc(email)}`),
};

// Rate limits (admin).
export const rateLimits = {
  list: (workspaceId) => request('GET', '/api/rate-limits' + ws(workspaceId)),
  put: (body) => request('POST', '/api/rate-limits', body),
  remove: (id, workspaceId) => request('DELETE', `/api/rate-limits/${id}` + ws(workspaceId)),
};

// Access policies (admin).
export const policies = {
  get: (workspaceId) => request('GET', '/api/policies' + ws(workspaceId)),
  put: (workspaceId, text) => request('PUT', '/api/policies', { workspaceId, text }),
  validate: (workspaceId, text) => request('POST', '/api/policies/validate', { workspaceId, text }),
  whatIf: (body) => request('POST', '/api/policies/what-if', body),
};

// Usage from the audit log (admin); csv answers the export as a Blob.
export const usage = {
  get: (params) => request('GET', '/api/usage' + qs(params)),
  csv: async (params) => {
    const r = await fetch('/api/usage' + qs({ ...params, format: 'csv' }), { headers: { Authorization: 'Bearer ' + (await freshToken()) } });
    if (!r.ok) throw new ApiError(r.status, null);
    return r.blob();
  },
};

// The activity log (admin).
export const events = {
  list: (params) => request('GET', '/api/events' + qs(params)),
};

// An upstream OAuth consent link (docs/UPSTREAM-AUTH.md "Consent bound to its user").
export const oauthConsent = {
  start: (link) => request('POST', '/api/oauth/consent', { link }),
};

// Connected clients: the MCP clients people authorized at the gateway's own authorization
// server (shared/grants, docs/AUTH.md). mine: the caller's own; inWorkspace: every client
// of a workspace (admin).
// A person's own MCP access tokens for header-only MCP clients (shared/grants, docs/AUTH.md
// "MCP access tokens"): /mcp only, a chosen lifetime, shown once at creation.
export const mcpTokens = {
  list: () => request('GET', '/api/mcp-tokens'),
  create: (body) => request('POST', '/api/mcp-tokens', body),
  revoke: (id) => request('DELETE', `/api/mcp-tokens/${enc(id)}`),
};

export const connectedClients = {
  mine: () => request('GET', '/api/connected-clients'),
  inWorkspace: (workspaceId) => request('GET', '/api/connected-clients' + ws(workspaceId)),
  revoke: (id) => request('DELETE', `/api/connected-clients/${enc(id)}`),
};
