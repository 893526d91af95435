package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/kubegitops/gitops/notify"
	"sigs.k8s.io/yaml"
)

// runNotifications runs the offline notification commands, as Argo CD's
// `argocd admin notifications` ones:
//
//	notifications trigger run --config CM.yaml [--secret S.yaml] TRIGGER APP.yaml
//	notifications template notify --config CM.yaml [--secret S.yaml] TEMPLATE APP.yaml
//
// APP.yaml is an Application with its status (kubectl get app -o yaml).
// Exit status: trigger run 0 when the trigger fires, 1 when it does not;
// template notify 0; 2 on any error.
func runNotifications(_ context.Context, args []string, stdout, stderr io.Writer) int {
	usage := func() int {
		fmt.Fprintln(stderr, "usage: gitopsctl notifications trigger run --config CM.yaml [--secret S.yaml] [--with-catalog] TRIGGER APP.yaml")
		fmt.Fprintln(stderr, "       gitopsctl notifications template notify --config CM.yaml [--secret S.yaml] [--with-catalog] [--recipient R] TEMPLATE APP.yaml")
		return 2
	}
	if len(args) < 2 {
		return usage()
	}
	verb := args[0] + " " + args[1]
	if verb != "trigger run" && verb != "template notify" {
		return usage()
	}
	fs := flag.NewFlagSet("notifications "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cmPath := fs.String("config", "", "argocd-notifications-cm manifest (required)")
	secretPath := fs.String("secret", "", "argocd-notifications-secret manifest")
	withCatalog := fs.Bool("with-catalog", false, "add the shipped catalog's triggers and templates under the config's")
	recipient := fs.String("recipient", "", "recipient the template sees as .recipient (template notify)")
	if err := fs.Parse(args[2:]); err != nil {
		return 2
	}
	if *cmPath == "" || fs.NArg() != 2 {
		return usage()
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "gitopsctl notifications %s: %v\n", verb, err)
		return 2
	}
	cfg, err := loadNotifyConfig(*cmPath, *secretPath, *withCatalog)
	var skipped *notify.SkippedError
	if errors.As(err, &skipped) && cfg != nil {
		// As Argo CD, a bad trigger is named and left out; the rest serve.
		fmt.Fprintf(stderr, "gitopsctl notifications %s: warning: %v\n", verb, err)
	} else if err != nil {
		return fail(err)
	}
	app, err := loadAppMap(fs.Arg(1))
	if err != nil {
		return fail(err)
	}
	if verb == "trigger run" {
		code, err := triggerRun(cfg, fs.Arg(0), app, stdout)
		if err != nil {
			return fail(err)
		}
		return code
	}
	if err := templateNotify(cfg, fs.Arg(0), app, *recipient, stdout); err != nil {
		return fail(fmt.Errorf("%s", cfg.Redact(err.Error())))
	}
	return 0
}

func loadNotifyConfig(cmPath, secretPath string, withCatalog bool) (*notify.Config, error) {
	if !withCatalog {
		return notify.LoadFiles(cmPath, secretPath, notify.DefaultLoadOptions())
	}
	cm, err := os.ReadFile(cmPath)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(cm, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", cmPath, err)
	}
	merged, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": notify.WithCatalog(doc.Data)})
	if err != nil {
		return nil, err
	}
	var secret []byte
	if secretPath != "" {
		if secret, err = os.ReadFile(secretPath); err != nil {
			return nil, err
		}
	}
	c, err := notify.LoadManifests(merged, secret, notify.DefaultLoadOptions())
	if err != nil {
		// A *notify.SkippedError comes with a usable Config: keep both.
		return c, fmt.Errorf("%s: %w", cmPath, err)
	}
	return c, nil
}

// loadAppMap reads an Application manifest, status included, as the map
// triggers and templates see.
func loadAppMap(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var app map[string]any
	if err := yaml.Unmarshal(b, &app); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if app["kind"] != "Application" {
		return nil, fmt.Errorf("%s: kind is %v, want Application", path, app["kind"])
	}
	return app, nil
}

// triggerRun prints each condition of the trigger with its result and,
// when it does not match, why; 0 when one matches, else 1.
func triggerRun(cfg *notify.Config, name string, app map[string]any, stdout io.Writer) (int, error) {
	t, err := cfg.Trigger(name)
	if err != nil {
		return 2, err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONDITION\tRESULT\tREASON")
	code := 1
	for _, r := range t.Evaluate(notify.NewEnv(app)) {
		reason := r.Reason
		if r.Matched {
			code = 0
			if r.OncePer != "" {
				reason = "once per " + r.OncePer
			}
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\n", oneLine(r.When), r.Matched, oneLine(reason))
	}
	return code, tw.Flush()
}

// templateNotify prints the template rendered for each configured service
// (or once, for no service type, when none is configured): its message and
// its service blocks as YAML, as notifications-engine renders them.
func templateNotify(cfg *notify.Config, name string, app map[string]any, recipient string, stdout io.Writer) error {
	if _, err := cfg.Template(name); err != nil {
		return err
	}
	services := cfg.Services()
	if len(services) == 0 {
		services = []string{""}
	}
	for _, svc := range services {
		msg, err := cfg.RenderFor(name, app, notify.Destination{Service: svc, Recipient: recipient})
		if err != nil {
			return err
		}
		typ, _ := cfg.ServiceType(svc)
		if svc == "" {
			fmt.Fprintln(stdout, "# no service configured")
		} else {
			fmt.Fprintf(stdout, "# service %s (%s)\n", svc, typ)
		}
		printField(stdout, "title", msg.Title)
		printField(stdout, "message", msg.Notification.Message)
		blocks := msg.Notification
		blocks.Message = ""
		if b, err := yaml.Marshal(blocks); err == nil && strings.TrimSpace(string(b)) != "{}" {
			fmt.Fprint(stdout, string(b))
		}
		for _, typ := range slices.Sorted(maps.Keys(msg.Fields)) {
			for _, f := range slices.Sorted(maps.Keys(msg.Fields[typ])) {
				printField(stdout, typ+"."+f, msg.Fields[typ][f])
			}
		}
	}
	return nil
}

func printField(w io.Writer, name, value string) {
	if strings.TrimSpace(value) == "" {
		return
	}
	fmt.Fprintf(w, "%s:\n  %s\n", name, strings.ReplaceAll(strings.TrimRight(value, "\n"), "\n", "\n  "))
}
