package v1alpha1

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// FileError is a manifest file that did not load, or did not load whole.
//
// +kubebuilder:object:generate=false
type FileError struct {
	// File is the file's name in the fs.FS it was read from.
	File string
	// App is the Application at fault when the problem is one Application
	// (its key repeats one loaded before); zero otherwise.
	App AppKey
	// Err says what is wrong; for a decoding error it is the errors.Join
	// of *LoadError that name the document, line and field.
	Err error
}

// Error implements error: "file: what".
func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }

// IsManifestFile reports whether name ends in .yaml, .yml or .json (any
// case): the files a folder of manifests is read from.
func IsManifestFile(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// ErrNoManifests is the cause of the *FileError of a folder that holds no
// manifest file.
var ErrNoManifests = errors.New("no .yaml, .yml or .json file")

// ManifestFiles lists name itself when it is a file of fsys, or, when it is
// a folder, the manifest files (IsManifestFile) directly in it, sorted; sub
// folders are not read. A name fsys cannot stat or read, or a folder
// without a manifest file (ErrNoManifests), is a *FileError naming it.
func ManifestFiles(fsys fs.FS, name string) ([]string, error) {
	info, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, &FileError{File: name, Err: pathCause(err)}
	}
	if !info.IsDir() {
		return []string{name}, nil
	}
	entries, err := fs.ReadDir(fsys, name)
	if err != nil {
		return nil, &FileError{File: name, Err: pathCause(err)}
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && IsManifestFile(e.Name()) {
			files = append(files, path.Join(name, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, &FileError{File: name, Err: ErrNoManifests}
	}
	sort.Strings(files)
	return files, nil
}

// pathCause is the cause of an *fs.PathError (whose path the *FileError
// names already), or err itself.
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// LoadApplicationsFS reads the Applications of name in fsys: the file name,
// or every manifest file of the folder name (ManifestFiles). Each file is
// decoded as LoadApplications decodes a stream.
//
// A file that cannot be read, does not decode, holds no Application, or
// holds an Application whose key (namespace and name) a file or document
// before it holds, is a *FileError naming the file (and, through its
// *LoadError, the document, line and field); the error returned joins them
// all (errors.Join). The Applications of the files that loaded are returned
// with that error, so a host can manage them and report the rest, as Argo
// CD marks one broken Application and manages the others. A name that
// cannot be listed (ManifestFiles) is its *FileError alone, without
// Applications.
func LoadApplicationsFS(fsys fs.FS, name string) ([]Application, error) {
	files, err := ManifestFiles(fsys, name)
	if err != nil {
		return nil, err
	}
	var (
		out  []Application
		errs []error
		seen = map[AppKey]string{}
	)
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			errs = append(errs, &FileError{File: f, Err: pathCause(err)})
			continue
		}
		apps, err := LoadApplications(bytes.NewReader(data))
		if err == nil && len(apps) == 0 {
			err = errors.New("no Application found")
		}
		if err != nil {
			errs = append(errs, &FileError{File: f, Err: err})
			continue
		}
		for _, a := range apps {
			k := KeyOf(&a)
			if prev, dup := seen[k]; dup {
				errs = append(errs, &FileError{File: f, App: k, Err: fmt.Errorf("application %q is defined in %s and in %s", k, prev, f)})
				continue
			}
			seen[k] = f
			out = append(out, a)
		}
	}
	return out, errors.Join(errs...)
}
