package imageupdate

import (
	"errors"
	"testing"
)

func TestParseAnnotations(t *testing.T) {
	cfg, ok, err := ParseAnnotations(ann(
		"image-list", "web=localhost:5000/team/app:~1.2, nginx, db=docker.io/library/postgres:15.x",
		"update-strategy", "latest",
		"web.update-strategy", "semver",
		"web.allow-tags", "regexp:^1\\.",
		"web.ignore-tags", "1.2.3, *-rc*",
		"web.platforms", "linux/amd64,linux/arm/v7",
		"db.kustomize.image-name", "postgres",
		"write-back-method", "git:secret:argocd/git-creds",
		"git-branch", "main:update-{{.SHA256}}",
		"write-back-target", "helmvalues:/env/values.yaml",
	))
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if len(cfg.Images) != 3 {
		t.Fatalf("images %+v", cfg.Images)
	}
	web, plain, db := cfg.Images[0], cfg.Images[1], cfg.Images[2]
	if web.Repository != "localhost:5000/team/app" || web.Constraint != "~1.2" || web.Strategy != StrategySemver || !web.Allow.MatchString("1.4") ||
		len(web.Ignore) != 2 || len(web.Platforms) != 2 {
		t.Errorf("web %+v", web)
	}
	if plain.Alias != "" || plain.Repository != "nginx" || plain.Strategy != StrategyNewestBuild {
		t.Errorf("plain %+v", plain)
	}
	if db.KustomizeImageName != "postgres" || db.Strategy != StrategyNewestBuild || db.Constraint != "15.x" {
		t.Errorf("db %+v", db)
	}
	if cfg.Method != WriteBackGit || cfg.GitSecret != "argocd/git-creds" || cfg.BaseBranch != "main" || cfg.TargetBranch != "update-{{.SHA256}}" ||
		cfg.Target != "helmvalues" || cfg.TargetPath != "/env/values.yaml" {
		t.Errorf("write-back %+v", cfg)
	}
	if !web.eligible("1.4.0") || web.eligible("1.2.3") || web.eligible("1.5.0-rc1") || web.eligible("2.0.0") {
		t.Error("allow/ignore rules")
	}
	if _, ok, err := ParseAnnotations(map[string]string{"other": "x"}); ok || err != nil {
		t.Error("an app without image-list is not configured")
	}
	for name, c := range map[string]struct {
		a    map[string]string
		want error
	}{
		"bad strategy":         {ann("image-list", "a=x", "a.update-strategy", "newest"), ErrAnnotation},
		"bad allow":            {ann("image-list", "a=x", "a.allow-tags", "^1"), ErrAnnotation},
		"bad platform":         {ann("image-list", "a=x", "a.platforms", "linux"), ErrAnnotation},
		"option without alias": {ann("image-list", "x", "x.update-strategy", "digest"), ErrAnnotation},
		"unknown key":          {ann("image-list", "a=x", "git-repository", "https://example.com/r"), ErrAnnotation},
		"digest needs a tag":   {ann("image-list", "a=x", "a.update-strategy", "digest"), ErrConstraint},
		"bad method":           {ann("image-list", "a=x", "write-back-method", "git:creds"), ErrAnnotation},
		"target without git":   {ann("image-list", "a=x", "write-back-target", "kustomization"), ErrAnnotation},
		"bad target":           {ann("image-list", "a=x", "write-back-method", "git", "write-back-target", "values:x"), ErrAnnotation},
		"digest in list":       {ann("image-list", "a=x@sha256:abc"), ErrAnnotation},
		"duplicate alias":      {ann("image-list", "a=x,a=y"), ErrAnnotation},
	} {
		if _, _, err := ParseAnnotations(c.a); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

func TestChooseSemver(t *testing.T) {
	tags := []Tag{{Name: "1.0.0"}, {Name: "v1.0.1"}, {Name: "1.1.0-rc1"}, {Name: "latest"}, {Name: "0.9"}}
	for constraint, want := range map[string]string{"~1.0": "v1.0.1", "": "1.1.0-rc1", ">=1.1.0-0": "1.1.0-rc1", "<1": "0.9", "^2": ""} {
		cfg, _, err := ParseAnnotations(ann("image-list", "a=x:"+constraint))
		if constraint == "" {
			cfg, _, err = ParseAnnotations(ann("image-list", "a=x"))
		}
		if err != nil {
			t.Fatal(err)
		}
		got, ok := cfg.Images[0].Choose(tags)
		if got.Name != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", constraint, got.Name, ok, want)
		}
	}
}
