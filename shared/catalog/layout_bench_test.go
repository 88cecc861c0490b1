package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// scaleDoc is workspace ws's document of conns connections × tools tools, each tool with
// a realistic description and input schema (the shape of the gateway's scale benchmark).
func scaleDoc(ws string, conns, tools int) *catalog.Document {
	doc := &catalog.Document{Version: catalog.SchemaVersion, WorkspaceID: ws, GeneratedAt: time.Now().UTC()}
	for i := range conns {
		c := catalog.Connection{ID: fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), Name: fmt.Sprintf("Server %d", i),
			Handle: fmt.Sprintf("s%05d", i), Scope: "workspace", Source: "manual", URL: fmt.Sprintf("http://127.0.0.1:9/s/%d", i),
			TransportType: "streamable-http", UpdatedAt: time.Now().UTC(), Tools: []catalog.Tool{}}
		for j := range tools {
			name := fmt.Sprintf("tool_%d", j)
			c.Tools = append(c.Tools, catalog.Tool{ExposedName: "mcp_" + c.Handle + "_" + name, UpstreamName: name, Title: "Tool " + name,
				Description: "Does thing number " + name + " to the resource identified by id, returning the updated resource as JSON.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"resource id"},` +
					`"limit":{"type":"integer","minimum":1,"maximum":100},"query":{"type":"string","maxLength":200}},"required":["id"]}`),
				Annotations: json.RawMessage(`{"readOnlyHint":true}`)})
		}
		doc.Connections = append(doc.Connections, c)
	}
	return doc
}

// benchLayout measures, at 1,000 connections × 20 tools (20,000 tools), a cold read
// (Load with no previous snapshot: the index and every part, decoded and indexed) of
// standalone parts and of a packed workspace (after a whole rebuild: the index and one
// pack), the v1 single document for comparison, and a warm revalidation after one
// connection changed (the index and that one part). It
// reports the stored bytes: index-B (the index alone), parts-B (all parts), and the
// single-document size (doc-B) of the v1 layout for comparison.
func benchLayout(b *testing.B, store catalog.Store) {
	ctx := context.Background()
	const ws = "b0000000-0000-4000-8000-0000000000b0"
	doc := scaleDoc(ws, 1000, 20)
	if _, err := catalog.WriteDocument(ctx, store, doc); err != nil {
		b.Fatal(err)
	}
	index, _, err := store.GetObject(ctx, catalog.IndexKey(ws), "")
	if err != nil {
		b.Fatal(err)
	}
	whole, _ := json.Marshal(doc)
	parts := 0
	for i := range doc.Connections {
		p, _ := json.Marshal(&doc.Connections[i])
		parts += len(p)
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			s, err := catalog.Load(ctx, store, ws, nil)
			if err != nil || len(s.Doc.Connections) != 1000 {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(index)), "index-B")
		b.ReportMetric(float64(parts), "parts-B")
		b.ReportMetric(float64(len(whole)), "doc-B")
	})
	b.Run("cold-packed", func(b *testing.B) { // after a whole rebuild: the index and one pack
		if _, err := catalog.WritePacked(ctx, store, doc); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			s, err := catalog.Load(ctx, store, ws, nil)
			if err != nil || len(s.Doc.Connections) != 1000 {
				b.Fatal(err)
			}
		}
	})
	b.Run("v1-whole-document", func(b *testing.B) { // the previous layout's cold read, for comparison
		key := "catalog/v1/workspaces/" + ws + ".json"
		if _, err := store.PutObject(ctx, key, whole); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			data, _, err := store.GetObject(ctx, key, "")
			if err != nil {
				b.Fatal(err)
			}
			d, err := catalog.Decode(data)
			if err != nil {
				b.Fatal(err)
			}
			catalog.NewSnapshot(d, "v1")
		}
	})
	b.Run("one-changed", func(b *testing.B) {
		prev, err := catalog.Load(ctx, store, ws, nil)
		if err != nil {
			b.Fatal(err)
		}
		round := 0
		for b.Loop() {
			b.StopTimer()
			round++
			doc.Connections[500].Name = fmt.Sprintf("Server renamed %d", round)
			if _, err := catalog.WriteDocument(ctx, store, doc); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			s, err := catalog.Load(ctx, store, ws, prev)
			if err != nil || s == prev {
				b.Fatal("no new snapshot", err)
			}
			prev = s
		}
	})
}

// BenchmarkLayoutDisk is benchLayout on the local disk store.
//
//	go test -run '^$' -bench Layout -benchtime 20x ./shared/catalog
func BenchmarkLayoutDisk(b *testing.B) { benchLayout(b, &catalog.DiskStore{Dir: b.TempDir()}) }

// BenchmarkLayoutS3 is benchLayout on moto_server's S3 API over loopback (a real S3
// endpoint, but without S3's per-request latency: in AWS a cold read is bound by ≈ 1,000
// GETs at 32 at a time).
func BenchmarkLayoutS3(b *testing.B) {
	endpoint := testpeer.Moto(b)
	b.Setenv("AWS_ENDPOINT_URL", endpoint)
	b.Setenv("AWS_ACCESS_KEY_ID", "test")
	b.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	b.Setenv("AWS_REGION", "us-east-1")
	b.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	bucket := fmt.Sprintf("catalog-bench-%d", time.Now().UnixNano())
	s, err := catalog.NewS3Store(context.Background(), bucket)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		b.Fatal(err)
	}
	benchLayout(b, s)
}
