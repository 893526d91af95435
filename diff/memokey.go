package diff

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"sync"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// MemoKey names the inputs of one comparison by a Differ whose options do
// not change: a SHA-256 of desired's content (every field, maps in key
// order) and live's uid and resourceVersion. The API server gives a stored
// object a new resourceVersion on every change, so two comparisons with
// equal keys compare the same objects and have the same Result; a caller
// that keeps Results by this key diffs an unchanged object once. ok is
// false when live carries no resourceVersion (an object not read from the
// API server): such a comparison is not memoizable. A nil desired or live
// is part of the key.
func MemoKey(desired, live *unstructured.Unstructured) (key string, ok bool) {
	var liveID string
	if live != nil {
		rv := live.GetResourceVersion()
		if rv == "" {
			return "", false
		}
		liveID = string(live.GetUID()) + "/" + rv
	} else {
		liveID = "-"
	}
	if desired == nil {
		return "-/" + liveID, true
	}
	h := hasherPool.Get().(*contentHasher)
	defer hasherPool.Put(h)
	h.reset()
	h.value(desired.Object)
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.h.Sum(sum[:0])) + "/" + liveID, true
}

// contentHasher feeds a JSON-shaped value into SHA-256 with a type tag and
// a length before every item, so that no two different values write the
// same bytes. Its key slices are reused between objects.
type contentHasher struct {
	h    hashWriter
	keys [][]string
	buf  [9]byte
}

type hashWriter interface {
	Write([]byte) (int, error)
	Sum([]byte) []byte
	Reset()
}

var hasherPool = sync.Pool{New: func() any { return &contentHasher{h: sha256.New()} }}

func (c *contentHasher) reset() { c.h.Reset() }

func (c *contentHasher) tag(t byte, n uint64) {
	c.buf[0] = t
	binary.LittleEndian.PutUint64(c.buf[1:], n)
	c.h.Write(c.buf[:])
}

func (c *contentHasher) str(s string) {
	c.tag('s', uint64(len(s)))
	c.h.Write(unsafeBytes(s))
}

func (c *contentHasher) value(v any) {
	switch t := v.(type) {
	case nil:
		c.tag('n', 0)
	case string:
		c.str(t)
	case bool:
		if t {
			c.tag('b', 1)
		} else {
			c.tag('b', 0)
		}
	case int64:
		c.tag('i', uint64(t))
	case int:
		c.tag('i', uint64(t))
	case int32:
		c.tag('i', uint64(t))
	case float64:
		c.tag('f', math.Float64bits(t))
	case []any:
		c.tag('l', uint64(len(t)))
		for _, e := range t {
			c.value(e)
		}
	case map[string]any:
		c.tag('m', uint64(len(t)))
		depth := len(c.keys)
		if depth < cap(c.keys) {
			c.keys = c.keys[:depth+1] // keeps the slice this depth had
		} else {
			c.keys = append(c.keys, nil)
		}
		ks := c.keys[depth][:0]
		if cap(ks) == 0 {
			ks = make([]string, 0, 16)
		}
		for k := range t {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		for _, k := range ks {
			c.str(k)
			c.value(t[k])
		}
		c.keys[depth] = ks[:0]
		c.keys = c.keys[:depth]
	default:
		// Not a JSON-shaped value (unstructured content never holds one):
		// hash its printed form with its own tag.
		c.str(fmt.Sprintf("?%T:%v", t, t))
	}
}

// unsafeBytes views s as bytes for the hash, which only reads them.
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
