// Each MCP client's ready-to-copy configuration for an endpoint (Client setup, and a
// connection's Client setup on Connections), in the order a person should meet them:
//   1. the URL and each client's URL-only set-up: the client signs the person in through
//      the gateway's authorization server by itself (docs/AUTH.md);
//   2. under its own heading, for clients without OAuth, the same clients with an
//      Authorization header carrying an MCP access token made here for that purpose (/mcp
//      only, a lifetime the person chooses, revocable: components/mcptokens.jsx), never the
//      console's own token.
// shared/clientsetup builds the same text for the `make run` banner (URLOnly and For; the
// browser test compares them).

import { useState } from 'preact/hooks';
import { TokenMaker } from './mcptokens.jsx';

// urlOnlyConfigs mirrors shared/clientsetup.URLOnly: same clients, same order, same text
// (JSON keys in Go's sorted order, compact). No text holds a token.
export function urlOnlyConfigs(url, name = 'agentpack') {
  const args = ['-y', 'mcp-remote', url];
  if (url.startsWith('http://')) args.push('--allow-http');
  const j = (v) => JSON.stringify(v);
  return [
    { id: 'claude-code', label: 'Claude Code', where: 'Run in a terminal; login opens the browser to sign in (or run /mcp in a session)', text: `claude mcp add --transport http ${name} ${url}\nclaude mcp login ${name}` },
    { id: 'gemini-cli', label: 'Gemini CLI', where: `Run in a terminal, then /mcp auth ${name} in gemini to sign in`, text: `gemini mcp add --transport http ${name} ${url}` },
    { id: 'vscode', label: 'VS Code', where: '.vscode/mcp.json (VS Code asks to sign in when it starts the server)', text: j({ servers: { [name]: { type: 'http', url } } }) },
    { id: 'cursor', label: 'Cursor', where: '~/.cursor/mcp.json (Cursor shows Connect: click it to sign in)', text: j({ mcpServers: { [name]: { url } } }) },
    { id: 'claude-desktop', label: 'Claude Desktop (mcp-remote)', where: 'claude_desktop_config.json (mcp-remote opens the browser to sign in)', text: j({ mcpServers: { [name]: { args, command: 'npx' } } }) },
  ];
}

// clientConfigs mirrors shared/clientsetup.For: same clients, same order, same text (JSON
// keys in Go's sorted order, compact), with token in the Authorization header.
export function clientConfigs(url, token, name = 'agentpack') {
  const bearer = 'Bearer ' + token;
  const args = ['-y', 'mcp-remote', url, '--header', 'Authorization:${AGENTPACK_AUTH}'];
  if (url.startsWith('http://')) args.push('--allow-http');
  const j = (v) => JSON.stringify(v);
  return [
    { id: 'claude-code', label: 'Claude Code', where: 'Run in a terminal', text: `claude mcp add --transport http ${name} ${url} --header "Authorization: ${bearer}"` },
    { id: 'claude-desktop', label: 'Claude Desktop (mcp-remote)', where: 'claude_desktop_config.json', text: j({ mcpServers: { [name]: { args, command: 'npx', env: { AGENTPACK_AUTH: bearer } } } }) },
    { id: 'cursor', label: 'Cursor', where: '~/.cursor/mcp.json', text: j({ mcpServers: { [name]: { headers: { Authorization: bearer }, url } } }) },
    { id: 'vscode', label: 'VS Code', where: '.vscode/mcp.json', text: j({ servers: { [name]: { headers: { Authorization: bearer }, type: 'http', url } } }) },
    { id: 'inspector', label: 'MCP Inspector', where: 'Run in a terminal (Node >= 22)', text: `npx @modelcontextprotocol/inspector --cli ${url} --transport http --method tools/list --header "Authorization: ${bearer}"` },
    {
      id: 'sdk',
      label: 'TypeScript SDK',
      where: 'A Node script (npm i @modelcontextprotocol/sdk)',
      text: [
        "import { Client } from '@modelcontextprotocol/sdk/client/index.js';",
        "import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';",
        "const client = new Client({ name: 'my-app', version: '1.0.0' });",
        `await client.connect(new StreamableHTTPClientTransport(new URL('${url}'), {`,
        `  requestInit: { headers: { Authorization: '${bearer}' } },`,
        '}));',
        'console.log((await client.listTools()).tools.map((t) => t.name));',
      ].join('\n'),
    },
  ];
}

