// Package diff compares the desired state of Kubernetes objects (rendered
// from Git) with their live state, and says whether each is in sync, what
// changed, and how to patch it.
//
// # One pipeline
//
// False OutOfSync comes from the two sides being written differently:
// 500m against 0.5, a default the server filled in, {} against nothing,
// stringData against data. Every object that a Differ touches (desired,
// live, the last-applied configuration, the predicted result) goes through
// the same normalisation (Differ.Normalize, rules in normalize.go), and
// sync status (Result.Modified, Result.Changes), display (Result.Text) and
// the patch sync writes (Result.Patch) are all computed from the
// normalised objects after the same ignore rules. They cannot disagree:
// an empty change list is exactly "in sync", and an ignored field is never
// changed by the patch.
//
// Built-in kinds are normalised with the Go types of k8s.io/api (through
// client-go's scheme): quantities and int-or-string values take a canonical
// form, empty maps and lists the server would drop are dropped, and known
// server defaults fill absent fields of stored objects: live and the
// predicted result. Desired and the last-applied configuration are
// normalised as declared, without defaults, because the server defaults
// only what a write leaves absent, after the merge: a default applied to
// desired first would overwrite a live value desired does not set (the
// pull policy of an earlier image, another manager's history limit).
// The three-way merge reads the last-applied configuration in place, from
// the annotation's text, applying the same rules to each field as it reads
// it (lastapplied.go) instead of decoding it into maps first; what that
// reading does not reproduce exactly is decoded and normalised as the rest.
// TestDefaultsMatchTheServer checks every default against a real API
// server. k8s.io/kubernetes is never imported.
//
// Some kinds have rules of their own, as in Argo CD (kinds.go): an empty
// rules list of a Role or ClusterRole is none; with
// Options.IgnoreAggregatedRoles an aggregated ClusterRole's rules, which
// the aggregation controller writes, are not compared; an Endpoints' ports
// default to TCP and its subsets, addresses and ports are compared in a
// canonical order, which carries no meaning.
//
// # Strategic-merge directives
//
// A manifest may carry strategic-merge directives. DirectiveResolver turns
// them into the object they describe before anything compares or applies
// it (the engine does so once per render): $patch: delete drops the list
// item or field, $patch: merge is the default, $setElementOrder orders a
// list. $patch: replace, $retainKeys, $deleteFromPrimitiveList and any
// directive in a kind that is not built in are refused with a
// *DirectiveError naming the object and the path.
//
// # Three modes
//
// The predicted live object (what the live object would be after a sync)
// comes from one of three modes, chosen by Options.Mode and the objects'
// compare-options / sync-options annotations as in Argo CD:
//
//   - ModeThreeWay: client-side apply semantics, with the last-applied
//     annotation when present (a two-way merge when not: a cluster cache
//     that strips the annotation loses removals). Needs no cluster.
//   - ModeStructuredMerge: server-side apply semantics computed locally
//     with structured-merge-diff and OpenAPI models (BuiltinSchema offline,
//     SchemaFromOpenAPIV3 for saved documents, ClusterSchema from the
//     cluster). Honours field ownership: a field another manager owns (an
//     HPA's replicas) is not ours to revert. Removals and ownership need
//     the live object's managedFields.
//   - ModeServerSide: a server-side apply dry run (DryRunApplier), cached
//     on (desired hash, live resourceVersion). Changes the dry run shows
//     in fields our manager does not own (webhooks) keep their live values
//     unless IncludeMutationWebhook.
//
// A kind's schema that cannot model an object (no model, or a field the
// model lacks) never leaves the comparison unknown: the object is compared
// with a deduced schema (lists atomic) and Result.SchemaFallback says so.
// Result.Deduced marks every comparison made with a deduced schema, also
// that of a kind the schema has no model of (a custom resource offline, a
// CRD the cluster has not published yet): a caller that keeps results
// should not keep those. Fields the live object's managedFields list item
// by item (written with the kind's real schema) and that desired sets
// whole are not taken for removed.
// ClusterSchema reads the cluster's OpenAPI v3, so CustomResourceDefinitions,
// APIServices and each CRD's own kind have their models.
//
// # Ignore rules and Secrets
//
// IgnoreRule selects objects by group, kind, name and namespace globs and
// removes fields by JSON pointer, jq path expression (gojq, compiled once,
// evaluated with a timeout; errors are reported, never swallowed) or field
// manager. DefaultSystemIgnoreRules hides injected CA bundles. An ignored
// field is not compared, but a sync that applies the whole object still
// writes Git's value to it, as in Argo CD: Result.ResetIgnored (and a note
// at the end of Result.Text) names the ignored fields it would reset. With
// the sync option RespectIgnoreDifferences=true a sync applies what
// Differ.KeepIgnored returns instead: desired with ignored fields at their
// live values.
//
// Whether an object is a Secret is decided from the parsed apiVersion and
// kind of both sides, never from a caller's claim. A Secret's values become
// stable placeholders (the same value gives the same placeholder, so
// changed and unchanged stay visible) in every object, text, change and
// error of the Result; only Patch.Data, which sync sends to the API
// server, holds real values.
package diff
