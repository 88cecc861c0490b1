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

// S3Store keeps documents in an S3 bucket (aws-sdk-go-v2). The SDK honours
// AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_S3, which is how LocalStack and test endpoints are
// reached; path-style addressing is used when an endpoint override is set.
type S3Store struct {
	Client *s3.Client
	Bucket string
}

// NewS3Store loads the default AWS configuration and returns a store on bucket.
func NewS3Store(ctx context.Context, bucket string) (*S3Store, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("catalog: aws config: %w", err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if cfg.BaseEndpoint != nil || o.BaseEndpoint != nil {
			o.UsePathStyle = true
		}
	})
	return &S3Store{Client: client, Bucket: bucket}, nil
}

// Get implements Store with a conditional GET (If-None-Match).
func (s *S3Store) Get(ctx context.Context, ws, ifNoneMatch string) ([]byte, string, error) {
	in := &s3.GetObjectInput{Bucket: &s.Bucket, Key: aws.String(Key(ws))}
	if ifNoneMatch != "" {
		in.IfNoneMatch = aws.String(ifNoneMatch)
	}
	out, err := s.Client.GetObject(ctx, in)
	if err != nil {
		var re *smithyhttp.ResponseError
		if errors.As(err, &re) {
			switch re.HTTPStatusCode() {
			case http.StatusNotModified:
				return nil, ifNoneMatch, ErrNotModified
			case http.StatusNotFound:
				return nil, "", ErrNotFound
			}
		}
		var ae smithy.APIError
		if errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound") {
			return nil, "", ErrNotFound
		}
		return nil, "", fmt.Errorf("catalog: s3 get: %w", err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(io.LimitReader(out.Body, 64<<20))
	if err != nil {
		return nil, "", fmt.Errorf("catalog: s3 read: %w", err)
	}
	return data, aws.ToString(out.ETag), nil
}

// Put implements Store.
func (s *S3Store) Put(ctx context.Context, ws string, data []byte) (string, error) {
	out, err := s.Client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &s.Bucket, Key: aws.String(Key(ws)), Body: bytes.NewReader(data),
		ContentType: aws.String("application/json"),
	})
	if err != nil {
		return "", fmt.Errorf("catalog: s3 put: %w", err)
	}
	return aws.ToString(out.ETag), nil
}
