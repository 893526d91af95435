package main

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/helmrepo"
)

// Source types as Argo CD names them (status.sourceType).
const (
	sourceHelm      = "Helm"
	sourceKustomize = "Kustomize"
	sourceDirectory = "Directory"
	sourcePlugin    = "Plugin"
)

// sourceTree is one source of an app as its repository has it at the
// source's target revision: the files, the source's folder in them, and
// the tool a render picks for it.
type sourceTree struct {
	FS   fs.FS
	Path string
	// Type is the source type, detected as a render detects it: a chart
	// is Helm, a plugin block Plugin, else the files of the folder decide
	// (render.Detect: a kustomization is Kustomize, a Chart.yaml Helm,
	// anything else Directory), whatever helm or kustomize block the
	// source has.
	Type     string
	Revision string
}

// sourceTreeOf reads src (a source of a) through the engine's sources,
// with the credentials a reads it with (Engine.Sources().RepoCredentials): a chart
// through the engine's chart source (Options.ChartSource, else one of the
// portal's own, made at first use), anything else through Engine.Sources().Source.
func (s *server) sourceTreeOf(ctx context.Context, a *gitops.Application, src v1alpha1.ApplicationSource) (sourceTree, error) {
	ctx, cancel := context.WithTimeout(ctx, kubeTimeout*3)
	defer cancel()
	repo := source.Repository{URL: src.RepoURL, Chart: src.Chart, TagPrefix: src.TagPrefix, Credentials: s.opts.Engine.Sources().RepoCredentials(a, src.RepoURL)}
	var from source.Source
	var err error
	if src.Chart != "" {
		from, err = s.chartSource()
	} else {
		from, err = s.opts.Engine.Sources().Source(src.RepoURL)
	}
	if err != nil {
		return sourceTree{}, fmt.Errorf("source %s: %w", source.RedactURL(src.RepoURL), err)
	}
	rev, err := from.Resolve(ctx, repo, src.TargetRevision)
	if err != nil {
		return sourceTree{}, fmt.Errorf("source %s: %w", source.RedactURL(src.RepoURL), err)
	}
	snap, err := from.Snapshot(ctx, repo, rev)
	if err != nil {
		return sourceTree{}, fmt.Errorf("source %s: %w", source.RedactURL(src.RepoURL), err)
	}
	t := sourceTree{FS: snap, Path: strings.Trim(src.Path, "/"), Revision: rev.String()}
	if t.Path == "" || src.Chart != "" {
		t.Path = "."
	}
	switch {
	case src.Chart != "":
		t.Type = sourceHelm
	case src.Plugin != nil:
		t.Type = sourcePlugin
	default:
		kind, err := render.Detect(snap, t.Path)
		if err != nil {
			return sourceTree{}, fmt.Errorf("source %s path %s: %w", source.RedactURL(src.RepoURL), t.Path, err)
		}
		t.Type = typeOfKind(kind)
	}
	return t, nil
}

// typeOfKind names a render kind as Argo CD's status.sourceType does
// (Jsonnet and plain manifests are a Directory source).
func typeOfKind(k render.Kind) string {
	switch k {
	case render.KindHelm:
		return sourceHelm
	case render.KindKustomize:
		return sourceKustomize
	case render.KindPlugin:
		return sourcePlugin
	}
	return sourceDirectory
}

// chartSource is the engine's chart source, or the portal's own.
func (s *server) chartSource() (source.Source, error) {
	if cs := s.opts.Engine.Settings().Options().ChartSource; cs != nil {
		return cs, nil
	}
	s.chartsOnce.Do(func() { s.charts, s.chartsErr = helmrepo.New(helmrepo.DefaultOptions()) })
	return s.charts, s.chartsErr
}
