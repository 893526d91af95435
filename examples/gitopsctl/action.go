package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kubegitops/gitops/resource"
)

// runAction lists (action list --app FILE RESOURCE) or runs (action run
// --app FILE RESOURCE ACTION [--param k=v]...) the resource actions of an
// object the application manages. RESOURCE is "[group/]Kind/name" in the
// app's destination namespace (--namespace to choose another), or a key
// as the status table prints it ("apps/Deployment ns/web"). Exit status:
// 0 done, 1 the action failed or was refused, 2 usage errors.
func runAction(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	usage := "usage: gitopsctl action list|run --app FILE [--namespace NS] [--param k=v]... RESOURCE [ACTION]"
	if len(args) == 0 || (args[0] != "list" && args[0] != "run") {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	verb := args[0]
	fs := flag.NewFlagSet("action "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cmd appCommand
	cmd.register(fs)
	namespace := fs.String("namespace", "", "the object's namespace (default: the app's destination namespace)")
	output := fs.String("o", "table", "output format: table or json")
	params := map[string]string{}
	fs.Func("param", "an action parameter as name=value (repeatable)", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return fmt.Errorf("want name=value, got %q", s)
		}
		params[k] = v
		return nil
	})
	fs.Usage = func() { fmt.Fprintln(stderr, usage); fs.PrintDefaults() }
	pos, ok := parseInterleaved(fs, args[1:])
	want := map[string]int{"list": 1, "run": 2}[verb]
	if !ok || len(pos) != want || (*output != "table" && *output != "json") {
		if ok {
			fs.Usage()
		}
		return 2
	}
	if verb == "list" && len(params) > 0 {
		return fail(stderr, "action list", fmt.Errorf("--param is for action run"))
	}
	err := cmd.setup(stderr, nil)
	defer cmd.Close()
	if err != nil {
		return fail(stderr, "action", err)
	}
	ns := *namespace
	if ns == "" {
		ns = cmd.app.Spec.Destination.Namespace
	}
	key, err := parseResourceArg(pos[0], ns)
	if err != nil {
		return fail(stderr, "action", err)
	}
	if verb == "list" {
		list, err := cmd.engine.Actions(ctx, cmd.app, key)
		if err != nil {
			fmt.Fprintf(stderr, "gitopsctl action list: %v\n", err)
			return 1
		}
		if *output == "json" {
			return encodeJSON(stdout, stderr, list)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ACTION\tDISABLED\tPARAMS")
		for _, a := range list {
			var ps []string
			for _, p := range a.Params {
				s := p.Name
				if p.Default != "" {
					s += "=" + p.Default
				}
				ps = append(ps, s)
			}
			fmt.Fprintf(tw, "%s\t%v\t%s\n", a.Name, a.Disabled, strings.Join(ps, ","))
		}
		tw.Flush()
		return 0
	}
	res, err := cmd.engine.RunAction(ctx, cmd.app, key, pos[1], params)
	if err != nil {
		fmt.Fprintf(stderr, "gitopsctl action run: %v\n", err)
		return 1
	}
	if *output == "json" {
		return encodeJSON(stdout, stderr, res)
	}
	if len(res.Changes) == 0 {
		fmt.Fprintf(stdout, "action %s on %s changed nothing\n", res.Action, res.Object)
	}
	for _, c := range res.Changes {
		fmt.Fprintf(stdout, "%s %s\n", c.Operation, c.Key)
	}
	return 0
}

func encodeJSON(stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fail(stderr, "action", err)
	}
	return 0
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments, and returns the positionals.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, bool) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, false
		}
		if fs.NArg() == 0 {
			return pos, true
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// parseResourceArg reads RESOURCE: "[group/]Kind/name" in namespace ns, or
// a key as resource.Key.String prints it.
func parseResourceArg(s, ns string) (resource.Key, error) {
	if strings.Contains(s, " ") {
		return resource.ParseKey(s)
	}
	parts := strings.Split(s, "/")
	var k resource.Key
	switch len(parts) {
	case 2:
		k = resource.Key{Kind: parts[0], Name: parts[1], Namespace: ns}
	case 3:
		k = resource.Key{Group: parts[0], Kind: parts[1], Name: parts[2], Namespace: ns}
	default:
		return k, fmt.Errorf("resource %q: want [group/]Kind/name", s)
	}
	if err := k.Validate(); err != nil {
		return k, fmt.Errorf("resource %q: %w", s, err)
	}
	return k, nil
}