// PLACEHOLDER stands for the token in the header snippets until one is created.
export const PLACEHOLDER = 'YOUR_MCP_ACCESS_TOKEN';
const MASK = '••••••••••••';

// Snippet is one client's text with its Copy button.
function Snippet({ c, id, kind, shown, copied, onCopy }) {
  const hid = id + '-' + kind + '-' + c.id;
  return (
    <div class="client">
      <div class="client-head">
        <h4 id={hid}>
          {c.label} <span class="muted small">· {c.where}</span>
        </h4>
        <button type="button" onClick={() => onCopy(kind + c.id, c.text)} aria-describedby={hid}>
          {copied === kind + c.id ? 'Copied' : 'Copy'}
        </button>
      </div>
      <pre class="code" data-client={c.id} data-kind={kind} aria-labelledby={hid}>
        {shown}
      </pre>
    </div>
  );
}

// ClientConfigs shows, for endpoint url of workspace ws, the URL-only set-up first, then
// the header set-up with an MCP access token created here; id prefixes the element ids;
// onTokenCreated is called after a creation (the page's token list reloads).
export function ClientConfigs({ url, id, ws, onTokenCreated }) {
  const [revealed, setRevealed] = useState(false);
  const [copied, setCopied] = useState('');
  const [created, setCreated] = useState(null);
  const copy = async (key, text) => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(key);
    } catch {
      setCopied('');
    }
  };
  const token = created ? created.token : PLACEHOLDER;
  const headerConfigs = clientConfigs(url, token);
  return (
    <div class="client-configs" data-endpoint={url}>
      <section class="setup-url" aria-labelledby={id + '-url-title'}>
        <h2 id={id + '-url-title'}>Connect with the URL</h2>
        <p>
          Paste this URL into your MCP client. The client signs you in by itself: it opens your browser on this
          gateway's sign-in, you approve it once, and it keeps its own token (renewed as it goes; revoke it on the
          Connected clients page).
        </p>
        <div class="client-head">
          <code class="mono endpoint-url" id={id + '-url'}>
            {url}
          </code>
          <button type="button" onClick={() => copy('url', url)} aria-describedby={id + '-url'}>
            {copied === 'url' ? 'Copied' : 'Copy URL'}
          </button>
        </div>
        {urlOnlyConfigs(url).map((c) => (
          <Snippet key={c.id} c={c} id={id} kind="url" shown={c.text} copied={copied} onCopy={copy} />
        ))}
      </section>
      <section class="setup-header" aria-labelledby={id + '-header-title'}>
        <h2 id={id + '-header-title'}>Clients without OAuth: a header token</h2>
        <p>
          For a client that cannot sign in by itself, create an <strong>MCP access token</strong>: it is valid at the
          MCP endpoint only (never the REST API), acts as you in this workspace with your role, lives as long as you
          choose, and can be revoked below. It is shown once.
        </p>
        <TokenMaker id={id + '-token'} ws={ws} onCreated={(t) => {
          setCreated(t);
          setRevealed(false);
          if (onTokenCreated) onTokenCreated(t);
        }} />
        {created ? (
          <button type="button" class="reveal" aria-pressed={revealed ? 'true' : 'false'} onClick={() => setRevealed(!revealed)}>
            {revealed ? 'Hide token' : 'Reveal token'}
          </button>
        ) : (
          <p class="help">Until you create one, the snippets below show {PLACEHOLDER} where the token goes.</p>
        )}
        {headerConfigs.map((c) => (
          <Snippet key={c.id} c={c} id={id} kind="header" copied={copied} onCopy={copy}
            shown={created && !revealed ? c.text.split(created.token).join(MASK) : c.text} />
        ))}
      </section>
    </div>
  );
}
