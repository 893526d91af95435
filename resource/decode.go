package resource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// DecodeOptions bounds what a manifest stream may cost to decode. A zero or
// negative field means "use the default" so that a partly filled struct is
// still safe; use a very large value to lift a limit on purpose.
type DecodeOptions struct {
	// MaxStreamBytes is the largest stream (file) accepted. Default 16 MiB.
	MaxStreamBytes int64
	// MaxDocumentBytes is the largest single document accepted. Default 4 MiB,
	// above the API server's own 3 MiB request limit.
	MaxDocumentBytes int64
	// MaxDocuments is the largest number of objects a stream may yield,
	// counting the items of flattened lists. Default 10,000.
	MaxDocuments int
	// MaxAliasExpansion is the largest number of YAML nodes that expanding
	// aliases may add to one document. Default 10,000: ordinary anchors in
	// manifests add a few dozen, a billion-laughs document adds billions.
	MaxAliasExpansion int
}

// DefaultDecodeOptions returns the limits used when none are given.
func DefaultDecodeOptions() DecodeOptions {
	return DecodeOptions{
		MaxStreamBytes:    16 << 20,
		MaxDocumentBytes:  4 << 20,
		MaxDocuments:      10000,
		MaxAliasExpansion: 10000,
	}
}

func (o DecodeOptions) withDefaults() DecodeOptions {
	d := DefaultDecodeOptions()
	if o.MaxStreamBytes <= 0 {
		o.MaxStreamBytes = d.MaxStreamBytes
	}
	if o.MaxDocumentBytes <= 0 {
		o.MaxDocumentBytes = d.MaxDocumentBytes
	}
	if o.MaxDocuments <= 0 {
		o.MaxDocuments = d.MaxDocuments
	}
	if o.MaxAliasExpansion <= 0 {
		o.MaxAliasExpansion = d.MaxAliasExpansion
	}
	return o
}

// DecodeReader reads a whole YAML or JSON stream from r and decodes it as
// Decode does. It stops reading once the stream passes MaxStreamBytes.
func DecodeReader(file string, r io.Reader, opts DecodeOptions) ([]*unstructured.Unstructured, error) {
	opts = opts.withDefaults()
	data, err := io.ReadAll(io.LimitReader(r, opts.MaxStreamBytes+1))
	if err != nil {
		return nil, &DecodeError{File: file, Document: -1, Err: err}
	}
	return Decode(file, data, opts)
}

// Decode turns a stream of YAML documents (separated by "---" lines) or of
// JSON objects into unstructured objects, in stream order. Empty documents
// (white space, comments, null) are skipped; a document whose kind ends in
// "List" and that holds an items array is replaced by its items. Every object
// must be a mapping with apiVersion and kind. The first failure stops the
// decoding and is returned as a *DecodeError naming file and document; no
// partial result is returned with it.
func Decode(file string, data []byte, opts DecodeOptions) ([]*unstructured.Unstructured, error) {
	opts = opts.withDefaults()
	if int64(len(data)) > opts.MaxStreamBytes {
		return nil, &DecodeError{File: file, Document: -1,
			Err: fmt.Errorf("%w: stream is over %d bytes", ErrTooLarge, opts.MaxStreamBytes)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	d := decoder{file: file, opts: opts}
	if isJSONStream(data) {
		return d.decodeJSONStream(data)
	}
	return d.decodeYAMLStream(data)
}

type decoder struct {
	file string
	opts DecodeOptions
	out  []*unstructured.Unstructured
}

func (d *decoder) fail(doc, line int, err error) error {
	return &DecodeError{File: d.file, Document: doc, Line: line, Err: err}
}

func isJSONStream(data []byte) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

func (d *decoder) decodeJSONStream(data []byte) ([]*unstructured.Unstructured, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	for doc := 0; ; doc++ {
		start := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			return d.out, nil
		} else if err != nil {
			return nil, d.fail(doc, 0, fmt.Errorf("%w: %v", ErrSyntax, err))
		}
		if int64(len(raw)) > d.opts.MaxDocumentBytes {
			return nil, d.fail(doc, 0, fmt.Errorf("%w: document is over %d bytes", ErrTooLarge, d.opts.MaxDocumentBytes))
		}
		line := 1 + bytes.Count(data[:start], []byte("\n"))
		if err := d.addJSON(doc, line, raw); err != nil {
			return nil, err
		}
	}
}

func (d *decoder) decodeYAMLStream(data []byte) ([]*unstructured.Unstructured, error) {
	docs := splitYAML(data)
	for i, doc := range docs {
		if int64(len(doc.Body)) > d.opts.MaxDocumentBytes {
			return nil, d.fail(i, doc.Line, fmt.Errorf("%w: document is over %d bytes", ErrTooLarge, d.opts.MaxDocumentBytes))
		}
		if err := checkAliasExpansion(doc.Body, d.opts.MaxAliasExpansion); err != nil {
			return nil, d.fail(i, doc.Line, err)
		}
		js, err := yaml.YAMLToJSON(doc.Body)
		if err != nil {
			return nil, d.fail(i, doc.Line, fmt.Errorf("%w: %v", ErrSyntax, trimYAMLError(err)))
		}
		if err := d.addJSON(i, doc.Line, js); err != nil {
			return nil, err
		}
	}
	return d.out, nil
}

// addJSON decodes one document given as JSON and appends its object or its
// list items.
func (d *decoder) addJSON(doc, line int, js []byte) error {
	js = bytes.TrimSpace(js)
	if len(js) == 0 || bytes.Equal(js, []byte("null")) {
		return nil
	}
	if js[0] != '{' {
		return d.fail(doc, line, fmt.Errorf("%w: a manifest must be a mapping", ErrNotObject))
	}
	var m map[string]any
	if err := utiljson.Unmarshal(js, &m); err != nil {
		return d.fail(doc, line, fmt.Errorf("%w: %v", ErrSyntax, err))
	}
	obj := &unstructured.Unstructured{Object: m}
	if err := checkKind(obj); err != nil {
		return d.fail(doc, line, err)
	}
	if items, ok := listItems(obj); ok {
		for i, item := range items {
			im, ok := item.(map[string]any)
			if !ok {
				return d.fail(doc, line, fmt.Errorf("%w: item %d of %s", ErrNotObject, i, obj.GetKind()))
			}
			io := &unstructured.Unstructured{Object: im}
			if err := checkKind(io); err != nil {
				return d.fail(doc, line, fmt.Errorf("item %d: %w", i, err))
			}
			if err := d.add(doc, line, io); err != nil {
				return err
			}
		}
		return nil
	}
	return d.add(doc, line, obj)
}

func (d *decoder) add(doc, line int, obj *unstructured.Unstructured) error {
	if len(d.out) >= d.opts.MaxDocuments {
		return d.fail(doc, line, fmt.Errorf("%w: more than %d objects", ErrTooManyDocuments, d.opts.MaxDocuments))
	}
	d.out = append(d.out, obj)
	return nil
}

func checkKind(obj *unstructured.Unstructured) error {
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		return ErrMissingKind
	}
	return nil
}

// listItems returns the items of a List kind (v1 List, ConfigMapList, ...).
func listItems(obj *unstructured.Unstructured) ([]any, bool) {
	if !strings.HasSuffix(obj.GetKind(), "List") {
		return nil, false
	}
	items, ok := obj.Object["items"].([]any)
	return items, ok
}

// trimYAMLError drops the library prefix so the message reads "line 3: ...".
func trimYAMLError(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	return strings.TrimPrefix(msg, "yaml: ")
}
