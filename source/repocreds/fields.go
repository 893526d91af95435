package repocreds

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// valueKind is how a Secret field's value is read.
type valueKind int

const (
	kindString valueKind = iota
	kindBool
	kindInt
)

// fieldSpec is one field of Argo CD v3.6's repository Secrets: on which
// Secret types Argo CD reads it, how, and, for the fields another Argo CD
// component owns, why it has no effect here.
type fieldSpec struct {
	kind valueKind
	// repo and creds: read on repository (and repository-write) Secrets,
	// and on repo-creds (and repo-write-creds) Secrets.
	repo, creds bool
	// accepted, when set, is why the field is read but has no effect here
	// (named once in a Warning).
	accepted string
}

// specs are the fields of Argo CD v3.6.1's util/db secretToRepository and
// secretToRepoCred.
var specs = map[string]fieldSpec{
	"url":                        {kindString, true, true, ""},
	"type":                       {kindString, true, true, ""},
	"name":                       {kindString, true, false, ""},
	"project":                    {kindString, true, true, ""},
	"username":                   {kindString, true, true, ""},
	"password":                   {kindString, true, true, ""},
	"bearerToken":                {kindString, true, true, ""},
	"sshPrivateKey":              {kindString, true, true, ""},
	"tlsClientCertData":          {kindString, true, true, ""},
	"tlsClientCertKey":           {kindString, true, true, ""},
	"proxy":                      {kindString, true, true, ""},
	"noProxy":                    {kindString, true, true, ""},
	"githubAppID":                {kindInt, true, true, ""},
	"githubAppInstallationID":    {kindInt, true, true, ""},
	"githubAppPrivateKey":        {kindString, true, true, ""},
	"githubAppEnterpriseBaseUrl": {kindString, true, true, ""},
	"gcpServiceAccountKey":       {kindString, true, true, ""},
	"useAzureWorkloadIdentity":   {kindBool, true, true, ""},
	// Argo CD reads the Id spelling on repository Secrets and the ID
	// spelling (then Id) on repo-creds Secrets.
	"azureServicePrincipalClientId":     {kindString, true, true, ""},
	"azureServicePrincipalClientID":     {kindString, false, true, ""},
	"azureServicePrincipalTenantId":     {kindString, true, true, ""},
	"azureServicePrincipalTenantID":     {kindString, false, true, ""},
	"azureServicePrincipalClientSecret": {kindString, true, true, ""},
	"azureActiveDirectoryEndpoint":      {kindString, true, true, ""},
	"enableOCI":                         {kindBool, true, true, ""},
	"insecureOCIForceHttp":              {kindBool, true, true, ""},
	"forceHttpBasicAuth":                {kindBool, true, true, ""},
	"insecureIgnoreHostKey":             {kindBool, true, false, ""},
	"insecure":                          {kindBool, true, false, ""},
	"enableLfs":                         {kindBool, true, false, ""},
	"depth": {kindInt, true, false, "the Git source always fetches only the commit it reads " +
		"(a shallow fetch of depth 1, deepened only for a commit that is no branch or tag tip), whatever the depth"},
	"webhookManifestCacheWarmDisabled": {kindBool, true, false, "it tunes the manifest cache warming of Argo CD's webhook handler, " +
		"which this engine does not do: a webhook here only refreshes the apps of the repository"},
}

// Warning is a field of a repository Secret that does not have the effect
// its name says, or a Secret that is read but not used: the rest of the
// Secret is served. A host reports each once (the operator writes a
// Warning Event on the Secret). It names the Secret and the field, never a
// value.
type Warning struct {
	// Secret is the Secret's namespace/name.
	Secret string
	// Field is the field's name ("" for the Secret as a whole).
	Field string
	// Message says what happens instead.
	Message string
}

// String implements fmt.Stringer.
func (w Warning) String() string {
	if w.Field == "" {
		return fmt.Sprintf("repository secret %s: %s", w.Secret, w.Message)
	}
	return fmt.Sprintf("repository secret %s: field %q: %s", w.Secret, w.Field, w.Message)
}

// FieldError is a field of a repository Secret whose value cannot be
// used. The Secret stays loaded, but the credentials of the repositories
// it serves carry the error (source.Credentials.Err): their apps are
// refused with it rather than read without the field, which could read
// other content or another server's. It names the Secret and the field,
// never a value.
type FieldError struct {
	// Secret is the Secret's namespace/name.
	Secret string
	// Field is the field's name.
	Field string
	// Reason says what is wrong with the value.
	Reason string
	// Err is the sentinel wrapped (source.ErrInvalidRepository when the
	// value is malformed, source.ErrAuthentication when a token could not
	// be obtained with it).
	Err error
}

