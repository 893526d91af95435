package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// SchemaSource supplies the structured-merge-diff type of a kind: list
// keys, atomic and granular fields. ModeStructuredMerge, the
// managedFieldsManagers rules and ModeServerSide's webhook filter use it.
type SchemaSource interface {
	// TypeConverter returns a converter that knows gvk. A source that does
	// not know gvk returns a deduced converter (maps as structs, lists
	// atomic) rather than an error; errors are for failed look-ups.
	TypeConverter(ctx context.Context, gvk schema.GroupVersionKind) (managedfields.TypeConverter, error)
}

// builtinSchema serves the built-in kinds from the OpenAPI models compiled
// into client-go (offline: no cluster needed), and deduced types for the
// rest.
type builtinSchema struct {
	scheme  *runtime.Scheme
	typed   managedfields.TypeConverter
	deduced managedfields.TypeConverter
	// modelled caches, per kind, whether typed has a model for it
	// (schema.GroupVersionKind -> bool).
	modelled sync.Map
}

// BuiltinSchema returns a SchemaSource for pipelines without a cluster: the
// built-in kinds of this client-go version, offline; custom resources get
// deduced types (their lists are atomic).
func BuiltinSchema() SchemaSource {
	return newBuiltinSchema(scheme.Scheme)
}

func newBuiltinSchema(s *runtime.Scheme) *builtinSchema {
	return &builtinSchema{
		scheme:  s,
		typed:   applyconfigurations.NewTypeConverter(s),
		deduced: NewDeducedTypeConverter(),
	}
}

// TypeConverter implements SchemaSource. A kind gets the compiled-in models
// only when they hold a model for it: the scheme alone does not say so,
// because libraries register more Go types into client-go's scheme than
// client-go has models for (Helm registers apiextensions.k8s.io, whose
// CustomResourceDefinition then has a scheme name but no model).
func (b *builtinSchema) TypeConverter(_ context.Context, gvk schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	if b.hasModel(gvk) {
		return b.typed, nil
	}
	return b.deduced, nil
}

// hasModel reports whether the compiled-in models can type an object of
// gvk, by typing an empty one (once per kind).
func (b *builtinSchema) hasModel(gvk schema.GroupVersionKind) bool {
	if v, ok := b.modelled.Load(gvk); ok {
		return v.(bool)
	}
	ok := b.scheme.Recognizes(gvk)
	if ok {
		probe := &unstructured.Unstructured{}
		probe.SetGroupVersionKind(gvk)
		_, err := b.typed.ObjectToTyped(probe, typed.AllowDuplicates)
		ok = err == nil
	}
	b.modelled.Store(gvk, ok)
	return ok
}

// openAPISchema serves the kinds of a set of OpenAPI v3 documents.
type openAPISchema struct {
	conv     managedfields.TypeConverter
	known    map[schema.GroupVersionKind]bool
	fallback SchemaSource
}

// SchemaFromOpenAPIV3 returns a SchemaSource built from OpenAPI v3
// documents as the API server serves them at /openapi/v3/apis/<group>/<version>
// (save them next to a pipeline's manifests to diff CRDs offline). Kinds
// the documents do not define fall back to BuiltinSchema.
func SchemaFromOpenAPIV3(docs ...[]byte) (SchemaSource, error) {
	schemas := map[string]*spec.Schema{}
	for i, doc := range docs {
		var d spec3.OpenAPI
		if err := json.Unmarshal(doc, &d); err != nil {
			return nil, fmt.Errorf("diff: OpenAPI document %d: %w", i, err)
		}
		if d.Components == nil {
			continue
		}
		for name, s := range d.Components.Schemas {
			schemas[name] = s
		}
	}
	return newOpenAPISchema(schemas, BuiltinSchema())
}

func newOpenAPISchema(schemas map[string]*spec.Schema, fallback SchemaSource) (*openAPISchema, error) {
	conv, err := managedfields.NewTypeConverter(schemas, false)
	if err != nil {
		return nil, fmt.Errorf("diff: OpenAPI models: %w", err)
	}
	known := map[schema.GroupVersionKind]bool{}
	for _, s := range schemas {
		for _, gvk := range gvksOfSchema(s) {
			known[gvk] = true
		}
	}
	return &openAPISchema{conv: conv, known: known, fallback: fallback}, nil
}

func gvksOfSchema(s *spec.Schema) []schema.GroupVersionKind {
	raw, ok := s.Extensions["x-kubernetes-group-version-kind"].([]any)
	if !ok {
		return nil
	}
	var out []schema.GroupVersionKind
	for _, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		g, _ := m["group"].(string)
		v, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		if k != "" {
			out = append(out, schema.GroupVersionKind{Group: g, Version: v, Kind: k})
		}
	}
	return out
}

// TypeConverter implements SchemaSource.
func (o *openAPISchema) TypeConverter(ctx context.Context, gvk schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	if o.known[gvk] {
		return o.conv, nil
	}
	return o.fallback.TypeConverter(ctx, gvk)
}

// ClusterSchema is a SchemaSource that reads the cluster's /openapi/v3, one
// group-version at a time, on first use. Custom resources get the types of
// their CRD's structural schema. What it read is trusted for schemaTTL; a
// group-version or kind it does not know (a CRD created since, or changed)
// makes it read again at once, at most once per missRefresh, so a diff of a
// new CRD's objects does not run on a guessed schema for long.
type ClusterSchema struct {
	client   openapi.ClientWithContext
	timeout  time.Duration
	fallback *builtinSchema
	// builtinFirst: see ClusterSchemaOptions.BuiltinFirst.
	builtinFirst bool

	mu      sync.Mutex
	paths   map[string]openapi.GroupVersionWithContext
	pathsAt time.Time
	byGV    map[schema.GroupVersion]gvSchema
}

