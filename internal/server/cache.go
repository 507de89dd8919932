package server

import (
	"container/list"
	"context"
	"os"
	"sync"
	"time"

	"github.com/ioshape/ioshape/internal/analysis"
	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/profile"
	"github.com/ioshape/ioshape/internal/report"
)

// cache keeps recent analyses, keyed by the trace file's path, size and
// modification time, so a report opened twice is analysed once. One
// analysis runs at a time: they are CPU-bound and the daemon shares the
// machine with whatever is being measured.
type cache struct {
	mu    sync.Mutex
	work  sync.Mutex
	max   int
	order *list.List // of *cacheEntry, most recent first
	byKey map[cacheKey]*list.Element
}

type cacheKey struct {
	path  string
	size  int64
	mtime time.Time
}

type cacheEntry struct {
	key cacheKey
	a   *report.Analysis
	// The report page, rendered once per trace version with pageNonce
	// where each response puts its own nonce: a burst of views of one
	// report costs one render.
	once sync.Once
	page []byte
}

// pageNonce stands, in a cached page, for the nonce of the response that
// serves it (a CSP nonce is new for every response).
const pageNonce = "ioshapeNoncePlaceholder0"

func newCache(max int) *cache {
	return &cache{max: max, order: list.New(), byKey: map[cacheKey]*list.Element{}}
}

func keyOf(path string) (cacheKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return cacheKey{}, err
	}
	return cacheKey{path, fi.Size(), fi.ModTime()}, nil
}

// peek returns a cached entry without computing one.
func (c *cache) peek(path string) *cacheEntry {
	k, err := keyOf(path)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*cacheEntry)
	}
	return nil
}

// entry returns the cached entry of the trace at path, analysing it if
// needed; fresh says the analysis was made now.
func (c *cache) entry(ctx context.Context, path string) (e *cacheEntry, fresh bool, err error) {
	if e := c.peek(path); e != nil {
		return e, false, nil
	}
	c.work.Lock()
	defer c.work.Unlock()
	if e := c.peek(path); e != nil { // computed while we waited
		return e, false, nil
	}
	k, err := keyOf(path)
	if err != nil {
		return nil, false, err
	}
	t, err := analysis.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer t.Close()
	a, err := analysis.Analyze(ctx, t, profile.Options{}, classify.Options{}, nil, nil)
	if err != nil {
		return nil, false, err
	}
	e = &cacheEntry{key: k, a: a}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byKey[k] = c.order.PushFront(e)
	for c.order.Len() > c.max {
		el := c.order.Back()
		delete(c.byKey, el.Value.(*cacheEntry).key)
		c.order.Remove(el)
	}
	return e, true, nil
}

// get returns the analysis of the trace at path, computing it if needed;
// fresh says it was made now.
func (c *cache) get(ctx context.Context, path string) (*report.Analysis, bool, error) {
	e, fresh, err := c.entry(ctx, path)
	if err != nil {
		return nil, false, err
	}
	return e.a, fresh, nil
}

// page returns the trace's report page as render makes it from its
// analysis, rendered once per trace version (path, size, modification
// time) however many ask at once; fresh says the analysis was made now.
func (c *cache) page(ctx context.Context, path string, render func(*report.Analysis) []byte) (page []byte, a *report.Analysis, fresh bool, err error) {
	e, fresh, err := c.entry(ctx, path)
	if err != nil {
		return nil, nil, false, err
	}
	e.once.Do(func() { e.page = render(e.a) })
	return e.page, e.a, fresh, nil
}
