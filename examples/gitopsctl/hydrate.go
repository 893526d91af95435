package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/mail"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/hydrator"
)

// runHydrate hydrates an application's spec.sourceHydrator once, as Argo
// CD's source hydrator would, into a local clone (--clone DIR) of the
// repository hydrated to, on the branch it has checked out (which must be
// the app's hydrateTo or syncSource branch), and pushes nothing: a CI
// pipeline reviews and pushes the commit itself. The dry source is read
// as the engine reads it (--repositories for its credentials), rendered
// offline by default (--kube-version, --api-versions) or against the
// cluster. A dry commit that changes nothing rendered makes no commit
// (only the hydrator.metadata note moves).
func runHydrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hydrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cmd appCommand
	cmd.register(fs)
	clone := fs.String("clone", "", "local clone of the repository hydrated to, with the hydrated branch checked out (required)")
	author := fs.String("author", hydrator.DefaultAuthorName+" <"+hydrator.DefaultAuthorEmail+">", "author of the hydrated commit, \"Name <email>\" (argocd-cm commit.author.name and commit.author.email)")
	message := fs.String("commit-message-template", "", "commit message template (argocd-cm sourceHydrator.commitMessageTemplate; default Argo CD's)")
	var off offlineFlags
	off.register(fs)
	off.offline = true
	if !parseFlags(fs, args) {
		return 2
	}
	if *clone == "" {
		fmt.Fprintln(stderr, "gitopsctl hydrate: --clone is required")
		return 2
	}
	name, email, err := parseAuthor(*author)
	if err != nil {
		return fail(stderr, "hydrate", err)
	}
	_, err = off.setupMaybeOffline(stderr, &cmd, nil)
	defer cmd.Close()
	if err != nil {
		return fail(stderr, "hydrate", err)
	}
	if cmd.app.Spec.SourceHydrator == nil {
		return fail(stderr, "hydrate", fmt.Errorf("application %s has no spec.sourceHydrator", cmd.app.Name))
	}
	opts := hydrator.DefaultOptions()
	opts.AuthorName, opts.AuthorEmail = name, email
	if *message != "" {
		opts.CommitMessageTemplate = *message
	}
	h, err := hydrator.New(cmd.engine, opts)
	if err != nil {
		return fail(stderr, "hydrate", err)
	}
	o := h.HydrateInClone(ctx, *clone, []*v1alpha1.Application{cmd.app})
	if o.Err != nil {
		return fail(stderr, "hydrate", o.ErrorFor(v1alpha1.KeyOf(cmd.app)))
	}
	branch := cmd.app.Spec.SourceHydrator.GetHydrateToSource().TargetRevision
	switch {
	case o.Committed:
		fmt.Fprintf(stdout, "hydrated dry commit %s as %s on %s in %s\n", o.DrySHA, o.HydratedSHA, branch, *clone)
	case o.AlreadyHydrated:
		fmt.Fprintf(stdout, "dry commit %s is hydrated already: %s on %s, nothing committed\n", o.DrySHA, o.HydratedSHA, branch)
	default:
		fmt.Fprintf(stdout, "dry commit %s renders as %s on %s does: nothing committed (the note names the new dry commit)\n", o.DrySHA, o.HydratedSHA, branch)
	}
	return 0
}

// parseAuthor splits "Name <email>".
func parseAuthor(s string) (name, email string, err error) {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name == "" {
		return "", "", fmt.Errorf("--author %q: want \"Name <email>\"", s)
	}
	return a.Name, a.Address, nil
}
