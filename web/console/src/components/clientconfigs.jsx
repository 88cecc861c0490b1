// Each MCP client's ready-to-copy configuration for an endpoint, with the signed-in
// user's token masked until revealed (Client setup, and a connection's Client setup on
// Connections). shared/clientsetup builds the same text for the `make run` banner (the
// browser test compares them).

import { useState } from 'preact/hooks';
import { getToken } from '../auth.js';

// clientConfigs mirrors shared/clientsetup.For: same clients, same order, same text (JSON
// keys in Go's sorted order, compact).
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

const MASK = '••••••••••••';

// ClientConfigs shows every client's text for url; id prefixes the element ids.
export function ClientConfigs({ url, id }) {
  const [revealed, setRevealed] = useState(false);
  const [copied, setCopied] = useState('');
  const token = getToken();
  const configs = clientConfigs(url, token);
  const copy = async (c) => {
    try {
      await navigator.clipboard.writeText(c.text);
      setCopied(c.id);
    } catch {
      setCopied('');
    }
  };
  return (
    <div class="client-configs" data-endpoint={url}>
      <p class="help">
        Endpoint <code class="mono">{url}</code>. The configurations carry your own token (it expires with your
        session); treat them as secrets.
      </p>
      <button type="button" class="reveal" aria-pressed={revealed ? 'true' : 'false'} onClick={() => setRevealed(!revealed)}>
        {revealed ? 'Hide token' : 'Reveal token'}
      </button>
      {configs.map((c) => (
        <div class="client" key={c.id}>
          <div class="client-head">
            <h3 id={id + '-' + c.id}>
              {c.label} <span class="muted small">· {c.where}</span>
            </h3>
            <button type="button" onClick={() => copy(c)} aria-describedby={id + '-' + c.id}>
              {copied === c.id ? 'Copied' : 'Copy'}
            </button>
          </div>
          <pre class="code" data-client={c.id} aria-labelledby={id + '-' + c.id}>
            {revealed ? c.text : c.text.split(token).join(MASK)}
          </pre>
        </div>
      ))}
    </div>
  );
}
