package upstreamauth

import (
	"context"
	"sync"
)

// Store keeps pending authorizations and grants. Implementations seal the secrets they
// persist (Pending.Verifier, Endpoint.ClientSecret, Grant tokens); MemoryStore keeps them in
// process memory only. Every method is safe for concurrent use.
type Store interface {
	// PendingPut stores p under p.State.
	PendingPut(ctx context.Context, p *Pending) error
	// PendingTake removes and returns the pending authorization stored under state
	// (single use: a second take of the same state is ErrStateUnknown).
	PendingTake(ctx context.Context, state string) (*Pending, error)
	// GrantGet returns the grant stored under k, or ErrNoGrant.
	GrantGet(ctx context.Context, k Key) (*Grant, error)
	// GrantPut stores g under g.Key, replacing any grant there.
	GrantPut(ctx context.Context, g *Grant) error
	// GrantDelete removes every grant of connectionID (all subjects) and returns them (for
	// revocation); none is not an error.
	GrantDelete(ctx context.Context, connectionID string) ([]*Grant, error)
}

// Locker is a Store that can serialise work on a key across processes. WithLock runs fn
// holding the lock, with a Store that works under it (the Postgres store: a transaction with
// an advisory lock; fn's reads and writes commit when fn returns nil).
type Locker interface {
	WithLock(ctx context.Context, key string, fn func(Store) error) error
}

// MemoryStore is a Store in process memory: for the conformance client, tests and single
// process tools. The zero value is ready to use.
type MemoryStore struct {
	lock    sync.Mutex // WithLock
	mu      sync.Mutex
	pending map[string]Pending
	grants  map[Key]Grant
}

var _ Store = (*MemoryStore)(nil)

// PendingPut implements Store.
func (m *MemoryStore) PendingPut(_ context.Context, p *Pending) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending == nil {
		m.pending = map[string]Pending{}
	}
	m.pending[p.State] = *p
	return nil
}

// PendingTake implements Store.
func (m *MemoryStore) PendingTake(_ context.Context, state string) (*Pending, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pending[state]
	if !ok {
		return nil, ErrStateUnknown
	}
	delete(m.pending, state)
	return &p, nil
}

// GrantGet implements Store.
func (m *MemoryStore) GrantGet(_ context.Context, k Key) (*Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.grants[k]
	if !ok {
		return nil, ErrNoGrant
	}
	return &g, nil
}

// GrantPut implements Store.
func (m *MemoryStore) GrantPut(_ context.Context, g *Grant) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.grants == nil {
		m.grants = map[Key]Grant{}
	}
	m.grants[g.Key] = *g
	return nil
}

// GrantDelete implements Store.
func (m *MemoryStore) GrantDelete(_ context.Context, connectionID string) ([]*Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Grant
	for k, g := range m.grants {
		if k.ConnectionID == connectionID {
			out = append(out, &g)
			delete(m.grants, k)
		}
	}
	return out, nil
}

// WithLock implements Locker with one process-wide mutex (enough for one process).
func (m *MemoryStore) WithLock(_ context.Context, _ string, fn func(Store) error) error {
	m.lock.Lock()
	defer m.lock.Unlock()
	return fn(m)
}
