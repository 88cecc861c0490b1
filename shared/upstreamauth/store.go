package upstreamauth

import (
	"context"
	"sync"
)

// Store keeps pending authorizations and grants. Implementations seal the secrets they
// persist (Pending.Verifier, Endpoint.ClientSecret, Grant tokens); MemoryStore keeps them in
// process memory only. Every method is safe for concurrent use.
type Store interface {
	// PendingPut stores p under p.State (and p.Link when set), replacing every pending
	// authorization of the same caller (workspace and subject) for the same connection: a
	// caller's repeated unauthorized calls keep one pending row, the newest link.
	PendingPut(ctx context.Context, p *Pending) error
	// PendingByLink returns the pending authorization of consent link id link without
	// taking it (ErrStateUnknown when none), its BindingHash filled. A link a newer one of
	// the same caller replaced (PendingPut) is returned with Replaced set and only Key.
	// ConnectionID, Caller and ExpiresAt filled, until it would have expired.
	PendingByLink(ctx context.Context, link string) (*Pending, error)
	// PendingBind records bindingHash (SHA-256 of the browser binding) on the pending
	// authorization of link (ErrStateUnknown when gone).
	PendingBind(ctx context.Context, link string, bindingHash []byte) error
	// PendingTake removes and returns the pending authorization stored under state
	// (single use: a second take of the same state is ErrStateUnknown), its BindingHash filled.
	PendingTake(ctx context.Context, state string) (*Pending, error)
	// RegistrationGet returns the client registered dynamically for connectionID with the
	// authorization server issuer (nil, nil when none): one registration per connection and
	// authorization server, reused by every member.
	RegistrationGet(ctx context.Context, connectionID, issuer string) (*Endpoint, error)
	// RegistrationPut stores ep (its ClientID, ClientSecret, AuthMethod) as that client.
	RegistrationPut(ctx context.Context, connectionID, issuer string, ep *Endpoint) error
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
	// replaced: consent link → the flow a newer link of the same caller replaced.
	replaced map[string]Pending
	grants   map[Key]Grant
	regs     map[[2]string]Endpoint
}

var _ Store = (*MemoryStore)(nil)

// PendingPut implements Store.
func (m *MemoryStore) PendingPut(_ context.Context, p *Pending) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending == nil {
		m.pending = map[string]Pending{}
	}
	for st, q := range m.pending {
		if q.Key.ConnectionID == p.Key.ConnectionID && q.Caller == p.Caller {
			delete(m.pending, st)
			if q.Link != "" {
				if m.replaced == nil {
					m.replaced = map[string]Pending{}
				}
				m.replaced[q.Link] = Pending{Key: Key{ConnectionID: q.Key.ConnectionID}, Caller: q.Caller, ExpiresAt: q.ExpiresAt, Replaced: true}
			}
		}
	}
	m.pending[p.State] = *p
	return nil
}

// PendingByLink implements Store.
func (m *MemoryStore) PendingByLink(_ context.Context, link string) (*Pending, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.pending {
		if link != "" && p.Link == link {
			return &p, nil
		}
	}
	if p, ok := m.replaced[link]; ok && link != "" {
		return &p, nil
	}
	return nil, ErrStateUnknown
}

// PendingBind implements Store.
func (m *MemoryStore) PendingBind(_ context.Context, link string, bindingHash []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for st, p := range m.pending {
		if link != "" && p.Link == link {
			p.BindingHash = bindingHash
			m.pending[st] = p
			return nil
		}
	}
	return ErrStateUnknown
}

// RegistrationGet implements Store.
func (m *MemoryStore) RegistrationGet(_ context.Context, connectionID, issuer string) (*Endpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ep, ok := m.regs[[2]string{connectionID, issuer}]
	if !ok {
		return nil, nil
	}
	return &ep, nil
}

// RegistrationPut implements Store.
func (m *MemoryStore) RegistrationPut(_ context.Context, connectionID, issuer string, ep *Endpoint) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.regs == nil {
		m.regs = map[[2]string]Endpoint{}
	}
	m.regs[[2]string{connectionID, issuer}] = *ep
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