// gvSchema is one group-version's models, when they were read, and the
// URL they were read from (it carries a hash of their content).
type gvSchema struct {
	s      *openAPISchema
	readAt time.Time
	url    string
}

const (
	// missRefresh is how often, at most, a group-version or kind missing
	// from what was read makes ClusterSchema read the cluster again.
	missRefresh = time.Second
	// schemaTTL is how long a group-version's models are used before they
	// are read again (a CRD whose schema changed).
	schemaTTL = time.Minute
)

// ClusterSchemaOptions configure a ClusterSchema. Start from
// DefaultClusterSchemaOptions.
type ClusterSchemaOptions struct {
	// Timeout bounds each request. Default 30 s.
	Timeout time.Duration
	// BuiltinFirst serves the kinds that the models compiled into
	// client-go know (BuiltinSchema) from those models, and reads the
	// cluster only for the others: custom resources, apiextensions.k8s.io,
	// apiregistration.k8s.io and aggregated APIs. It spares reading and
	// parsing the large core documents; a built-in kind is then compared
	// with client-go's model of it rather than the server's (a field the
	// model lacks makes that object fall back to a deduced schema, see
	// Result.SchemaFallback). Default false.
	BuiltinFirst bool
}

// DefaultClusterSchemaOptions returns the options NewClusterSchema uses.
func DefaultClusterSchemaOptions() ClusterSchemaOptions {
	return ClusterSchemaOptions{Timeout: 30 * time.Second}
}

// NewClusterSchema returns a ClusterSchema for the cluster of cfg. Each
// request is bounded by timeout (default 30 s when zero).
func NewClusterSchema(cfg *rest.Config, timeout time.Duration) (*ClusterSchema, error) {
	opts := DefaultClusterSchemaOptions()
	if timeout > 0 {
		opts.Timeout = timeout
	}
	return NewClusterSchemaWithOptions(cfg, opts)
}

// NewClusterSchemaWithOptions returns a ClusterSchema for the cluster of
// cfg with opts.
func NewClusterSchemaWithOptions(cfg *rest.Config, opts ClusterSchemaOptions) (*ClusterSchema, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultClusterSchemaOptions().Timeout
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("diff: discovery client: %w", err)
	}
	return &ClusterSchema{
		client:       openapi.NewClientWithContext(dc.RESTClient()),
		timeout:      opts.Timeout,
		fallback:     newBuiltinSchema(scheme.Scheme),
		builtinFirst: opts.BuiltinFirst,
		byGV:         map[schema.GroupVersion]gvSchema{},
	}, nil
}

// Invalidate forgets what was read, for example after a CRD changed.
func (c *ClusterSchema) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paths = nil
	c.byGV = map[schema.GroupVersion]gvSchema{}
}

// TypeConverter implements SchemaSource. A kind the cluster does not
// publish gets the built-in models (or, for an unknown kind, a schema
// deduced from the object).
func (c *ClusterSchema) TypeConverter(ctx context.Context, gvk schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	if c.builtinFirst && c.fallback.hasModel(gvk) {
		return c.fallback.typed, nil
	}
	gv := gvk.GroupVersion()
	c.mu.Lock()
	defer c.mu.Unlock()
	cached, ok := c.byGV[gv]
	age := time.Since(cached.readAt)
	if ok && age < schemaTTL && (cached.s.known[gvk] || age < missRefresh) {
		return cached.s.TypeConverter(ctx, gvk)
	}
	s, err := c.read(ctx, gv, ok)
	switch {
	case err != nil && ok:
		return cached.s.TypeConverter(ctx, gvk) // stale beats nothing
	case err != nil:
		return nil, err
	case s == nil:
		return c.fallback.TypeConverter(ctx, gvk)
	}
	return s.TypeConverter(ctx, gvk)
}

// read fetches the models of gv, reading the index first when it is
// missing, when gv is not in it, or when stale says the models of gv may
// have changed (their URL carries a hash of their content); nil when the
// cluster does not publish gv.
func (c *ClusterSchema) read(ctx context.Context, gv schema.GroupVersion, stale bool) (*openAPISchema, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	p := "apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		p = "api/" + gv.Version
	}
	item, ok := c.paths[p]
	if c.paths == nil || ((stale || !ok) && time.Since(c.pathsAt) >= missRefresh) {
		paths, err := c.client.PathsWithContext(ctx)
		if err != nil {
			return nil, fmt.Errorf("diff: /openapi/v3: %w", err)
		}
		c.paths, c.pathsAt = paths, time.Now()
		item, ok = c.paths[p]
	}
	if !ok {
		return nil, nil
	}
	url := item.ServerRelativeURL()
	if cached, ok := c.byGV[gv]; ok && url != "" && cached.url == url {
		// Unchanged since it was read: no need to fetch and parse again.
		cached.readAt = time.Now()
		c.byGV[gv] = cached
		return cached.s, nil
	}
	raw, err := item.SchemaWithContext(ctx, runtime.ContentTypeJSON)
	if err != nil {
		return nil, fmt.Errorf("diff: /openapi/v3/%s: %w", p, err)
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("diff: /openapi/v3/%s: %w", p, err)
	}
	schemas := map[string]*spec.Schema{}
	if doc.Components != nil {
		schemas = doc.Components.Schemas
	}
	s, err := newOpenAPISchema(schemas, c.fallback)
	if err != nil {
		return nil, fmt.Errorf("diff: /openapi/v3/%s: %w", p, err)
	}
	c.byGV[gv] = gvSchema{s: s, readAt: time.Now(), url: url}
	return s, nil
}
