package services

import (
	"reflect"
	"slices"
	"testing"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/urlguard"
)

// TestNewServicesWiring: every service is built over the one pool; with a connection
// service the overrides and policies rebuild into its store and the rate limits republish
// through it; with a guard the registry fetches through it; SetOnCatalogChange reaches every
// service that rebuilds documents. Without a connection service or a guard those stay unset.
func TestNewServicesWiring(t *testing.T) {
	t.Parallel()
	pool := &db.Pool{}
	store := &catalog.DiskStore{Dir: t.TempDir()}
	conns := &connections.Service{Pool: pool, Store: store}
	s := NewServices(pool, conns, urlguard.New(nil), nil)

	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		if v.Field(i).IsNil() {
			t.Errorf("Services.%s is nil", v.Type().Field(i).Name)
		}
	}
	if s.Connections != conns || s.Entries.Pool != pool || s.Overrides.Pool != pool || s.RateLimits.Pool != pool ||
		s.Policies.Pool != pool || s.Registry.Pool != pool || s.Workspaces.Pool != pool || s.Pins.Pool != pool ||
		s.People.Pool != pool || s.Grants.Pool != pool || s.IDPs.Pool != pool {
		t.Error("a service is not over the pool NewServices was given")
	}
	if s.Overrides.Store != store || s.Policies.Store != store {
		t.Error("the overrides and policies do not rebuild into the connections' store")
	}
	if s.RateLimits.Publish == nil {
		t.Error("the rate limits do not republish through the connections")
	}
	if s.Registry.HTTPClient == nil || s.Registry.HTTPClient.Timeout != RegistryFetchTimeout {
		t.Errorf("the registry's client = %+v, want the guard's with timeout %s", s.Registry.HTTPClient, RegistryFetchTimeout)
	}

	var got [][]string
	s.SetOnCatalogChange(func(ws []string) { got = append(got, ws) })
	for i, f := range []func([]string){s.Connections.OnCatalogChange, s.Overrides.OnCatalogChange, s.Policies.OnCatalogChange} {
		if f == nil {
			t.Fatalf("hook %d not set", i)
		}
		f([]string{"w"})
	}
	if !slices.EqualFunc(got, [][]string{{"w"}, {"w"}, {"w"}}, slices.Equal) {
		t.Errorf("hooks called with %v", got)
	}

	bare := NewServices(pool, nil, nil, nil)
	if bare.Connections != nil || bare.Overrides.Store != nil || bare.Policies.Store != nil || bare.RateLimits.Publish != nil ||
		bare.Registry.HTTPClient != nil {
		t.Error("without a connection service and a guard, NewServices wired something anyway")
	}
	bare.SetOnCatalogChange(func([]string) {}) // no connection service: must not panic
	if bare.Overrides.OnCatalogChange == nil || bare.Policies.OnCatalogChange == nil {
		t.Error("SetOnCatalogChange skipped the overrides or policies without a connection service")
	}
}
