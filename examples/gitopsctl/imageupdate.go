package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/imageupdate"
	imagecontroller "github.com/kubegitops/gitops/imageupdate/controller"
	"github.com/kubegitops/gitops/source"
)

// runImageUpdate checks an application's images as Argo CD Image Updater
// would (its argocd-image-updater.argoproj.io/ annotations) and prints
// what changes: each image's old and new tag, then for the git write-back
// a unified diff of every file, for the argocd write-back the parameter
// override. With --dry-run nothing is committed. Without it the git
// write-back commits and pushes (credentials from GITOPS_GIT_USERNAME and
// GITOPS_GIT_PASSWORD); the argocd override is printed for a host engine
// to hold (this command runs no engine that could hold it).
func runImageUpdate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("image-update", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cmd appCommand
	cmd.register(fs)
	dryRun := fs.Bool("dry-run", false, "print what would change; commit nothing")
	dockerConfig := fs.String("docker-config", "", "Docker config JSON with registry credentials")
	if !parseFlags(fs, args) {
		return 2
	}
	creds := gitCredentialsFromEnv()
	if err := cmd.setup(stderr, func(o *gitops.Options) {
		if creds != nil {
			o.Credentials = func(string) *source.Credentials { return creds }
		}
	}); err != nil {
		cmd.Close()
		return fail(stderr, "image-update", err)
	}
	defer cmd.Close()
	opts := imageupdate.DefaultOptions()
	opts.DryRun = *dryRun
	if *dockerConfig != "" {
		b, err := os.ReadFile(*dockerConfig)
		if err != nil {
			return fail(stderr, "image-update", err)
		}
		opts.DockerConfig = b
	}
	in, err := imagecontroller.AppOf(ctx, cmd.engine, cmd.app)
	if err != nil {
		return fail(stderr, "image-update", err)
	}
	res, err := imageupdate.New(opts).Update(ctx, in)
	if err != nil {
		return fail(stderr, "image-update", err)
	}
	printImageResult(stdout, res, *dryRun)
	return 0
}

func gitCredentialsFromEnv() *source.Credentials {
	u, p := os.Getenv("GITOPS_GIT_USERNAME"), os.Getenv("GITOPS_GIT_PASSWORD")
	if u == "" && p == "" {
		return nil
	}
	return &source.Credentials{Username: u, Password: p}
}

func printImageResult(w io.Writer, res imageupdate.Result, dryRun bool) {
	if len(res.Changes) == 0 && len(res.Skipped) == 0 {
		fmt.Fprintf(w, "%s: no image to update\n", res.App)
		return
	}
	for _, c := range res.Changes {
		to := c.NewTag
		if c.NewDigest != "" {
			to += "@" + c.NewDigest
		}
		fmt.Fprintf(w, "%s: %s: %q -> %q\n", res.App, c.Repository, c.OldTag, to)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(w, "%s: %s: skipped: %s\n", res.App, s.Image, s.Reason)
	}
	if res.Method == imageupdate.WriteBackGit {
		for _, f := range res.Files {
			d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
				A: difflib.SplitLines(string(f.Before)), B: difflib.SplitLines(string(f.After)),
				FromFile: "a/" + f.Path, ToFile: "b/" + f.Path, Context: 3,
			})
			fmt.Fprint(w, d)
		}
		switch {
		case dryRun && len(res.Files) > 0:
			fmt.Fprintln(w, "dry run: nothing committed")
		case len(res.Changes) > 0 && len(res.Files) == 0:
			fmt.Fprintln(w, "the repository already has these images: nothing to commit")
		case res.Commit != "":
			fmt.Fprintf(w, "committed %s to %s\n", res.Commit, res.Branch)
		}
		return
	}
	if len(res.Changes) > 0 {
		fmt.Fprintln(w, "parameter override (write-back-method argocd):")
	}
	if ov := res.Override; ov != nil {
		for _, i := range ov.KustomizeImages {
			fmt.Fprintf(w, "  kustomize image %s\n", i)
		}
		for _, p := range ov.HelmParameters {
			fmt.Fprintf(w, "  helm parameter %s=%s\n", p.Name, p.Value)
		}
		if dryRun {
			fmt.Fprintln(w, "dry run: an engine would hold this override")
		} else {
			fmt.Fprintln(w, "hold this override in the engine that runs the app (imageupdate/controller.ApplyOverride)")
		}
	}
}
