package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

// Unit says how a figure is printed and which way is better.
type Unit string

// The units of the table.
const (
	Seconds      Unit = "s"
	Millis       Unit = "ms"
	Micros       Unit = "µs"
	PerSecond    Unit = "objects/s"
	AppsPerSec   Unit = "apps/s"
	AllocsPerObj Unit = "allocs/object"
	BytesPerObj  Unit = "B/object"
	Writes       Unit = "writes"
	Requests     Unit = "requests"
	MiB          Unit = "MiB"
	Count        Unit = "count"
	CPUSeconds   Unit = "CPU s"
	CPUMillis    Unit = "CPU ms"
	Times        Unit = "x"
)

// higherIsBetter reports whether a bigger figure is a better one.
func (u Unit) higherIsBetter() bool { return u == PerSecond || u == AppsPerSec }

// Row is one comparison: our figure and the alternative's, in one unit.
// Theirs is zero when there is no alternative to measure (then Ref may name
// a published figure instead).
type Row struct {
	Section string
	Measure string
	Ours    float64
	Theirs  float64
	// TheirName names the alternative ("floor", "kubectl", "Flux ssa").
	TheirName string
	Unit      Unit
	// Ref says where a figure that was not measured in this run comes from.
	Ref string
	// Target is the target of an earlier issue or of baselines.md, if any.
	Target string
	// PairedRatio, when not zero, is the median of ours/theirs over runs
	// measured back to back; it resists the noise of a shared machine
	// better than the quotient of the two medians, and Ratio returns it.
	PairedRatio float64
}

// Ratio is ours divided by theirs (the median of paired ratios when there
// is one), or NaN when there is nothing to divide.
func (r Row) Ratio() float64 {
	if r.PairedRatio != 0 {
		return r.PairedRatio
	}
	if r.Theirs == 0 {
		return math.NaN()
	}
	return r.Ours / r.Theirs
}

// Verdict says in words how ours compares ("2.31x faster").
func (r Row) Verdict() string {
	q := r.Ratio()
	if math.IsNaN(q) || q == 0 {
		return ""
	}
	better := q < 1
	if r.Unit.higherIsBetter() {
		better = q > 1
	}
	f := q
	if f < 1 {
		f = 1 / f
	}
	if f < 1.005 {
		return "same"
	}
	word := map[bool]string{true: "faster", false: "slower"}
	switch r.Unit {
	case AllocsPerObj, BytesPerObj, Writes, Requests:
		word = map[bool]string{true: "fewer", false: "more"}
	case CPUSeconds, CPUMillis:
		word = map[bool]string{true: "less", false: "more"}
	}
	return fmt.Sprintf("%.2fx %s", f, word[better])
}

// format prints v in the row's unit.
func format(v float64, u Unit) string {
	if v == 0 && u != Writes {
		return "-"
	}
	switch u {
	case Seconds:
		return fmt.Sprintf("%.3f s", v)
	case CPUSeconds:
		return fmt.Sprintf("%.2f CPU s", v)
	case CPUMillis:
		return fmt.Sprintf("%.1f CPU ms", v)
	case Times:
		return fmt.Sprintf("%.2fx", v)
	case Millis:
		return fmt.Sprintf("%.2f ms", v)
	case Micros:
		return fmt.Sprintf("%.1f µs", v)
	case PerSecond:
		return fmt.Sprintf("%.0f /s", v)
	case AppsPerSec:
		return fmt.Sprintf("%.2f apps/s", v)
	case AllocsPerObj:
		return fmt.Sprintf("%.0f allocs", v)
	case BytesPerObj:
		return fmt.Sprintf("%.0f B", v)
	case Writes:
		// A mean per app (1.92) is shown as such; a count as an integer.
		if v != math.Trunc(v) {
			return fmt.Sprintf("%.2f", v)
		}
		return fmt.Sprintf("%.0f", v)
	case Requests, Count:
		return fmt.Sprintf("%.0f", v)
	case MiB:
		return fmt.Sprintf("%.1f MiB", v)
	}
	return fmt.Sprintf("%g %s", v, u)
}

// PrintTable writes rows as a Markdown table, ready for BENCHMARKS.md.
func PrintTable(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| section | measure | ours | theirs | alternative | ours/theirs | ours is | target |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		ratio := ""
		if q := r.Ratio(); !math.IsNaN(q) {
			ratio = fmt.Sprintf("%.2f", q)
			if r.PairedRatio != 0 {
				ratio += " (paired)"
			}
		}
		name := r.TheirName
		if r.Ref != "" {
			name += " (" + r.Ref + ")"
		}
		theirs := format(r.Theirs, r.Unit)
		if r.Theirs == 0 && name == "" {
			theirs = "" // nothing to compare with (the fleet's own figures)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Section, r.Measure,
			format(r.Ours, r.Unit), theirs, name, ratio, r.Verdict(), r.Target)
	}
}

// median returns the median of xs (the mean of the middle two for an even
// count), or 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianDuration is median over durations, in seconds.
func medianDuration(ds []time.Duration) float64 {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = d.Seconds()
	}
	return median(xs)
}

// sections parses the -only flag.
func sections(only string) (map[string]bool, error) {
	all := []string{"diff", "cache", "sync", "helm", "git", "fleet", "operators"}
	out := map[string]bool{}
	if only == "" {
		// fleet and operators run only when asked for (make bench-fleet):
		// they need the full cluster and take minutes at their default size.
		for _, s := range all[:len(all)-2] {
			out[s] = true
		}
		return out, nil
	}
	for _, s := range strings.Split(only, ",") {
		s = strings.TrimSpace(s)
		ok := false
		for _, a := range all {
			ok = ok || a == s
		}
		if !ok {
			return nil, fmt.Errorf("-only: unknown section %q (want some of %s)", s, strings.Join(all, ","))
		}
		out[s] = true
	}
	return out, nil
}
