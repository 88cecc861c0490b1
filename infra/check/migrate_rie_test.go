package check

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/infra/rie"
	"github.com/agentpack/gateway/migrations"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/seed"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/aws/aws-lambda-go/cfn"
)

// cfnResponses stands in for CloudFormation's presigned S3 response URL: it records every
// PUT it receives (body and Content-Type) and answers 200, as S3 does.
type cfnResponses struct {
	srv *httptest.Server
	got chan cfnPut
}

type cfnPut struct {
	Method, ContentType, Query string
	Body                       cfn.Response
}

func newCFNResponses(t *testing.T) *cfnResponses {
	t.Helper()
	r := &cfnResponses{got: make(chan cfnPut, 16)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var body cfn.Response
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("response body is not JSON: %v: %s", err, b)
		}
		r.got <- cfnPut{Method: req.Method, ContentType: req.Header.Get("Content-Type"), Query: req.URL.RawQuery, Body: body}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// next returns the one response the invocation sent (the wrapper sends it before the
// invocation returns, so it is there already).
func (r *cfnResponses) next(t *testing.T) cfnPut {
	t.Helper()
	select {
	case p := <-r.got:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("the function sent no response to the response URL")
	}
	return cfnPut{}
}

// newestMigration is the version of the newest file of migrations.FS.
func newestMigration(t *testing.T) int64 {
	t.Helper()
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatal(names, err)
	}
	v, err := strconv.ParseInt(strings.SplitN(slices.Max(names), "_", 2)[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// dbSnapshot is everything a deploy could touch, as text, to compare before and after.
func dbSnapshot(t *testing.T, pool *db.Pool) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT version_id, is_applied FROM goose_db_version ORDER BY id`,
		`SELECT name, url, description, updated_at, seed_digest FROM mcp_catalog_entries ORDER BY name`,
		`SELECT id, name, default_project_id FROM workspaces ORDER BY id`,
		`SELECT workspace_id, email, role, superuser FROM invitations ORDER BY email`,
		`SELECT key, value FROM deploy_bootstrap ORDER BY key`,
		`SELECT count(*) FROM people`,
		`SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'`,
	} {
		rows, err := pool.Query(t.Context(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, v...)
		}
		rows.Close()
	}
	return b.String()
}

// TestMigrationFunctionUnderEmulator runs the migration function (cmd/migrate) under the
// Lambda runtime emulator with CloudFormation custom-resource events, against a database
// with no schema and a loopback server standing in for the presigned S3 response URL
// (docs/DEPLOY.md "What the deploy does to the database"):
//
//   - Create: the schema at the newest migration, the curated catalog, the first workspace
//     and the first admin's invitation (admin, superuser); SUCCESS with the physical id.
//   - Update with no new migration, after an admin edited a curated entry, renamed the
//     workspace and withdrew the invitation: SUCCESS, nothing changed.
//   - Update with a failing migration (a build with one more migration): FAILED with the
//     database's reason naming the file; the schema and data as they were.
//   - Delete: SUCCESS and nothing touched, also when the database cannot be reached.
func TestMigrationFunctionUnderEmulator(t *testing.T) {
	root := testpeer.RepoRoot(t)
	emulator := requireEmulator(t, root)
	pool, dbURL := dbtest.Empty(t)
	ctx := t.Context()
	resp := newCFNResponses(t)

	bootstrap, _, err := rie.BuildPackage(ctx, root, "./cmd/migrate", t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	failing, _, err := rie.BuildPackage(ctx, root, "./infra/check/testdata/migrate-failing", t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	const stackID = "arn:aws:cloudformation:eu-west-1:123456789012:stack/agentpack/0f0e0d0c"
	n := 0
	invoke := func(t *testing.T, bin, url string, typ cfn.RequestType, physical string) cfnPut {
		t.Helper()
		n++
		ev := cfn.Event{RequestType: typ, RequestID: fmt.Sprintf("req-%d", n),
			ResponseURL:       resp.srv.URL + "/cfn-response?X-Amz-Signature=abc",
			ResourceType:      "Custom::DatabaseMigration",
			LogicalResourceID: "DatabaseMigration", StackID: stackID, PhysicalResourceID: physical,
			ResourceProperties: map[string]any{"ServiceToken": "arn:aws:lambda:eu-west-1:123456789012:function:m",
				"FirstAdminEmail": "Admin@Example.com", "FirstWorkspaceName": "Acme", "CodeVersion": "1"}}
		if typ == cfn.RequestUpdate {
			ev.OldResourceProperties = ev.ResourceProperties
		}
		payload, _ := json.Marshal(ev)
		e := startEmulated(t, emulator, bin, []string{"AWS_LAMBDA_FUNCTION_NAME=migrate", "AWS_REGION=eu-west-1",
			"LOG_LEVEL=info", "DATABASE_URL=" + url}, 120*time.Second)
		ictx, cancel := context.WithTimeout(ctx, 150*time.Second)
		defer cancel()
		inv, err := e.Invoke(ictx, payload)
		if err != nil {
			t.Fatal(err)
		}
		if inv.Status != 200 || strings.Contains(string(inv.Payload), `"errorMessage"`) {
			t.Fatalf("invoke: %d %s\n%s", inv.Status, inv.Payload, e.Output())
		}
		p := resp.next(t)
		if p.Method != http.MethodPut || p.ContentType != "" || p.Query != "X-Amz-Signature=abc" {
			// A presigned S3 PUT is signed without a Content-Type: sending one fails it.
			t.Errorf("response sent as %s, Content-Type %q, query %q; want a PUT without Content-Type to the URL as given",
				p.Method, p.ContentType, p.Query)
		}
		if p.Body.RequestID != ev.RequestID || p.Body.StackID != stackID || p.Body.LogicalResourceID != "DatabaseMigration" {
			t.Errorf("response does not echo the request: %+v", p.Body)
		}
		return p
	}
	newest := newestMigration(t)
	var physical, workspace string

	t.Run("create", func(t *testing.T) {
		p := invoke(t, bootstrap, dbURL, cfn.RequestCreate, "")
		if p.Body.Status != cfn.StatusSuccess || p.Body.PhysicalResourceID == "" {
			t.Fatalf("create answered %+v", p.Body)
		}
		physical = p.Body.PhysicalResourceID
		var version int64
		if err := pool.QueryRow(ctx, `SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&version); err != nil || version != newest {
			t.Errorf("schema version %d (%v), want %d", version, err, newest)
		}
		if p.Body.Data["SchemaVersion"] != strconv.FormatInt(newest, 10) {
			t.Errorf("SchemaVersion attribute %v, want %d", p.Body.Data["SchemaVersion"], newest)
		}
		var entries int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM mcp_catalog_entries`).Scan(&entries); err != nil || entries != len(seed.Catalog) {
			t.Errorf("catalog entries %d (%v), want the %d curated ones", entries, err, len(seed.Catalog))
		}
		ws, err := db.WorkspaceList(ctx, pool)
		if err != nil || len(ws) != 1 || ws[0].Name != "Acme" || ws[0].DefaultProjectID == nil {
			t.Fatalf("workspaces %+v %v, want one named Acme with a default project", ws, err)
		}
		workspace = ws[0].ID
		if p.Body.Data["WorkspaceId"] != workspace || p.Body.Data["FirstAdmin"] != "invited" {
			t.Errorf("attributes %v, want WorkspaceId %s and FirstAdmin invited", p.Body.Data, workspace)
		}
		var role string
		var su bool
		if err := pool.QueryRow(ctx, `SELECT role, superuser FROM invitations WHERE workspace_id = $1 AND email = 'admin@example.com'`,
			workspace).Scan(&role, &su); err != nil || role != "admin" || !su {
			t.Errorf("first admin's invitation: role %q superuser %v (%v), want admin and superuser", role, su, err)
		}
	})
	if t.Failed() {
		return
	}

	t.Run("update with no new migration changes nothing an admin edited", func(t *testing.T) {
		for _, q := range []string{
			`UPDATE mcp_catalog_entries SET description = 'Edited by an admin', updated_at = now() WHERE name = 'DeepWiki'`,
			`UPDATE workspaces SET name = 'Acme (renamed)'`,
			`DELETE FROM invitations`,
		} {
			if _, err := pool.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		before := dbSnapshot(t, pool)
		p := invoke(t, bootstrap, dbURL, cfn.RequestUpdate, physical)
		if p.Body.Status != cfn.StatusSuccess || p.Body.PhysicalResourceID != physical {
			t.Fatalf("update answered %+v, want SUCCESS with physical id %s", p.Body, physical)
		}
		if p.Body.Data["WorkspaceId"] != workspace || p.Body.Data["FirstAdmin"] != "already" {
			t.Errorf("attributes %v", p.Body.Data)
		}
		if after := dbSnapshot(t, pool); after != before {
			t.Errorf("an update with nothing new changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})

	t.Run("a failing migration answers FAILED and leaves the schema", func(t *testing.T) {
		before := dbSnapshot(t, pool)
		p := invoke(t, failing, dbURL, cfn.RequestUpdate, physical)
		if p.Body.Status != cfn.StatusFailed || p.Body.PhysicalResourceID != physical {
			t.Fatalf("answered %+v, want FAILED with physical id %s", p.Body, physical)
		}
		for _, want := range []string{"99999_failing.sql", "division by zero"} {
			if !strings.Contains(p.Body.Reason, want) {
				t.Errorf("reason %q does not name %q", p.Body.Reason, want)
			}
		}
		if after := dbSnapshot(t, pool); after != before {
			t.Errorf("a failed migration changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		var probe *string
		if err := pool.QueryRow(ctx, `SELECT to_regclass('migration_probe')::text`).Scan(&probe); err != nil || probe != nil {
			t.Errorf("the failed migration's table exists: %v %v", probe, err)
		}
	})

	t.Run("delete touches nothing", func(t *testing.T) {
		before := dbSnapshot(t, pool)
		p := invoke(t, bootstrap, dbURL, cfn.RequestDelete, physical)
		if p.Body.Status != cfn.StatusSuccess || p.Body.PhysicalResourceID != physical {
			t.Fatalf("delete answered %+v", p.Body)
		}
		if after := dbSnapshot(t, pool); after != before {
			t.Errorf("delete changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		// Nor does it need the database: a stack whose database is gone still deletes.
		p = invoke(t, bootstrap, "postgres://nobody@127.0.0.1:1/none?sslmode=disable", cfn.RequestDelete, physical)
		if p.Body.Status != cfn.StatusSuccess {
			t.Errorf("delete without a database answered %+v", p.Body)
		}
	})
}
