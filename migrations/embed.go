// Package migrations holds the SQL schema of the gateway as numbered goose
// migrations, embedded so that every binary and `make migrate` apply the same
// files (docs/DESIGN.md §3).
package migrations

import "embed"

// FS holds every *.sql migration in this folder, in goose's format.
//
//go:embed *.sql
var FS embed.FS
