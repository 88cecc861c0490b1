// Package registrysync is the optional scheduled sync of an MCP registry into the catalog
// (docs/REGISTRY.md, "Scheduled sync"): the EventBridge rule RegistrySyncSchedule, created
// only when the RegistrySyncUrl parameter is set, invokes the health-check function with
// the constant input {"action": "registry-sync"}; Handler routes that input here and every
// other event (the rate(30 minutes) health check) to the health-check pass.
//
// A sync is the superuser import of shared/registry with the same rules: idempotent upsert
// keyed on (server name, remote), deprecated entries flagged, deleted ones hidden, installs
// never touched, new entries unverified. It runs as the principal Actor.
package registrysync

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/agentpack/gateway/functions/healthcheck/health"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/registry"
	"github.com/aws/aws-lambda-go/events"
)

// Action is the "action" of the schedule's constant input.
const Action = "registry-sync"

// Actor is the subject the sync imports as (event_log actor of catalog_entry.imported).
const Actor = "system:registry-sync"

// Syncer imports the registry at URL (REGISTRY_SYNC_URL) with Importer.
type Syncer struct {
	Importer *registry.Importer
	URL      string
	Logger   *slog.Logger
}

// Run imports the registry once and returns the import's report. Errors: VALIDATION_ERROR
// when no URL is configured (the schedule exists only with one, so this is a
// misconfiguration), else the import's (UPSTREAM_UNAVAILABLE / UPSTREAM_ERROR when the
// registry cannot be read; nothing is written then). Refused documents are in the report,
// not errors.
func (s *Syncer) Run(ctx context.Context) (*registry.Report, error) {
	if s.URL == "" {
		return nil, apperr.New(apperr.Validation, "the registry sync was invoked but REGISTRY_SYNC_URL is not set")
	}
	rep, err := s.Importer.FromURL(ctx, &auth.Principal{Subject: Actor, Role: auth.RoleSuperuser}, s.URL)
	if err != nil {
		if s.Logger != nil {
			s.Logger.ErrorContext(ctx, "registry sync failed", "code", string(apperr.CodeOf(err)), "error", apperr.Public(err).Message)
		}
		return nil, err
	}
	if s.Logger != nil {
		s.Logger.InfoContext(ctx, "registry sync done", "documents", rep.Documents, "created", rep.Created,
			"updated", rep.Updated, "unchanged", rep.Unchanged, "refused", len(rep.Refused), "skipped", len(rep.Skipped))
	}
	return rep, nil
}

// Pass is the health-check pass (health.Checker.Handle).
type Pass func(context.Context, events.EventBridgeEvent) (*health.Summary, error)

// Handler returns the function's event handler: an input whose "action" is Action runs
// s.Run (a nil s refuses it with VALIDATION_ERROR); any other event is decoded as the
// EventBridge scheduled event and runs pass. An input that is not a JSON object is refused
// with VALIDATION_ERROR.
func Handler(s *Syncer, pass Pass) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var probe struct {
			Action string `json:"action"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, apperr.Wrap(err, apperr.Validation, "the event is not a JSON object")
		}
		if probe.Action == Action {
			if s == nil {
				return nil, apperr.New(apperr.Validation, "the registry sync is not configured in this function")
			}
			return s.Run(ctx)
		}
		var ev events.EventBridgeEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, apperr.Wrap(err, apperr.Validation, "the event is not an EventBridge event")
		}
		if pass == nil {
			return nil, errors.New("registrysync: no health-check pass")
		}
		return pass(ctx, ev)
	}
}
