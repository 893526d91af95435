// Command minimal is the smallest complete host of the gitops engine: it
// loads Argo CD Application manifests and keeps them reconciled.
//
// It builds on package engine alone, the lean core: apps of plain
// manifests (a directory of YAML or JSON, from Git or a local folder) are
// rendered, compared, synced and healed; an app that needs a tool the
// core leaves out (Helm, Kustomize, Jsonnet, a plugin, a Helm chart
// repository) fails its comparison with a condition naming what is
// missing (render.ErrNoRenderer, engine.ErrNoChartSource), never
// renders as empty. Using package github.com/kubegitops/gitops instead
// (gitops.DefaultOptions and gitops.New, the same names) wires all of
// them in, at about two and a half times the binary's size (BENCHMARKS.md,
// "A lean core within a budget").
package main
