// What the Marketplace and the Catalog admin show of a catalog entry: its verification
// tier, health, source and category (docs/REGISTRY.md).

import { Badge } from '../ui.jsx';

const TIERS = {
  official: ['official', 'Official'],
  verified_community: ['verified', 'Verified community'],
  unverified: ['unverified', 'Unverified'],
};

// healthBadge: an entry's health as the scheduled check last saw it. Only installed
// entries are checked, so an entry nobody installed says so instead of pretending.
export function HealthBadge({ e }) {
  const s = e.healthStatus;
  if (!s) {
    // The scheduled check only probes installed entries (it needs an install's headers),
    // so an entry nobody installed has no health to show, and says so.
    return (
      <Badge kind="never">
        Never checked{e.installCount > 0 ? '' : ' · not installed anywhere'}
      </Badge>
    );
  }
  const label = { healthy: 'Healthy', stale: 'Stale', down: 'Down' }[s] || s;
  return <Badge kind={'health-' + s}>{label}</Badge>;
}

export function TierBadge({ tier }) {
  const [kind, label] = TIERS[tier] || ['unverified', tier];
  return <Badge kind={'tier-' + kind}>{label}</Badge>;
}

// registryOrigin names where a registry entry came from: the registry's host, or the
// imported file ("file:servers.json"), as docs/REGISTRY.md stores it in registryUrl.
function registryOrigin(u) {
  if (!u) return '';
  try {
    const p = new URL(u);
    if (p.protocol === 'https:' || p.protocol === 'http:') return p.host;
  } catch {
    /* not a URL: shown as stored */
  }
  return u;
}

// SourceBadge is an entry's source (docs/REGISTRY.md): curated, a superuser's own, or an
// MCP registry import (with the registry it came from).
export function SourceBadge({ e }) {
  if (e.source === 'registry') {
    const from = registryOrigin(e.registryUrl);
    return (
      <Badge kind="registry" title={e.registryUrl || ''}>
        Registry{from ? ' · ' + from : ''}
      </Badge>
    );
  }
  return <Badge kind="source">{e.source === 'admin' ? 'Added by a superuser' : 'Curated'}</Badge>;
}

// CATEGORY_LABELS are the words of the catalog's category slugs; any other slug is shown
// with its dashes as spaces and a capital first letter.
const CATEGORY_LABELS = {
  'ai-ml': 'AI & ML',
  'dev-tools': 'Developer tools',
  devtools: 'Developer tools',
  'developer-tools': 'Developer tools',
  db: 'Databases',
  api: 'APIs',
  apis: 'APIs',
  crm: 'CRM',
  seo: 'SEO',
  iot: 'IoT',
};

export function categoryLabel(slug) {
  if (!slug) return '';
  if (CATEGORY_LABELS[slug]) return CATEGORY_LABELS[slug];
  const words = slug.replace(/[-_]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
