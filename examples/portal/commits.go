package main

import (
	"context"
	"strings"
	gosync "sync"

	"github.com/kubegitops/gitops"
)

// commitMeta is the author and message of a commit, for people.
type commitMeta struct {
	Author  string `json:"author"`
	Message string `json:"message"`
	// Subject is the message's first line.
	Subject string `json:"subject"`
}

// commitCache keeps the metadata of the commits the portal showed, by
// repository and commit (a commit never changes, so entries never go
// stale); a lookup that failed is tried again the next time.
type commitCache struct {
	mu gosync.Mutex
	m  map[string]commitMeta
}

// commitOf returns the metadata of commit in the repository of src, a
// source of app: from the cache (by the app's project, whose credentials
// read it, repository and commit), else through Engine.RevisionMetadata,
// bounded by kubeTimeout.
// nil when commit is empty or the source keeps no metadata (a chart) or
// cannot be read now.
func (s *server) commitOf(ctx context.Context, app *gitops.Application, src gitops.ApplicationSource, commit string) *commitMeta {
	if commit == "" || s.opts.Engine == nil {
		return nil
	}
	key := app.Spec.Project + "\x00" + src.RepoURL + "\x00" + src.Chart + "\x00" + commit
	c := s.commits
	c.mu.Lock()
	md, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return &md
	}
	ctx, cancel := context.WithTimeout(ctx, kubeTimeout)
	defer cancel()
	rm, err := s.opts.Engine.RevisionMetadata(ctx, app, src, commit)
	if err != nil {
		return nil
	}
	subject, _, _ := strings.Cut(strings.TrimSpace(rm.Message), "\n")
	md = commitMeta{Author: rm.Author, Message: rm.Message, Subject: subject}
	c.mu.Lock()
	c.m[key] = md
	c.mu.Unlock()
	return &md
}

// firstCommit is the metadata of the first source's commit of revisions
// (one commit per source, comma-separated, as the engine writes them).
func (s *server) firstCommit(ctx context.Context, a *gitops.Application, revisions string) *commitMeta {
	srcs := a.Spec.AllSources()
	if len(srcs) == 0 {
		return nil
	}
	first, _, _ := strings.Cut(revisions, ",")
	return s.commitOf(ctx, a, srcs[0], first)
}
