package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/marketplace/api"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/services"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestS3Catalog runs the precomputed catalog (docs/DESIGN.md §6) through a real S3 protocol
// endpoint (gofakes3): the marketplace — here a separate process-like service with its
// own upstream pool and no line to the gateway's cache — installs a server and rewrites
// the workspace's document in S3; the gateway, revalidating by ETag every CATALOG_TTL,
// lists the new tools within that TTL; with the endpoint stopped, it keeps serving the
// last good catalog (and says so in its log).
func TestS3Catalog(t *testing.T) {
	t.Parallel()
	const bucket, ttl = "agentpack-catalog", 400 * time.Millisecond
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	s3srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(s3srv.Close)
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(s3srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	store := catalog.NewS3StoreFromConfig(cfg, bucket, func(o *s3.Options) { o.RetryMaxAttempts = 1 })

	w := newWorld(t, &stacktest.Options{Store: store, Catalog: ttl})
	fx := fixture(t)

	// The marketplace process.
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})
	up := mcpclient.New(&mcpclient.Options{Guard: guard})
	market := &connections.Service{Pool: w.env.Pool, Store: store, Upstreams: up, Guard: guard}
	msrv := httptest.NewServer(stacktest.CheckOpenAPI(t, (&api.API{Pool: w.env.Pool, Services: services.NewServices(w.env.Pool, market, guard, nil), Verifier: w.env.Deps.Verifier}).Handler()))
	t.Cleanup(func() { msrv.Close(); _ = up.Close() })

	if got := w.gatewayTools(t, w.wsA, w.memberA); slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "mcp_") }) {
		t.Fatalf("proxied tools before any install: %v", got)
	}
	entry := w.entry(t, "S3 Demo", fx.URL, "streamable-http")
	st, b := doAt(t, msrv.URL, "POST", "/api/mcp-marketplace/"+entry+"/install", w.adminA,
		map[string]any{"workspaceId": w.wsA, "headers": map[string]string{"X-Key": "s3-doc-secret"}})
	want(t, "install", st, http.StatusCreated, b)
	installed := time.Now()
	handle := b["handle"].(string)

	// The workspace's document in S3 now lists the server's tools (and no header value).
	doc, etag1, err := catalog.ReadDocument(context.Background(), store, w.wsA)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(doc)
	if len(doc.Connections) != 1 || len(doc.Connections[0].Tools) != 5 {
		t.Fatalf("document after install: %v %s", err, data)
	}
	if strings.Contains(string(data), "s3-doc-secret") {
		t.Fatal("the S3 document holds a header value")
	}
	if _, _, err := catalog.ReadDocument(context.Background(), store, w.wsB); err != catalog.ErrNotFound {
		t.Errorf("B's document was written by A's install: %v", err)
	}

	// The gateway sees it once CATALOG_TTL has passed (plus scheduling slack, generous and
	// scaled: the bound catches a gateway that never revalidates).
	var got []string
	for {
		got = proxied(w.gatewayTools(t, w.wsA, w.memberA), handle)
		if len(got) == 5 {
			break
		}
		if time.Since(installed) > ttl+testpeer.Scaled(10*time.Second) {
			t.Fatalf("the gateway did not list the new tools within %v: %v", ttl, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("gateway listed the new tools %v after the install (TTL %v)", time.Since(installed).Round(time.Millisecond), ttl)

	// A second change (toggle off) rewrites the document with a new ETag.
	st, b = doAt(t, msrv.URL, "POST", "/api/mcp-connections/"+b["id"].(string)+"/toggle", w.adminA, nil)
	want(t, "toggle off", st, http.StatusOK, b)
	if _, etag2, err := catalog.ReadDocument(context.Background(), store, w.wsA); err != nil || etag2 == etag1 {
		t.Errorf("document after toggle: etag %q → %q, %v", etag1, etag2, err)
	}
	st, b = doAt(t, msrv.URL, "POST", "/api/mcp-connections/"+b["id"].(string)+"/toggle", w.adminA, nil)
	want(t, "toggle on", st, http.StatusOK, b)
	time.Sleep(ttl + 100*time.Millisecond)
	if got := proxied(w.gatewayTools(t, w.wsA, w.memberA), handle); len(got) != 5 {
		t.Fatalf("after toggling back: %v", got)
	}

	// Stop S3: the gateway keeps serving the last good catalog, and calls still work.
	s3srv.CloseClientConnections()
	s3srv.Close()
	time.Sleep(ttl + 100*time.Millisecond)
	for range 2 {
		if got := proxied(w.gatewayTools(t, w.wsA, w.memberA), handle); len(got) != 5 {
			t.Fatalf("with S3 down the gateway lists %v", got)
		}
		time.Sleep(ttl)
	}
	sess := w.env.MCP(t, "/mcp/"+w.wsA, w.adminA, "", nil)
	res, err := sess.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp_" + handle + "_echo", Arguments: map[string]any{"message": "still here"}})
	if err != nil || res.IsError {
		t.Fatalf("call with S3 down: %v %+v", err, res)
	}
	if !strings.Contains(w.env.Logs.String(), "serving last good copy") {
		t.Error("the gateway did not log that it serves the last good copy")
	}
}
