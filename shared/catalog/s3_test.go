package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// fakeS3 starts an in-process S3-compatible endpoint (gofakes3) with bucket and returns
// its URL.
func fakeS3(t *testing.T, bucket string) *httptest.Server {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	return srv
}

// s3Env points the AWS SDK at endpoint through the environment, as LocalStack and tests
// do in deployment (AWS_ENDPOINT_URL, docs/DESIGN.md §6).
func s3Env(t *testing.T, endpoint string) {
	t.Setenv("AWS_ENDPOINT_URL", endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
}

// storeContract runs the Store contract against s.
func storeContract(t *testing.T, s catalog.Store) {
	ctx := context.Background()
	ws := "11111111-1111-4111-8111-111111111111"
	if _, _, err := s.GetObject(ctx, ws, ""); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("get missing: %v, want ErrNotFound", err)
	}
	doc1 := []byte(`{"version":1,"workspaceId":"` + ws + `","connections":[]}`)
	tag1, err := s.PutObject(ctx, ws, doc1)
	if err != nil || tag1 == "" {
		t.Fatalf("put: %q %v", tag1, err)
	}
	data, tag, err := s.GetObject(ctx, ws, "")
	if err != nil || string(data) != string(doc1) || tag != tag1 {
		t.Fatalf("get: %q %q %v (put etag %q)", data, tag, err, tag1)
	}
	if _, tag, err := s.GetObject(ctx, ws, tag1); !errors.Is(err, catalog.ErrNotModified) || tag != tag1 {
		t.Fatalf("conditional get: %q %v, want ErrNotModified", tag, err)
	}
	doc2 := []byte(`{"version":1,"workspaceId":"` + ws + `","connections":[],"x":2}`)
	tag2, err := s.PutObject(ctx, ws, doc2)
	if err != nil || tag2 == tag1 {
		t.Fatalf("second put: %q %v", tag2, err)
	}
	data, tag, err = s.GetObject(ctx, ws, tag1)
	if err != nil || string(data) != string(doc2) || tag != tag2 {
		t.Fatalf("get after change: %q %q %v", data, tag, err)
	}
	if _, _, err := s.GetObject(ctx, "22222222-2222-4222-8222-222222222222", tag2); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("other workspace: %v", err)
	}
	if err := s.DeleteObject(ctx, ws); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := s.GetObject(ctx, ws, ""); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("get after delete: %v, want ErrNotFound", err)
	}
	if err := s.DeleteObject(ctx, ws); err != nil {
		t.Fatalf("delete of a missing object: %v", err)
	}
	// A whole document through the layout: parts and index written, assembled back.
	doc := &catalog.Document{Version: catalog.SchemaVersion, WorkspaceID: ws, Connections: []catalog.Connection{
		{ID: "c1", Handle: "b", Tools: []catalog.Tool{{ExposedName: "mcp_b_t", UpstreamName: "t", InputSchema: []byte(`{"type":"object"}`)}}},
		{ID: "c2", Handle: "a", Tools: []catalog.Tool{}}}}
	if _, err := catalog.WriteDocument(ctx, s, doc); err != nil {
		t.Fatal(err)
	}
	got, _, err := catalog.ReadDocument(ctx, s, ws)
	if err != nil || len(got.Connections) != 2 || got.Connections[0].Handle != "a" || len(got.Connections[1].Tools) != 1 {
		t.Fatalf("document through the layout: %+v %v", got, err)
	}
}

// TestS3StoreGofakes3 runs the store contract against gofakes3 reached through
// AWS_ENDPOINT_URL, and checks the object key.
func TestS3StoreGofakes3(t *testing.T) {
	srv := fakeS3(t, "catalog-test")
	s3Env(t, srv.URL)
	s, err := catalog.NewS3Store(context.Background(), "catalog-test")
	if err != nil {
		t.Fatal(err)
	}
	storeContract(t, s)
	if got := catalog.IndexKey("ws"); got != "catalog/v2/workspaces/ws/index.json" {
		t.Errorf("index key %q", got)
	}
	if got := catalog.PartKey("ws", "c1", "ab12"); got != "catalog/v2/workspaces/ws/parts/c1.ab12.json" {
		t.Errorf("part key %q", got)
	}

	// A stopped endpoint is an error (the Cache then serves its last good copy).
	srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, _, err = s.GetObject(ctx, "11111111-1111-4111-8111-111111111111", "")
	if err == nil || errors.Is(err, catalog.ErrNotFound) || errors.Is(err, catalog.ErrNotModified) {
		t.Errorf("get from a stopped endpoint: %v", err)
	}
	if _, err := s.PutObject(ctx, "11111111-1111-4111-8111-111111111111", []byte("{}")); err == nil {
		t.Error("put to a stopped endpoint succeeded")
	}
	// A missing bucket is an error too, not "no document".
	srv2 := fakeS3(t, "other")
	s3Env(t, srv2.URL)
	s2, _ := catalog.NewS3Store(context.Background(), "no-such-bucket")
	if _, _, err := s2.GetObject(context.Background(), "w", ""); err == nil || errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("missing bucket: %v, want an error other than ErrNotFound", err)
	}
}

// TestS3StoreMoto runs the contract against moto_server (a real S3 API endpoint).
func TestS3StoreMoto(t *testing.T) {
	endpoint := testpeer.Moto(t)
	s3Env(t, endpoint)
	bucket := fmt.Sprintf("catalog-moto-%d", time.Now().UnixNano()) // moto may be shared by the suite
	s, err := catalog.NewS3Store(context.Background(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	storeContract(t, s)
}
