package s3

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/strato-io/strato/client"
)

// MetaCredentials look access keys up in meta (`strato admin s3 key
// create`), where every gateway of the cluster finds them. An answer is
// kept for a few seconds, so that a gateway asks meta about a key at most
// once per TTL whatever its request rate, and a revoked key is refused
// within TTL. Concurrent lookups of one key share one call. Safe for
// concurrent use.
type MetaCredentials struct {
	opts MetaCredentialsOptions

	mu       sync.Mutex
	cache    map[string]cachedSecret
	inflight map[string]*lookup
}

// MetaCredentialsOptions configure MetaCredentials.
type MetaCredentialsOptions struct {
	// Client reaches meta. Required.
	Client *client.Client
	// TTL is how long a secret found is used before meta is asked again:
	// the longest a revoked key keeps working. Default: 5 s.
	TTL time.Duration
	// NegativeTTL is how long an unknown access key is remembered as
	// unknown: the longest a new key may be refused. Default: 1 s.
	NegativeTTL time.Duration
	// MaxEntries bounds the cache (forged access keys cannot grow it past
	// this). Default: 10,000.
	MaxEntries int
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// EnsureDefaults fills in the defaults.
func (o *MetaCredentialsOptions) EnsureDefaults() {
	if o.TTL == 0 {
		o.TTL = 5 * time.Second
	}
	if o.NegativeTTL == 0 {
		o.NegativeTTL = time.Second
	}
	if o.MaxEntries == 0 {
		o.MaxEntries = 10000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Validate checks the options.
func (o *MetaCredentialsOptions) Validate() error {
	if o.Client == nil {
		return errors.New("s3: MetaCredentialsOptions.Client is required")
	}
	if o.TTL < 0 || o.NegativeTTL < 0 || o.MaxEntries < 0 {
		return errors.New("s3: MetaCredentialsOptions: TTLs and MaxEntries must not be negative")
	}
	return nil
}

type cachedSecret struct {
	secret  string
	user    string // the key's strato user
	found   bool
	expires time.Time
}

type lookup struct {
	done   chan struct{}
	secret string
	user   string
	err    error
}

// NewMetaCredentials returns credentials looked up in meta.
func NewMetaCredentials(opts MetaCredentialsOptions) (*MetaCredentials, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &MetaCredentials{opts: opts, cache: map[string]cachedSecret{}, inflight: map[string]*lookup{}}, nil
}

// Secret implements Credentials.
func (m *MetaCredentials) Secret(ctx context.Context, accessKey string) (string, error) {
	secret, _, err := m.lookup(ctx, accessKey)
	return secret, err
}

// KeyUser implements KeyUsers: the strato user the key belongs to.
func (m *MetaCredentials) KeyUser(ctx context.Context, accessKey string) (string, error) {
	_, user, err := m.lookup(ctx, accessKey)
	return user, err
}

func (m *MetaCredentials) lookup(ctx context.Context, accessKey string) (secret, user string, err error) {
	m.mu.Lock()
	if e, ok := m.cache[accessKey]; ok && m.opts.Now().Before(e.expires) {
		m.mu.Unlock()
		if !e.found {
			return "", "", ErrNoSuchAccessKey
		}
		return e.secret, e.user, nil
	}
	l, running := m.inflight[accessKey]
	if !running {
		l = &lookup{done: make(chan struct{})}
		m.inflight[accessKey] = l
	}
	m.mu.Unlock()
	if running {
		select {
		case <-l.done:
			return l.secret, l.user, l.err
		case <-ctx.Done():
			return "", "", ctx.Err()
		}
	}
	key, secret, err := m.opts.Client.S3Key(context.WithoutCancel(ctx), accessKey)
	user = key.GetUser()
	found := err == nil
	if errors.Is(err, client.ErrNotFound) {
		err = ErrNoSuchAccessKey
	}
	l.secret, l.user, l.err = secret, user, err
	m.mu.Lock()
	delete(m.inflight, accessKey)
	if found || errors.Is(err, ErrNoSuchAccessKey) {
		ttl := m.opts.TTL
		if !found {
			ttl = m.opts.NegativeTTL
		}
		m.put(accessKey, cachedSecret{secret: secret, user: user, found: found, expires: m.opts.Now().Add(ttl)})
	}
	m.mu.Unlock()
	close(l.done)
	return secret, user, err
}

// put caches an answer, making room first: the expired entries go, and if
// that is not enough, all of them (rare: more live keys than MaxEntries).
func (m *MetaCredentials) put(accessKey string, e cachedSecret) {
	if len(m.cache) >= m.opts.MaxEntries {
		now := m.opts.Now()
		for k, v := range m.cache {
			if !now.Before(v.expires) {
				delete(m.cache, k)
			}
		}
		if len(m.cache) >= m.opts.MaxEntries {
			clear(m.cache)
		}
	}
	if m.opts.MaxEntries > 0 {
		m.cache[accessKey] = e
	}
}

// ChainCredentials ask each of their credentials in turn: the first that
// knows the access key answers.
type ChainCredentials []Credentials

// KeyUser implements KeyUsers: the user the first credentials that know
// the key and implement it say.
func (c ChainCredentials) KeyUser(ctx context.Context, accessKey string) (string, error) {
	for _, cr := range c {
		if _, err := cr.Secret(ctx, accessKey); errors.Is(err, ErrNoSuchAccessKey) {
			continue
		} else if err != nil {
			return "", err
		}
		if ku, ok := cr.(KeyUsers); ok {
			return ku.KeyUser(ctx, accessKey)
		}
		return "", nil
	}
	return "", nil
}

// Secret implements Credentials.
func (c ChainCredentials) Secret(ctx context.Context, accessKey string) (string, error) {
	for _, cr := range c {
		s, err := cr.Secret(ctx, accessKey)
		if !errors.Is(err, ErrNoSuchAccessKey) {
			return s, err
		}
	}
	return "", ErrNoSuchAccessKey
}
