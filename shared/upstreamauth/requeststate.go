package upstreamauth

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentpack/gateway/shared/derrors"
)

// The gateway's requestState (MCP 2026-07-28 "Multi Round-Trip Requests"): when a caller
// must authorize a connection, the gateway answers an InputRequiredResult carrying a
// URL-mode elicitation and a requestState the client echoes on its retry. The state is the
// gateway's only memory of that exchange (any instance serves the retry), so it is sealed
// with AEAD and bound to the request, as that chapter's server requirements say: the
// authenticated principal, a short expiry, and the originating request (method, name and
// a digest of the salient params). The binding is the AEAD's additional data, so a state
// presented by another caller, for another connection or with other arguments fails to
// open; the expiry is inside the sealed payload.

// StatePrefix starts every requestState the gateway issues; a requestState without it is
// an upstream's and passes through to the upstream unopened.
const StatePrefix = "agentpack.rs1."

// RequestStateTTL is how long a requestState is accepted: long enough to sign in and consent in a
// browser, short enough to bound replay (MRTR: "a short expiry").
const RequestStateTTL = 10 * time.Minute

// ErrRequestState is wrapped by every OpenRequestState failure: not the gateway's format,
// tampered, bound to another caller or request, or expired. The message is safe to show.
var ErrRequestState = errors.New("requestState failed verification")

// Binding is what a requestState is bound to. Params is the request's params object as the
// client sent it; its salient part (everything but _meta, requestState, inputResponses and
// task) is digested in canonical form, so a retry that re-encodes the same arguments
// (other spacing or member order) still matches.
type Binding struct {
	Subject      string
	Workspace    string
	ConnectionID string
	Method       string // tools/call, prompts/get, resources/read
	Name         string // the tool or prompt name the client called, or the resource URI
	Params       json.RawMessage
}

// aad is the binding as AEAD additional data.
func (b Binding) aad() ([]byte, error) {
	d, err := paramsDigest(b.Params)
	if err != nil {
		return nil, err
	}
	parts := []string{"agentpack requestState v1", b.Subject, b.Workspace, b.ConnectionID, b.Method, b.Name, hex.EncodeToString(d)}
	return []byte(strings.Join(parts, "\x00")), nil
}

// paramsDigest is sha256 of params without the members that differ between a request and
// its retry (_meta, requestState, inputResponses) or that the gateway strips (task), in
// encoding/json's canonical form (sorted keys, numbers as written).
func paramsDigest(params json.RawMessage) ([]byte, error) {
	var m map[string]any
	if len(bytes.TrimSpace(params)) > 0 && string(params) != "null" {
		dec := json.NewDecoder(bytes.NewReader(params))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("params is not a JSON object: %w", err)
		}
	}
	for _, k := range []string{"_meta", "requestState", "inputResponses", "task"} {
		delete(m, k)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(b)
	return h[:], nil
}

// SealRequestState returns a requestState bound to b that expires after RequestStateTTL.
func (s *Service) SealRequestState(ctx context.Context, b Binding) (_ string, err error) {
	defer derrors.Wrap(&err, "upstreamauth: seal request state")
	aad, err := b.aad()
	if err != nil {
		return "", err
	}
	pt := binary.BigEndian.AppendUint64(nil, uint64(s.now().Add(RequestStateTTL).Unix()))
	sealed, err := s.stateSealer().Seal(ctx, pt, aad)
	if err != nil {
		return "", fmt.Errorf("upstreamauth: seal requestState: %w", err)
	}
	return StatePrefix + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// OpenRequestState verifies a requestState the gateway issued against the retry's binding
// b and its expiry; every failure wraps ErrRequestState.
func (s *Service) OpenRequestState(ctx context.Context, state string, b Binding) (err error) {
	defer derrors.Wrap(&err, "upstreamauth: open request state")
	raw, ok := strings.CutPrefix(state, StatePrefix)
	if !ok {
		return fmt.Errorf("%w: not issued by the gateway", ErrRequestState)
	}
	sealed, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return fmt.Errorf("%w: not base64url", ErrRequestState)
	}
	aad, err := b.aad()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRequestState, err)
	}
	pt, err := s.stateSealer().Open(ctx, sealed, aad)
	if err != nil {
		return fmt.Errorf("%w: it was made for another caller or request, or altered", ErrRequestState)
	}
	if len(pt) != 8 {
		return fmt.Errorf("%w: unknown payload", ErrRequestState)
	}
	if exp := time.Unix(int64(binary.BigEndian.Uint64(pt)), 0); !s.now().Before(exp) {
		return fmt.Errorf("%w: it expired; send the request again without it", ErrRequestState)
	}
	return nil
}

// IsGatewayState reports whether state is one the gateway issued (by its prefix only).
func IsGatewayState(state string) bool { return strings.HasPrefix(state, StatePrefix) }

// stateSealer is the sealer of the Service's DBStore (the deployment's KMS key or local key
// file, so that every instance opens what another sealed), or, for other stores (tests), a
// key of this process.
func (s *Service) stateSealer() Sealer {
	if d, ok := s.store.(*DBStore); ok && d.sealer != nil {
		return d.sealer
	}
	processSealerOnce.Do(func() {
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		b, _ := aes.NewCipher(key)
		gcm, _ := cipher.NewGCM(b)
		processSealer = &envelope{w: &fileWrapper{kek: gcm}, now: time.Now}
	})
	return processSealer
}

var (
	processSealerOnce sync.Once
	processSealer     Sealer
)
