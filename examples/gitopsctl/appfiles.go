package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubegitops/gitops"
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
// *appFileError per file that does not (its decoding error names the line
// and the field) or whose application repeats an earlier name. err is only
// for a path that cannot be read or holds no file at all.
func loadAppsTolerant(path string) (apps []*gitops.Application, bad []error, err error) {
	files, err := appFiles(path)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]string{}
	for _, f := range files {
		loaded, err := loadAppFile(f)
		if err != nil {
			bad = append(bad, &appFileError{File: f, Err: err})
			continue
		}
		for _, a := range loaded {
			if prev, dup := seen[a.Name]; dup {
				bad = append(bad, &appFileError{File: f, App: a.Name, Err: fmt.Errorf("application %q is defined in %s and in %s", a.Name, prev, f)})
				continue
			}
			seen[a.Name] = f
			apps = append(apps, a)
		}
	}
	return apps, bad, nil
}

// appFiles lists path itself, or the .yaml, .yml and .json files of the
// folder path.
func appFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".yaml", ".yml", ".json":
			if !e.IsDir() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no .yaml, .yml or .json file", path)
	}
	return files, nil
}

// appFileError is an Application file that was not loaded: File names it,
// App the application when one was decoded, and Err (which already names
// the file, and the line and field of a decoding error) says why.
type appFileError struct {
	File string
	App  string
	Err  error
}

// Error implements error.
func (e *appFileError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *appFileError) Unwrap() error { return e.Err }
