package main

import (
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
// folder (not recursively), and refuses two applications of one name.
func loadAppsPath(path string) ([]*gitops.Application, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if info.IsDir() {
		files = nil
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
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
	}
	var out []*gitops.Application
	seen := map[string]string{}
	for _, f := range files {
		apps, err := loadAppFile(f)
		if err != nil {
			return nil, err
		}
		for _, a := range apps {
			if prev, dup := seen[a.Name]; dup {
				return nil, fmt.Errorf("application %q is defined in %s and in %s", a.Name, prev, f)
			}
			seen[a.Name] = f
			out = append(out, a)
		}
	}
	return out, nil
}
