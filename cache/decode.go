package cache

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// decodeWhole decodes an entry's JSON as the API machinery decodes an
// object: integers become int64, as in every Unstructured a client returns,
// so that a decoded copy compares equal to the object the watch delivered.
func decodeWhole(raw []byte) (*unstructured.Unstructured, error) {
	m := map[string]any{}
	if err := utiljson.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}
