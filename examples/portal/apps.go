package main

import (
	"fmt"
	"slices"

	"github.com/kubegitops/gitops"
)

// appSet is the apps the portal serves, by name: those of --apps DIR, plus
// the ones created through the portal, less the ones deleted through it.
// Every route reads it through app and names, under its lock.
type appSet struct {
	byName map[string]*gitops.Application
	sorted []string
}

// app returns the app named name.
func (s *server) app(name string) (*gitops.Application, bool) {
	s.appsMu.RLock()
	defer s.appsMu.RUnlock()
	a, ok := s.apps.byName[name]
	return a, ok
}

// appNames returns the apps' names, sorted (a copy).
func (s *server) appNames() []string {
	s.appsMu.RLock()
	defer s.appsMu.RUnlock()
	return slices.Clone(s.apps.sorted)
}

// addApp adds a, refusing a name already served.
func (s *server) addApp(a *gitops.Application) error {
	s.appsMu.Lock()
	defer s.appsMu.Unlock()
	if _, dup := s.apps.byName[a.Name]; dup {
		return fmt.Errorf("application %s: already exists", a.Name)
	}
	s.apps.byName[a.Name] = a
	i, _ := slices.BinarySearch(s.apps.sorted, a.Name)
	s.apps.sorted = slices.Insert(s.apps.sorted, i, a.Name)
	return nil
}

// removeApp forgets the app named name.
func (s *server) removeApp(name string) {
	s.appsMu.Lock()
	defer s.appsMu.Unlock()
	delete(s.apps.byName, name)
	if i, ok := slices.BinarySearch(s.apps.sorted, name); ok {
		s.apps.sorted = slices.Delete(s.apps.sorted, i, i+1)
	}
}

// putApp serves a, replacing the app of its name (namespace mode: the
// API server's copy is the truth); it returns the app replaced.
func (s *server) putApp(a *gitops.Application) (*gitops.Application, bool) {
	s.appsMu.Lock()
	defer s.appsMu.Unlock()
	prev, ok := s.apps.byName[a.Name]
	s.apps.byName[a.Name] = a
	if !ok {
		i, _ := slices.BinarySearch(s.apps.sorted, a.Name)
		s.apps.sorted = slices.Insert(s.apps.sorted, i, a.Name)
	}
	return prev, ok
}
