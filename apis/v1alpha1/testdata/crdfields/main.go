// Command crdfields prints the field paths of CustomResourceDefinitions'
// openAPIV3Schemas, one per line as "Kind path type", sorted: the fixture
// that the model's field walk test reads (../argocd-fields.txt). The
// subtree of an ApplicationSource, which the Application's schema repeats
// a dozen times (spec, status, history, operation), is written once under
// the pseudo-kind ApplicationSource, and each place holding one reads
// "Kind path =ApplicationSource".
//
//	go run ./apis/v1alpha1/testdata/crdfields -source "argo-cd v3.6.1" \
//		application-crd.yaml appproject-crd.yaml > apis/v1alpha1/testdata/argocd-fields.txt
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

type schema struct {
	Type                 string            `json:"type"`
	Properties           map[string]schema `json:"properties"`
	Items                *schema           `json:"items"`
	AdditionalProperties *schema           `json:"additionalProperties"`
	PreserveUnknown      bool              `json:"x-kubernetes-preserve-unknown-fields"`
	IntOrString          bool              `json:"x-kubernetes-int-or-string"`
}

type crd struct {
	Spec struct {
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Schema struct {
				OpenAPIV3Schema schema `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

func main() {
	source := flag.String("source", "", "where the CRDs come from, for the header")
	flag.Parse()
	var lines []string
	fmt.Printf("# Field paths of the openAPIV3Schema of %s's CRDs\n", *source)
	fmt.Println("# (manifests/crds/application-crd.yaml and appproject-crd.yaml), one per line:")
	fmt.Println("# Kind path type. Written by testdata/crdfields (see its doc comment).")
	for _, file := range flag.Args() {
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var c crd
		if err := yaml.Unmarshal(data, &c); err != nil {
			fmt.Fprintln(os.Stderr, file+":", err)
			os.Exit(1)
		}
		for _, v := range c.Spec.Versions {
			root := v.Schema.OpenAPIV3Schema
			if c.Spec.Names.Kind == "Application" {
				src := root.Properties["spec"].Properties["source"]
				sourceSig = signature(src)
				walk("ApplicationSource", "", src, &lines)
			}
			walk(c.Spec.Names.Kind, "", root, &lines)
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
}

// sourceSig is the signature of the ApplicationSource schema.
var sourceSig string

// signature is the sorted list of a schema's paths and types.
func signature(s schema) string {
	var l []string
	walk("", "", s, &l)
	sort.Strings(l)
	return strings.Join(l, "\n")
}

func walk(kind, path string, s schema, out *[]string) {
	if path != "" && kind != "" && kind != "ApplicationSource" && sourceSig != "" && signature(s) == sourceSig {
		*out = append(*out, kind+" "+path+" =ApplicationSource")
		return
	}
	if path != "" {
		t := s.Type
		switch {
		case s.IntOrString:
			t = "int-or-string"
		case s.PreserveUnknown && t == "":
			t = "any"
		case t == "":
			t = "object"
		}
		*out = append(*out, kind+" "+path+" "+t)
	}
	for name, p := range s.Properties {
		next := name
		if path != "" {
			next = path + "." + name
		}
		walk(kind, next, p, out)
	}
	if s.Items != nil {
		walk(kind, path+"[]", *s.Items, out)
	}
	if s.AdditionalProperties != nil {
		walk(kind, path+".*", *s.AdditionalProperties, out)
	}
}
