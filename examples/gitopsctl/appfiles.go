package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// loadApp reads the one Application of file, or the one called name when
// the file holds several.
func loadApp(file, name string) (*gitops.Application, error) {
	if file == "" {
		return nil, fmt.Errorf("--app FILE is required")
	}
	apps, err := loadAppFile(file)
	if err != nil {
		return nil, err
	}
	if name == "" && len(apps) == 1 {
		return apps[0], nil
	}
	var names []string
	for _, a := range apps {
		if a.Name == name {
			return a, nil
		}
		names = append(names, a.Name)
	}
	if name == "" {
		return nil, fmt.Errorf("%s holds %d applications (%s): pick one with --name", file, len(apps), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("%s: no application %q (have %s)", file, name, strings.Join(names, ", "))
}

// loadAppFile decodes every Application of one file strictly.
func loadAppFile(file string) ([]*gitops.Application, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	apps, err := gitops.LoadApplications(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(apps) == 0 {
		return nil, fmt.Errorf("%s: no Application found", file)
	}
	out := make([]*gitops.Application, len(apps))
	for i := range apps {
		out[i] = &apps[i]
	}
	return out, nil
}

// loadAppsPath reads a file, or every .yaml, .yml and .json file of a
// folder (not recursively), and refuses two applications of one name. Any
// bad file fails it; loadAppsTolerant is the form that keeps the others.
func loadAppsPath(path string) ([]*gitops.Application, error) {
	apps, bad, err := loadAppsTolerant(path)
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, errors.Join(bad...)
	}
	return apps, nil
}

// loadAppsTolerant is loadAppsPath for a host that manages whatever is
// valid, as Argo CD marks one broken Application and manages the rest: it
// returns the applications of every file that loads, and one
// *v1alpha1.FileError per file that does not (its decoding error names the
// line and the field) or whose application repeats an earlier one. err is
// only for a path that cannot be read or holds no file at all.
func loadAppsTolerant(path string) (apps []*gitops.Application, bad []error, err error) {
	dir, name := filepath.Dir(path), filepath.Base(path)
	loaded, err := v1alpha1.LoadApplicationsFS(os.DirFS(dir), name)
	// Name each file as the user gave its folder, not relative to it.
	rebase := func(e error) {
		var fe *v1alpha1.FileError
		if errors.As(e, &fe) {
			fe.File = filepath.Join(dir, filepath.FromSlash(fe.File))
		}
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		bad = joined.Unwrap()
		for _, b := range bad {
			rebase(b)
		}
	} else if err != nil {
		rebase(err)
		return nil, nil, err
	}
	for i := range loaded {
		apps = append(apps, &loaded[i])
	}
	return apps, bad, nil
}
