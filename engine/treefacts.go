package engine

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/resource"
)

// nodeFacts are what a node of the resource tree tells of its object
// beyond its identity, and what the app's summary gathers. The cache keeps
// them for lean objects (withNodeFacts), so they hold nothing that changes
// on every write of the object.
type nodeFacts struct {
	// CreatedAt is the object's creationTimestamp.
	CreatedAt time.Time
	// Images are the container images of a Pod or of a workload's Pod
	// template, sorted, without duplicates.
	Images []string
	// URLs are the object's external URLs (Ingress rules, LoadBalancer
	// ingress points, link annotations).
	URLs []string
	// Health is the object's health, nil when no check has an opinion.
	Health *health.Status
}

// describeNode returns obj's facts but its health.
func describeNode(obj *unstructured.Unstructured) nodeFacts {
	f := nodeFacts{CreatedAt: obj.GetCreationTimestamp().Time, Images: imagesOf(obj)}
	gk := obj.GroupVersionKind().GroupKind()
	switch {
	case gk.Kind == "Ingress" && (gk.Group == "networking.k8s.io" || gk.Group == "extensions"):
		f.URLs = ingressURLs(obj)
	case gk.Kind == "Service" && gk.Group == "":
		f.URLs = loadBalancerURLs(obj)
	}
	for k, v := range obj.GetAnnotations() {
		if strings.HasPrefix(k, resource.AnnotationLinkPrefix) {
			if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
				f.URLs = append(f.URLs, v)
			}
		}
	}
	f.URLs = sortedSet(f.URLs)
	return f
}

// podSpecPaths are where Pods and workloads keep their Pod spec: a Pod's
// own spec, a workload's template (Deployment, ReplicaSet, StatefulSet,
// DaemonSet, Job, ReplicationController, Argo Rollout, ...), a CronJob's
// job template.
var podSpecPaths = [][]string{
	{"spec"},
	{"spec", "template", "spec"},
	{"spec", "jobTemplate", "spec", "template", "spec"},
}

// imagesOf returns the images of obj's containers, init containers and
// ephemeral containers: a Pod's, or a workload's Pod template's.
func imagesOf(obj *unstructured.Unstructured) []string {
	path := podSpecPaths[1]
	switch gk := obj.GroupVersionKind().GroupKind(); {
	case gk.Group == "" && gk.Kind == "Pod":
		path = podSpecPaths[0]
	case gk.Group == "batch" && gk.Kind == "CronJob":
		path = podSpecPaths[2]
	}
	spec, ok, _ := unstructured.NestedMap(obj.Object, path...)
	if !ok {
		return nil
	}
	var images []string
	for _, field := range []string{"initContainers", "containers", "ephemeralContainers"} {
		list, _ := spec[field].([]any)
		for _, c := range list {
			m, _ := c.(map[string]any)
			if img, _ := m["image"].(string); img != "" {
				images = append(images, img)
			}
		}
	}
	return sortedSet(images)
}

// ingressURLs follows Argo CD: for each path of each rule, the rule's host
// (or, without one, the first address of the Ingress's load balancer),
// https when the host is one of a TLS entry's hosts, with the path, a
// trailing * removed.
func ingressURLs(obj *unstructured.Unstructured) []string {
	rules, _, _ := unstructured.NestedSlice(obj.Object, "spec", "rules")
	if len(rules) == 0 {
		return nil
	}
	tlsHosts := map[string]bool{}
	tls, _, _ := unstructured.NestedSlice(obj.Object, "spec", "tls")
	for _, t := range tls {
		m, _ := t.(map[string]any)
		hosts, _ := m["hosts"].([]any)
		for _, h := range hosts {
			if s, ok := h.(string); ok {
				tlsHosts[s] = true
			}
		}
	}
	fallback := ""
	if addrs := loadBalancerAddresses(obj); len(addrs) > 0 {
		fallback = addrs[0]
	}
	var out []string
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		host, _ := rule["host"].(string)
		if host == "" {
			host = fallback
		}
		paths, _, _ := unstructured.NestedSlice(rule, "http", "paths")
		if host == "" || len(paths) == 0 {
			continue
		}
		scheme := "http"
		if tlsHosts[host] {
			scheme = "https"
		}
		for _, p := range paths {
			m, _ := p.(map[string]any)
			sub, _ := m["path"].(string)
			out = append(out, scheme+"://"+host+strings.TrimSuffix(sub, "*"))
		}
	}
	return out
}

// loadBalancerURLs are a LoadBalancer Service's addresses with each of
// its ports: https for 443, http otherwise (the port left out for 80 and
// 443). Argo CD lists the addresses apart (networkingInfo.ingress); the
// summary gives them as URLs.
func loadBalancerURLs(obj *unstructured.Unstructured) []string {
	if t, _, _ := unstructured.NestedString(obj.Object, "spec", "type"); t != "LoadBalancer" {
		return nil
	}
	addrs := loadBalancerAddresses(obj)
	ports, _, _ := unstructured.NestedSlice(obj.Object, "spec", "ports")
	var out []string
	for _, a := range addrs {
		if len(ports) == 0 {
			out = append(out, "http://"+a)
		}
		for _, p := range ports {
			m, _ := p.(map[string]any)
			var port int64
			switch n := m["port"].(type) { // int64 from the API, float64 from JSON
			case int64:
				port = n
			case float64:
				port = int64(n)
			}
			switch port {
			case 443:
				out = append(out, "https://"+a)
			case 80, 0:
				out = append(out, "http://"+a)
			default:
				out = append(out, fmt.Sprintf("http://%s:%d", a, port))
			}
		}
	}
	return out
}

// loadBalancerAddresses are the hostnames (else IPs, an IPv6 one in
// brackets) of status.loadBalancer.ingress, in order, as URL hosts.
func loadBalancerAddresses(obj *unstructured.Unstructured) []string {
	ingress, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
	var out []string
	for _, in := range ingress {
		m, _ := in.(map[string]any)
		host, _ := m["hostname"].(string)
		if host == "" {
			host, _ = m["ip"].(string)
			if strings.Contains(host, ":") {
				host = "[" + host + "]"
			}
		}
		if host != "" && !slices.Contains(out, host) {
			out = append(out, host)
		}
	}
	return out
}

// sortedSet returns the distinct values of s, sorted; nil for none.
func sortedSet(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
