package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/signing"
	"github.com/google/uuid"
)

// issuedToken returns an access token as the gateway's own authorization server issues it
// (docs/AUTH.md): RS256 with the key file the gateway under test reads
// (AUTH_SIGNING_KEY_FILE), audience gwBase/mcp, and an active grant row, so that the
// gateway takes the issued-token path on every call (signature, audience, the grant's
// revocation check: one indexed read).
func issuedToken(ctx context.Context, dbURL, keyFile, gwBase, ws string) (string, error) {
	key, err := signing.LoadFile(keyFile)
	if err != nil {
		return "", err
	}
	pool, err := db.Open(ctx, dbURL, 1)
	if err != nil {
		return "", err
	}
	defer pool.Close()
	grant := uuid.NewString()
	if err := db.ASGrantTouch(ctx, pool, &db.ASGrant{ID: grant, ClientID: "bench", ClientName: "bench",
		PersonID: "bench", WorkspaceID: ws, Scopes: []string{"mcp"}}); err != nil {
		return "", fmt.Errorf("bench: grant: %w", err)
	}
	now := time.Now()
	claims, _ := json.Marshal(map[string]any{"iss": gwBase, "sub": "bench", "role": "admin", "workspaces": []string{ws},
		"sid": grant, "aud": []string{gwBase + "/mcp"}, "client_id": "bench", "scope": "mcp",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	return key.SignJWT(ctx, "at+jwt", claims)
}