// Error implements error.
func (e *FieldError) Error() string {
	return fmt.Sprintf("repository secret %s: field %q: %s", e.Secret, e.Field, e.Reason)
}

// Unwrap returns the sentinel.
func (e *FieldError) Unwrap() error { return e.Err }

// secretFields is a Secret's fields as Argo CD reads them: data (base64)
// overridden by stringData, as the API server merges them.
type secretFields struct {
	id       string
	values   map[string]string
	warnings []Warning
	// bad are fields whose value could not be read at all.
	bad map[string]string
}

// readFields reads the fields of Secret o. A value that is not a string
// (a YAML number or boolean in stringData, which the API server refuses)
// is read as its text and named in a Warning; one that cannot be read is
// kept in bad.
func readFields(id string, o *unstructured.Unstructured) secretFields {
	f := secretFields{id: id, values: map[string]string{}, bad: map[string]string{}}
	data, _ := o.Object["data"].(map[string]any)
	for k, v := range data {
		s, ok := v.(string)
		if !ok {
			f.bad[k] = "data." + k + " is not a base64 string"
			continue
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			f.bad[k] = "data." + k + " is not base64"
			continue
		}
		f.values[k] = string(b)
	}
	sdata, _ := o.Object["stringData"].(map[string]any)
	for k, v := range sdata {
		delete(f.bad, k)
		switch t := v.(type) {
		case string:
			f.values[k] = t
		case bool, int, int32, int64, float64:
			f.values[k] = fmt.Sprint(t)
			f.warnings = append(f.warnings, Warning{Secret: id, Field: k, Message: "stringData." + k +
				" is a YAML " + fmt.Sprintf("%T", t) + ", not a string: read as its text here, but the API server refuses such a Secret (quote the value)"})
		default:
			delete(f.values, k)
			f.bad[k] = "stringData." + k + " is not a string"
		}
	}
	return f
}

// settings are the values of a Secret's fields, typed.
type settings struct {
	strs  map[string]string
	bools map[string]bool
	ints  map[string]int64
}

func (s settings) str(k string) string   { return s.strs[k] }
func (s settings) flag(k string) bool    { return s.bools[k] }
func (s settings) number(k string) int64 { return s.ints[k] }

// parse types the fields of a Secret of kind creds (repo-creds and
// repo-write-creds) or not: the fields Argo CD does not read there and the
// unknown ones become Warnings, the accepted ones too, and a malformed
// value of one it reads the Secret's FieldError.
func (f secretFields) parse(creds bool) (settings, []Warning, *FieldError) {
	st := settings{strs: map[string]string{}, bools: map[string]bool{}, ints: map[string]int64{}}
	warnings := append([]Warning{}, f.warnings...)
	var ferr *FieldError
	fail := func(field, reason string) {
		if ferr == nil || field < ferr.Field {
			ferr = &FieldError{Secret: f.id, Field: field, Reason: reason, Err: errInvalid}
		}
	}
	kind := "repository"
	if creds {
		kind = "repo-creds"
	}
	names := make([]string, 0, len(f.values)+len(f.bad))
	for k := range f.values {
		names = append(names, k)
	}
	for k := range f.bad {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		spec, known := specs[k]
		switch {
		case !known:
			warnings = append(warnings, Warning{Secret: f.id, Field: k, Message: "not a field of Argo CD's repository Secrets: ignored (check its spelling)"})
			continue
		case (creds && !spec.creds) || (!creds && !spec.repo):
			warnings = append(warnings, Warning{Secret: f.id, Field: k, Message: "Argo CD does not read this field on " + kind + " Secrets: ignored"})
			continue
		}
		if reason, ok := f.bad[k]; ok {
			fail(k, reason)
			continue
		}
		v := f.values[k]
		if spec.accepted != "" {
			warnings = append(warnings, Warning{Secret: f.id, Field: k, Message: "accepted without effect: " + spec.accepted})
		}
		switch spec.kind {
		case kindString:
			st.strs[k] = v
		case kindBool:
			if v == "" {
				continue
			}
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				fail(k, "not a boolean")
				continue
			}
			st.bools[k] = b
		case kindInt:
			if v == "" {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				fail(k, "not a number")
				continue
			}
			st.ints[k] = n
		}
	}
	if ferr != nil {
		warnings = append(warnings, Warning{Secret: f.id, Field: ferr.Field, Message: ferr.Reason + ": the apps of the repositories this Secret serves are refused until it is fixed"})
	}
	return st, warnings, ferr
}
