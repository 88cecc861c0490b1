// The console's pages, in navigation order. To add a page: write pages/<name>.jsx (a
// component taking {ctx, arg, go}; its REST calls go in api.js, its building blocks come
// from ui.jsx and components/), add one line here, run `make console`. Pages never import
// each other.
//
// route: the hash route (#/route[/arg]); label: the navigation text, short so that the
// header stays one line at 1280 px (issue 34); who: who sees it in the navigation (member:
// everyone; admin: admins and superusers; superuser; none: reached by a link only). Every
// route answers any signed-in user; the API refuses what the role may not read.
// perWorkspace: the page starts afresh when the workspace changes.

import { Activity } from './activity.jsx';
import { Authorizations } from './authorizations.jsx';
import { Catalog } from './catalog.jsx';
import { Chats } from './chats.jsx';
import { ConnectedClients } from './clients.jsx';
import { Connections } from './connections.jsx';
import { Consent } from './consent.jsx';
import { Limits } from './limits.jsx';
import { Marketplace } from './marketplace.jsx';
import { Members } from './members.jsx';
import { Playground } from './playground.jsx';
import { Policies } from './policies.jsx';
import { Setup } from './setup.jsx';
import { Usage } from './usage.jsx';

export const PAGES = [
  { route: 'marketplace', label: 'Marketplace', who: 'member', Page: Marketplace, perWorkspace: true },
  { route: 'connections', label: 'Connections', who: 'admin', Page: Connections, perWorkspace: true },
  { route: 'limits', label: 'Rate limits', who: 'admin', Page: Limits, perWorkspace: true },
  { route: 'members', label: 'Members', who: 'admin', Page: Members, perWorkspace: true },
  { route: 'chats', label: 'Chats', who: 'member', Page: Chats, perWorkspace: true },
  { route: 'policies', label: 'Policies', who: 'admin', Page: Policies, perWorkspace: true },
  { route: 'usage', label: 'Usage', who: 'admin', Page: Usage, perWorkspace: true },
  { route: 'playground', label: 'Playground', who: 'member', Page: Playground, perWorkspace: true },
  { route: 'setup', label: 'Client setup', who: 'member', Page: Setup, perWorkspace: true },
  { route: 'clients', label: 'Clients', who: 'member', Page: ConnectedClients, perWorkspace: true },
  { route: 'authorizations', label: 'Authorizations', who: 'member', Page: Authorizations, perWorkspace: true },
  { route: 'activity', label: 'Activity', who: 'admin', Page: Activity, perWorkspace: true },
  { route: 'catalog', label: 'Catalog', who: 'superuser', Page: Catalog, perWorkspace: false },
  { route: 'consent', label: 'Consent', who: 'none', Page: Consent, perWorkspace: false },
];
