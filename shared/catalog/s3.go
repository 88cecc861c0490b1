package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// S3Store keeps the catalog's objects in an S3 bucket (aws-sdk-go-v2). The SDK honours
// AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_S3, which is how LocalStack and test endpoints are
// reached; path-style addressing is used when an endpoint override is set.
type S3Store struct {
	Client *s3.Client
	Bucket string
}

// NewS3Store loads the default AWS configuration (environment, shared files, the Lambda
// role; AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_S3 included) and returns a store on bucket.
// It fails only when the configuration cannot be loaded; the bucket is not contacted.
func NewS3Store(ctx context.Context, bucket string) (*S3Store, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("catalog: aws config: %w", err)
	}
	return NewS3StoreFromConfig(cfg, bucket), nil
}

// NewS3StoreFromConfig returns a store on bucket with an S3 client built from cfg, using
// path-style addressing whenever an endpoint override is configured (LocalStack, moto,
// gofakes3 and other S3-compatible endpoints do not serve virtual-host buckets on
// loopback).
func NewS3StoreFromConfig(cfg aws.Config, bucket string, optFns ...func(*s3.Options)) *S3Store {
	client := s3.NewFromConfig(cfg, append([]func(*s3.Options){func(o *s3.Options) {
		if cfg.BaseEndpoint != nil || o.BaseEndpoint != nil {
			o.UsePathStyle = true
		}
	}}, optFns...)...)
	return &S3Store{Client: client, Bucket: bucket}
}

// maxDocumentBytes bounds one object read from S3 (64 MiB).
const maxDocumentBytes = 64 << 20

// GetObject implements Store with a conditional GET (If-None-Match): ErrNotModified on 304 (or
// on the same ETag from an endpoint that ignores the condition), ErrNotFound for a
// missing key, any other failure wrapped.
func (s *S3Store) GetObject(ctx context.Context, key, ifNoneMatch string) ([]byte, string, error) {
	in := &s3.GetObjectInput{Bucket: &s.Bucket, Key: aws.String(key)}
	if ifNoneMatch != "" {
		in.IfNoneMatch = aws.String(ifNoneMatch)
	}
	out, err := s.Client.GetObject(ctx, in)
	if err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			switch ae.ErrorCode() {
			case "NoSuchKey", "NotFound":
				return nil, "", ErrNotFound
			case "NoSuchBucket":
				// A missing bucket is a misconfiguration, not an empty catalog: report it
				// so that the Cache keeps serving its last good copy.
				return nil, "", fmt.Errorf("catalog: s3 get: bucket %q: %w", s.Bucket, err)
			}
		}
		var re *smithyhttp.ResponseError
		if errors.As(err, &re) {
			switch re.HTTPStatusCode() {
			case http.StatusNotModified:
				return nil, ifNoneMatch, ErrNotModified
			case http.StatusNotFound:
				return nil, "", ErrNotFound
			}
		}
		return nil, "", fmt.Errorf("catalog: s3 get: %w", err)
	}
	defer out.Body.Close()
	etag := aws.ToString(out.ETag)
	if ifNoneMatch != "" && etag == ifNoneMatch {
		// An endpoint that ignores If-None-Match answered 200 with the same object.
		return nil, etag, ErrNotModified
	}
	data, err := io.ReadAll(io.LimitReader(out.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("catalog: s3 read: %w", err)
	}
	if len(data) > maxDocumentBytes {
		return nil, "", fmt.Errorf("catalog: s3 object %s is over %d bytes", key, maxDocumentBytes)
	}
	return data, etag, nil
}

// PutObject implements Store: one S3 PutObject (atomic per object), returning the new
// ETag.
func (s *S3Store) PutObject(ctx context.Context, key string, data []byte) (string, error) {
	out, err := s.Client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &s.Bucket, Key: aws.String(key), Body: bytes.NewReader(data),
		ContentType: aws.String("application/json"),
	})
	if err != nil {
		return "", fmt.Errorf("catalog: s3 put: %w", err)
	}
	return aws.ToString(out.ETag), nil
}

// DeleteObject implements Store: one S3 DeleteObject (S3 answers success for a missing
// key).
func (s *S3Store) DeleteObject(ctx context.Context, key string) error {
	if _, err := s.Client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.Bucket, Key: aws.String(key)}); err != nil {
		return fmt.Errorf("catalog: s3 delete: %w", err)
	}
	return nil
}
