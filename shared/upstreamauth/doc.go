// Package upstreamauth authorizes the gateway to upstream MCP servers that follow the MCP
// authorization spec (OAuth 2.1; 2025-03-26, 2025-06-18 and 2025-11-25 revisions);
// docs/UPSTREAM-AUTH.md is its design and docs/DESIGN.md §6c the rule it serves.
//
// It is the client side of that spec, built on go-sdk's oauthex and auth packages
// (protected resource metadata, authorization server metadata, dynamic client
// registration) and on golang.org/x/oauth2 (PKCE, code exchange, refresh, client
// credentials). go-sdk's own AuthorizationCodeHandler runs a whole flow inside one call
// (its code fetcher blocks until the browser comes back); the gateway's flow is split
// across HTTP requests of a stateless function, so a [Service] keeps the pieces between
// requests in a [Store] ([DBStore] in a deployment, [MemoryStore] in tests and tools).
// [New] builds the Service from [Options].
//
// # Authorization code flow
//
//   - [Service.Begin] (install or re-authorize): discovery from the upstream's 401
//     challenge ([ParseChallenge]; RFC 9728 resource_metadata, else the well-known
//     fallbacks, else the 2025-03-26 fallback), authorization server metadata (RFC 8414 /
//     OIDC, in the spec's order, else the 2025-03-26 default endpoints), client identity
//     (client ID metadata document, pre-registered [Client], dynamic registration — in that
//     order), scopes (challenge, else scopes_supported, else none; offline_access when
//     offered; union with what was granted for step-up; plus the admin's [Settings]), PKCE
//     S256 and the resource parameter (RFC 8707); one dynamic registration per connection
//     and authorization server. It stores a [Pending] under a random state, bound to the
//     caller and the connection, single use, valid [StateTTL], and answers the link: the
//     gateway's consent page ([Options.ConsentURL]) or, without one, the authorization URL.
//   - [Service.Consent] (the consent page): only the caller the link was made for gets the
//     authorization URL, with a binding cookie ([BindingCookieName]) the callback then
//     requires.
//   - [Service.Complete] and [Service.CompleteBound] (GET /api/oauth/callback, served by
//     [Service.CallbackHandler]): take the state (once), check it is the caller's and not
//     expired, check the issuer (RFC 9207), exchange the code with the verifier and the
//     resource, and store the [Grant]. [Service.ClientMetadataHandler] serves the
//     gateway's client ID metadata document.
//
// # Tokens
//
//   - [Service.Credentials]: the access token for a connection (and, for oauth_per_user, a
//     caller; see [Key]), refreshed [RefreshSkew] before expiry and once on a 401,
//     concurrent refreshes collapsed into one; a refused refresh marks the grant as needing
//     re-authorization. The returned [Credentials] is what mcpclient's Target carries.
//   - [Service.ClientCredentials]: the machine-to-machine grant (client_secret_basic,
//     client_secret_post, private_key_jwt). [Service.EnterpriseGrant] and
//     [Service.WorkloadGrant] are further grants the conformance client uses; they are not
//     connection auth modes.
//   - [Service.Revoke]: RFC 7009 revocation when the server offers it, then deletion.
//   - [Service.Status] and [StatusOf]: what the console may show of a grant (no token).
//
// # Answering a caller without a token
//
// [Answer] turns a [NeedsAuthorization] into the answer for the caller's protocol revision
// (docs/UPSTREAM-AUTH.md "What a caller without a usable token gets"): an isError result
// with the link before 2025-11-25, the URL elicitation error -32042 at 2025-11-25
// ([URLElicitationVersion]), and an InputRequiredResult at 2026-07-28
// ([InputRequiredVersion], [InputRequired]). Its requestState is sealed and bound to the
// request by [Service.SealRequestState] and verified on the retry by
// [Service.OpenRequestState] ([Binding], [RequestStateTTL], [StatePrefix],
// [ErrRequestState]); [Declined] reads a declined or cancelled elicitation.
//
// # Security
//
// Every URL of the flow (metadata, endpoints, redirects) goes through the HTTP client given
// in [Options], which in the gateway is the urlguard's (dial-time address checks, no
// redirects), and through [Options.CheckURL] before it is used.
//
// Tokens and client secrets are secrets: they are never returned by this package's public
// answers ([Status], errors), never logged, and stores seal them with a [Sealer]
// ([NewKMSSealer], [NewKeyFileSealer]) before they reach disk or a database.
package upstreamauth
