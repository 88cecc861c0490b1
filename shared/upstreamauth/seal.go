package upstreamauth

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// Sealer encrypts secrets for storage (envelope encryption): each sealed value carries its
// data key wrapped by a key-encryption key that never leaves its keeper (a local key file,
// or AWS KMS). aad binds a sealed value to where it is stored (e.g. connection and
// subject): opening it with other aad fails.
type Sealer interface {
	Seal(ctx context.Context, plaintext, aad []byte) ([]byte, error)
	Open(ctx context.Context, sealed, aad []byte) ([]byte, error)
}

// ErrSealed is wrapped by every Open failure (wrong key, wrong aad, tampered or truncated
// value).
var ErrSealed = errors.New("upstreamauth: sealed value cannot be opened")

// Sealed value layout, version 1:
//
//	0x01 | uint16 len(wrapped data key) | wrapped data key | 12-byte nonce | AES-256-GCM(plaintext, aad)
const sealVersion = 1

// keyWrapper wraps and unwraps 32-byte data keys.
type keyWrapper interface {
	newKey(ctx context.Context) (plain, wrapped []byte, err error)
	unwrap(ctx context.Context, wrapped []byte) ([]byte, error)
}

// envelope is the Sealer over a keyWrapper. Data keys are reused for up to dataKeyTTL and
// unwrapped ones cached (bounded), so that a token read or write costs no KMS call on the
// hot path (the AWS Encryption SDK's data key caching, in small).
type envelope struct {
	w   keyWrapper
	now func() time.Time

	mu         sync.Mutex
	cur        []byte // plaintext data key for Seal
	curWrapped []byte
	curUntil   time.Time
	cache      map[[32]byte][]byte // sha256(wrapped) → plaintext data key
}

const (
	dataKeyTTL     = 5 * time.Minute
	dataKeyCacheN  = 1024
	maxWrappedSize = 1024
)

func (e *envelope) Seal(ctx context.Context, plaintext, aad []byte) ([]byte, error) {
	e.mu.Lock()
	if e.cur == nil || !e.now().Before(e.curUntil) {
		e.mu.Unlock()
		plain, wrapped, err := e.w.newKey(ctx)
		if err != nil {
			return nil, fmt.Errorf("upstreamauth: new data key: %w", err)
		}
		e.mu.Lock()
		e.cur, e.curWrapped, e.curUntil = plain, wrapped, e.now().Add(dataKeyTTL)
	}
	key, wrapped := e.cur, e.curWrapped
	e.mu.Unlock()
	gcm, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 3+len(wrapped)+gcm.NonceSize()+len(plaintext)+gcm.Overhead())
	out = append(out, sealVersion)
	out = binary.BigEndian.AppendUint16(out, uint16(len(wrapped)))
	out = append(out, wrapped...)
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out = append(out, nonce...)
	return gcm.Seal(out, nonce, plaintext, aad), nil
}

func (e *envelope) Open(ctx context.Context, sealed, aad []byte) ([]byte, error) {
	if len(sealed) < 3 || sealed[0] != sealVersion {
		return nil, fmt.Errorf("%w: unknown format", ErrSealed)
	}
	n := int(binary.BigEndian.Uint16(sealed[1:3]))
	if n == 0 || n > maxWrappedSize || len(sealed) < 3+n+12 {
		return nil, fmt.Errorf("%w: truncated", ErrSealed)
	}
	wrapped, rest := sealed[3:3+n], sealed[3+n:]
	h := sha256.Sum256(wrapped)
	e.mu.Lock()
	key := e.cache[h]
	e.mu.Unlock()
	if key == nil {
		var err error
		if key, err = e.w.unwrap(ctx, wrapped); err != nil {
			return nil, fmt.Errorf("%w: data key: %w", ErrSealed, err)
		}
		e.mu.Lock()
		if e.cache == nil || len(e.cache) >= dataKeyCacheN {
			e.cache = map[[32]byte][]byte{}
		}
		e.cache[h] = key
		e.mu.Unlock()
	}
	gcm, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	ns := gcm.NonceSize()
	pt, err := gcm.Open(nil, rest[:ns], rest[ns:], aad)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSealed, err)
	}
	return pt, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("%w: data key is %d bytes", ErrSealed, len(key))
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// ---- local key file ----

// fileWrapper wraps data keys with AES-256-GCM under a 32-byte key-encryption key read from
// a file (local development; the key file lives under the ignored .state folder).
type fileWrapper struct{ kek cipher.AEAD }

var kekAAD = []byte("agentpack upstream-auth data key")

func (f *fileWrapper) newKey(context.Context) ([]byte, []byte, error) {
	plain := make([]byte, 32)
	if _, err := rand.Read(plain); err != nil {
		return nil, nil, err
	}
	nonce := make([]byte, f.kek.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, nil, err
	}
	return plain, f.kek.Seal(nonce, nonce, plain, kekAAD), nil
}

func (f *fileWrapper) unwrap(_ context.Context, wrapped []byte) ([]byte, error) {
	ns := f.kek.NonceSize()
	if len(wrapped) < ns {
		return nil, errors.New("wrapped key truncated")
	}
	return f.kek.Open(nil, wrapped[:ns], wrapped[ns:], kekAAD)
}

// NewKeyFileSealer returns a Sealer whose key-encryption key is the 32 bytes in path,
// creating the file (mode 0600, its directory 0700) with a random key when it does not
// exist. A file of another size is an error.
func NewKeyFileSealer(path string) (Sealer, error) {
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return NewKeyFileSealer(path) // another process created it first
		}
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(key); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("upstreamauth: key file %s holds %d bytes, want 32", path, len(key))
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(b)
	if err != nil {
		return nil, err
	}
	return &envelope{w: &fileWrapper{kek: gcm}, now: time.Now}, nil
}

// ---- AWS KMS ----

// KMSAPI is the part of the KMS client the sealer uses (*kms.Client satisfies it).
type KMSAPI interface {
	GenerateDataKey(ctx context.Context, in *kms.GenerateDataKeyInput, opts ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error)
	Decrypt(ctx context.Context, in *kms.DecryptInput, opts ...func(*kms.Options)) (*kms.DecryptOutput, error)
}

type kmsWrapper struct {
	c     KMSAPI
	keyID string
}

// kmsContext is the KMS encryption context of every data key: it shows in CloudTrail and
// lets the key policy restrict use to this purpose (kms:EncryptionContext:purpose).
var kmsContext = map[string]string{"purpose": "agentpack-upstream-auth"}

func (k *kmsWrapper) newKey(ctx context.Context) ([]byte, []byte, error) {
	out, err := k.c.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: aws.String(k.keyID),
		KeySpec: kmstypes.DataKeySpecAes256, EncryptionContext: kmsContext})
	if err != nil {
		return nil, nil, err
	}
	return out.Plaintext, out.CiphertextBlob, nil
}

func (k *kmsWrapper) unwrap(ctx context.Context, wrapped []byte) ([]byte, error) {
	out, err := k.c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: bytes.Clone(wrapped), KeyId: aws.String(k.keyID),
		EncryptionContext: kmsContext})
	if err != nil {
		return nil, err
	}
	return out.Plaintext, nil
}

// NewKMSSealer returns a Sealer whose data keys come from AWS KMS key keyID
// (GenerateDataKey AES_256, Decrypt; encryption context purpose=agentpack-upstream-auth).
// The function needs kms:GenerateDataKey and kms:Decrypt on that key, nothing else.
func NewKMSSealer(c KMSAPI, keyID string) Sealer {
	return &envelope{w: &kmsWrapper{c: c, keyID: keyID}, now: time.Now}
}
