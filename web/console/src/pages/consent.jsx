// The consent page (docs/UPSTREAM-AUTH.md "Consent bound to its user"): the link a caller
// receives for an OAuth connection opens /admin/#/consent/{link}. Signed in, the page asks
// the API to continue as this user; only the user the link was made for gets through (the
// API then sets the HttpOnly cookie the callback requires and names the authorization
// server), anyone else sees why they were refused and nothing is stored.

import { useEffect, useState } from 'preact/hooks';
import { oauthConsent } from '../api.js';
import { ErrorBox, markReady } from '../ui.jsx';

export function Consent({ ctx, arg: link }) {
  const [error, setError] = useState(null);
  useEffect(() => {
    let live = true;
    oauthConsent.start(link)
      .then((r) => {
        if (live) location.assign(r.authorizationUrl);
      })
      .catch((e) => {
        if (!live) return;
        setError(e);
        markReady('consent-refused');
      });
    return () => {
      live = false;
    };
  }, [link]);
  if (!error) {
    return (
      <section data-consent="checking">
        <h1>Authorize a connection</h1>
        <p role="status">Checking that this link is yours, {ctx.claims.sub}…</p>
      </section>
    );
  }
  return (
    <section data-consent="refused">
      <h1>Authorization refused</h1>
      <ErrorBox error={error} />
      <p>
        You are signed in as <strong>{ctx.claims.sub}</strong>. Nothing was stored and no account was connected.
      </p>
    </section>
  );
}
