package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

// refusingStore is a real disk store that refuses writes for one workspace.
type refusingStore struct {
	catalog.Store
	refuse string
}

func (s *refusingStore) PutObject(ctx context.Context, key string, data []byte) (string, error) {
	if strings.HasPrefix(key, "catalog/v2/workspaces/"+s.refuse+"/") {
		return "", errors.New("injected: refused")
	}
	return s.Store.PutObject(ctx, key, data)
}

// TestRebuildAllTriesEveryWorkspace: a global change rebuilds every workspace; one
// failing workspace does not leave the others stale, and its error is returned.
func TestRebuildAllTriesEveryWorkspace(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	ids := []string{"10000000-0000-4000-8000-000000000001", "20000000-0000-4000-8000-000000000002",
		"30000000-0000-4000-8000-000000000003", "40000000-0000-4000-8000-000000000004",
		"50000000-0000-4000-8000-000000000005", "60000000-0000-4000-8000-000000000006"}
	for _, id := range ids {
		dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{ID: id, Name: "w"})
	}
	store := &refusingStore{Store: &catalog.DiskStore{Dir: t.TempDir()}, refuse: ids[2]}
	err := catalog.Rebuild(ctx, pool, store, nil)
	if err == nil || !strings.Contains(err.Error(), ids[2]) {
		t.Fatalf("err = %v, want the refused workspace named", err)
	}
	for _, id := range ids {
		_, _, gerr := catalog.ReadDocument(ctx, store, id)
		if id == ids[2] {
			if !errors.Is(gerr, catalog.ErrNotFound) {
				t.Errorf("refused workspace has a document: %v", gerr)
			}
			continue
		}
		if gerr != nil {
			t.Errorf("workspace %s not rebuilt: %v", id, gerr)
		}
	}
}

// failingGetStore is a real disk store whose reads can be made to fail.
type failingGetStore struct {
	catalog.Store
	fail bool
}

func (s *failingGetStore) GetObject(ctx context.Context, key, inm string) ([]byte, string, error) {
	if s.fail {
		return nil, "", errors.New("injected: store unreachable")
	}
	return s.Store.GetObject(ctx, key, inm)
}

// TestCacheHealth: the aggregate health counts cached workspaces and store failures and
// names no workspace.
func TestCacheHealth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &failingGetStore{Store: &catalog.DiskStore{Dir: t.TempDir()}}
	const ws = "70000000-0000-4000-8000-000000000007"
	if _, err := catalog.WriteDocument(ctx, store, &catalog.Document{Version: catalog.SchemaVersion, WorkspaceID: ws}); err != nil {
		t.Fatal(err)
	}
	c := catalog.NewCache(store, 0, nil)
	if _, err := c.Get(ctx, ws); err != nil {
		t.Fatal(err)
	}
	store.fail = true
	if _, err := c.Get(ctx, ws); err != nil {
		t.Fatalf("last good copy not served: %v", err)
	}
	if _, err := c.Get(ctx, "80000000-0000-4000-8000-000000000008"); err == nil {
		t.Fatal("a never-loaded workspace was served while the store fails")
	}
	h := c.Health()
	if h.CachedWorkspaces != 1 || h.StoreFailures != 2 || h.OldestAgeMs < 0 {
		t.Fatalf("health = %+v", h)
	}
}

// TestCacheRevalidationMetrics: each failed revalidation writes one EMF line
// (Agentpack/Catalog RevalidationFailures, dimension reason): "store" when the store
// fails, "invalid" when the document does not decode; a good revalidation writes none.
func TestCacheRevalidationMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &failingGetStore{Store: &catalog.DiskStore{Dir: t.TempDir()}}
	const ws = "70000000-0000-4000-8000-000000000007"
	if _, err := catalog.WriteDocument(ctx, store, &catalog.Document{Version: catalog.SchemaVersion, WorkspaceID: ws}); err != nil {
		t.Fatal(err)
	}
	var metrics bytes.Buffer
	c := catalog.NewCache(store, 0, nil)
	c.Metrics = &metrics
	if _, err := c.Get(ctx, ws); err != nil || metrics.Len() != 0 {
		t.Fatalf("good revalidation: %v, metrics %q", err, metrics.String())
	}
	store.fail = true
	_, _ = c.Get(ctx, ws)
	store.fail = false
	if _, err := store.PutObject(ctx, catalog.IndexKey(ws), []byte(`{"version":2,`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, ws); err != nil {
		t.Fatalf("last good copy not served: %v", err)
	}
	var reasons []string
	for _, l := range strings.Split(strings.TrimSpace(metrics.String()), "\n") {
		var m struct {
			AWS struct {
				CloudWatchMetrics []struct {
					Namespace  string
					Dimensions [][]string
					Metrics    []struct{ Name, Unit string }
				}
			} `json:"_aws"`
			Reason string  `json:"reason"`
			N      float64 `json:"RevalidationFailures"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("EMF line %q: %v", l, err)
		}
		cw := m.AWS.CloudWatchMetrics
		if len(cw) != 1 || cw[0].Namespace != catalog.RevalidationNamespace || cw[0].Metrics[0].Name != catalog.RevalidationMetric ||
			cw[0].Metrics[0].Unit != "Count" || m.N != 1 || cw[0].Dimensions[0][0] != "reason" {
			t.Errorf("EMF line %s", l)
		}
		reasons = append(reasons, m.Reason)
	}
	if strings.Join(reasons, ",") != "store,invalid" {
		t.Errorf("reasons = %v", reasons)
	}
}

// TestRebuildDatabaseErrorNamesWorkspace: a database failure of a rebuild keeps its code
// (UNAVAILABLE on a closed pool) and names the workspace.
func TestRebuildDatabaseErrorNamesWorkspace(t *testing.T) {
	t.Parallel()
	_, url := dbtest.Fresh(t)
	pool, err := db.Open(t.Context(), url, 1)
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	const ws = "80000000-0000-4000-8000-000000000008"
	err = catalog.Rebuild(t.Context(), pool, &catalog.DiskStore{Dir: t.TempDir()}, []string{ws})
	if apperr.CodeOf(err) != apperr.Unavailable || !strings.Contains(err.Error(), "catalog: rebuild "+ws+": ") {
		t.Fatalf("err = %v, want UNAVAILABLE naming the workspace", err)
	}
}
