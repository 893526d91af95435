package cache

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// wholeCodec is how a cache keeps whole objects: as their JSON compressed
// with zstd at its fastest level, starting from a dictionary of common
// objects (dictionary.go). A Deployment's 2.5 KB of JSON take about 0.5 KB,
// a small ConfigMap's 340 bytes 150; reading one back costs about 6 µs
// besides the JSON decode every read pays anyway. The caches of a process
// share one codec (sharedCodec): it takes about 2 MB once used, which a
// host watching hundreds of clusters should pay once, not per
// cluster. Its encoder and decoder are used for whole buffers only
// (EncodeAll, DecodeAll: safe for concurrent use, no goroutines), each
// with a few states that concurrent callers share; nothing of one cache's
// objects stays in it between calls.
type wholeCodec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

// Bounds of the codec: the states shared by concurrent encodes (about
// 1 MB each once used; an encode takes about 15 µs, so two keep up with a
// cold start's watches) and decodes (about 30 KB each; reads are many),
// the window (larger objects compress a little less), and the most one
// stored object may take decoded (the API server's request bound is
// 3 MiB; an etcd object's 1.5 MiB).
const (
	codecEncoders  = 2
	codecDecoders  = 4
	codecWindow    = 64 << 10
	codecMaxObject = 8 << 20
)

// sharedCodec builds the process's codec on first use.
var sharedCodec = sync.OnceValues(newWholeCodec)

// codecDictionaryID names the dictionary in each stored form's header.
const codecDictionaryID = 1

// newWholeCodec builds a codec; sharedCodec is the one caches use.
func newWholeCodec() (*wholeCodec, error) {
	dict, err := canonicalDictionary()
	if err != nil {
		return nil, err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(codecEncoders),
		zstd.WithWindowSize(codecWindow), zstd.WithEncoderCRC(false), zstd.WithEncoderDictRaw(codecDictionaryID, dict))
	if err != nil {
		return nil, fmt.Errorf("cache: object codec: %w", err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(codecDecoders), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(codecMaxObject), zstd.WithDecoderDictRaw(codecDictionaryID, dict))
	if err != nil {
		return nil, fmt.Errorf("cache: object codec: %w", err)
	}
	return &wholeCodec{enc: enc, dec: dec}, nil
}

// encode is the stored form of obj: its JSON, compressed, in an
// allocation of its own size.
func (c *wholeCodec) encode(obj map[string]any) ([]byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	out := c.enc.EncodeAll(data, make([]byte, 0, len(data)/2+64))
	if cap(out) > len(out)+len(out)/8 {
		out = bytes.Clone(out) // it outgrew the guess: keep only what it needs
	}
	return out, nil
}

// decode decodes an entry's stored form as the API machinery decodes an
// object: integers become int64, as in every Unstructured a client
// returns, so that a decoded copy compares equal to the object the watch
// delivered.
func (c *wholeCodec) decode(raw []byte) (*unstructured.Unstructured, error) {
	data, err := c.dec.DecodeAll(raw, nil)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// canonicalDictionary is codecDictionary with each object written as
// encode writes one (encoding/json: keys sorted).
func canonicalDictionary() ([]byte, error) {
	var out []byte
	for line := range strings.Lines(codecDictionary) {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			return nil, fmt.Errorf("cache: object codec dictionary: %w", err)
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("cache: object codec dictionary: %w", err)
		}
		out = append(append(out, b...), '\n')
	}
	return out, nil
}
