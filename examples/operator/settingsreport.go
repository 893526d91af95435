package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegitops/gitops/argocdcm"
)

// report writes the Events of one ConfigMap's keys: the malformed ones,
// the unsupported ones, and those that set nothing here, each kind in
// one Event naming every key (split when longer than an Event holds).
func (s *settings) report(obj *corev1.ConfigMap, name string, err error, ignored []argocdcm.Ignored, warnings []string) {
	var malformed, unsupported []string
	for _, e := range joinedErrors(err) {
		s.log.Error(e, "setting left out", "configMap", s.namespace+"/"+name)
		var se *argocdcm.SettingError
		msg := e.Error()
		if errors.As(e, &se) {
			msg = se.Key + ": " + se.Err.Error()
		}
		if errors.Is(e, argocdcm.ErrUnsupported) {
			unsupported = append(unsupported, msg)
		} else {
			malformed = append(malformed, msg)
		}
	}
	var unused []string
	for _, g := range argocdcm.Groups(ignored) {
		s.log.Info(name+": "+g.Why, "keys", g.Keys, "configMap", s.namespace+"/"+name)
		unused = append(unused, noteChunks(name+": "+g.Why+": ", ", ", g.Keys)...)
	}
	for _, w := range warnings {
		if !slices.ContainsFunc(ignored, func(ig argocdcm.Ignored) bool { return strings.HasPrefix(w, name+" "+ig.Key+":") }) {
			s.log.Info(w, "configMap", s.namespace+"/"+name)
			unused = append(unused, w) // a note of an applied key (useOpenLibs' sandbox)
		}
	}
	for _, n := range noteChunks(name+": left out, the rest applies: ", "; ", malformed) {
		s.event(obj, corev1.EventTypeWarning, ReasonInvalidSetting, n)
	}
	for _, n := range noteChunks(name+": not supported by this program, left out: ", "; ", unsupported) {
		s.event(obj, corev1.EventTypeWarning, ReasonUnsupportedSetting, n)
	}
	for _, n := range joinNotes(unused) {
		s.event(obj, corev1.EventTypeWarning, ReasonUnusedSetting, n)
	}
}

// restartNeeded reports the keys of argocd-cmd-params-cm changed since
// start that apply only at start.
func (s *settings) restartNeeded(obj *corev1.ConfigMap, data map[string]string) {
	var keys []string
	for _, key := range changedKeys(s.started[argocdcm.ParamsConfigMapName], data) {
		if k, ok := argocdcm.LookupParam(key); ok && (k.Use != argocdcm.UseApplied || k.Live) {
			continue
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return
	}
	s.log.Info("settings changed that take effect when the operator restarts", "keys", keys)
	for _, n := range noteChunks(argocdcm.ParamsConfigMapName+": changed, taking effect when the operator restarts (as Argo CD's components read them at start): ", ", ", keys) {
		s.event(obj, corev1.EventTypeWarning, ReasonRestartNeeded, n)
	}
}

// event writes one Event on the ConfigMap obj. It is written as it is,
// not through an event recorder, which would merge it with any other
// Event of the same reason on the ConfigMap (events.k8s.io series), losing
// its note: each note here names keys the others do not.
func (s *settings) event(obj *corev1.ConfigMap, eventType, reason, note string) {
	if !s.reporting || obj == nil {
		return
	}
	host, _ := os.Hostname()
	e := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", obj.Name, time.Now().UnixNano()), Namespace: obj.Namespace},
		EventTime:           metav1.NewMicroTime(time.Now()),
		ReportingController: "gitops-operator",
		ReportingInstance:   "gitops-operator-" + host,
		Action:              "LoadSettings",
		Reason:              reason,
		Type:                eventType,
		Note:                note,
		Regarding: corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: obj.Namespace, Name: obj.Name,
			UID: obj.UID, ResourceVersion: obj.ResourceVersion},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.kube.EventsV1().Events(obj.Namespace).Create(ctx, e, metav1.CreateOptions{}); err != nil {
		s.log.Error(err, "writing an Event", "configMap", obj.Namespace+"/"+obj.Name, "reason", reason)
	}
}

// noteChunks lists items after prefix, separated by sep, in as many notes
// as it takes to keep each within maxNote (an item too long for one is
// cut).
func noteChunks(prefix, sep string, items []string) []string {
	var out []string
	cur := ""
	for _, it := range items {
		if len(prefix)+len(it) > maxNote {
			it = it[:max(maxNote-len(prefix)-3, 0)] + "..."
		}
		switch {
		case cur == "":
			cur = prefix + it
		case len(cur)+len(sep)+len(it) > maxNote:
			out = append(out, cur)
			cur = prefix + it
		default:
			cur += sep + it
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// joinNotes joins notes with "; " into as few as keep each within
// maxNote.
func joinNotes(notes []string) []string {
	var out []string
	cur := ""
	for _, n := range notes {
		switch {
		case cur == "":
			cur = n
		case len(cur)+2+len(n) > maxNote:
			out = append(out, cur)
			cur = n
		default:
			cur += "; " + n
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// joinedErrors are the errors joined in err.
func joinedErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}

// changedKeys are the keys whose values differ between a and b, sorted.
func changedKeys(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
