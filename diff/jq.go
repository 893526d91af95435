package diff

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/itchyny/gojq"
)

// jqRule is one compiled jq path expression.
type jqRule struct {
	expr string
	code *gojq.Code
}

// maxJQPaths bounds the paths one expression may yield on one object, so a
// runaway expression (range(1e9)) fails instead of eating memory.
const maxJQPaths = 10000

// compileJQ compiles expr as path(expr), once. Parse errors and expressions
// that are not path expressions are reported here or on first evaluation.
func compileJQ(expr string) (*jqRule, error) {
	q, err := gojq.Parse("path(" + expr + ")")
	if err != nil {
		return nil, fmt.Errorf("jq parse: %w", err)
	}
	code, err := gojq.Compile(q, gojq.WithEnvironLoader(func() []string { return nil }))
	if err != nil {
		return nil, fmt.Errorf("jq compile: %w", err)
	}
	return &jqRule{expr: expr, code: code}, nil
}

// errJQTimeout is returned when an expression runs past its deadline.
var errJQTimeout = errors.New("jq evaluation timed out")

// paths evaluates the expression on input (already converted by toJQ) and
// returns the paths it yields.
func (r *jqRule) paths(ctx context.Context, input any, timeout time.Duration) ([]fieldPath, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	iter := r.code.RunWithContext(ctx, input)
	var out []fieldPath
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, ok := v.(error); ok {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				break
			}
			if ctx.Err() != nil {
				return nil, errJQTimeout
			}
			return nil, err
		}
		p, err := jqPath(v)
		if err != nil {
			return nil, err
		}
		if len(p) == 0 {
			return nil, errors.New("expression selects the whole object")
		}
		out = append(out, p)
		if len(out) > maxJQPaths {
			return nil, fmt.Errorf("expression yields more than %d paths", maxJQPaths)
		}
	}
	if ctx.Err() != nil {
		return nil, errJQTimeout
	}
	return out, nil
}

func jqPath(v any) (fieldPath, error) {
	raw, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not a path: %s", gojq.TypeOf(v))
	}
	p := make(fieldPath, len(raw))
	for i, c := range raw {
		switch x := c.(type) {
		case string:
			p[i] = x
		case int:
			p[i] = strconv.Itoa(x)
		case float64:
			if x != math.Trunc(x) || x < 0 {
				return nil, fmt.Errorf("path component %v is not an index", x)
			}
			p[i] = strconv.FormatInt(int64(x), 10)
		default:
			return nil, fmt.Errorf("path component of type %s is not supported (slices are not)", gojq.TypeOf(c))
		}
	}
	return p, nil
}

// toJQ copies a normalised value into the types gojq accepts (int, not
// int64).
func toJQ(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = toJQ(c)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = toJQ(c)
		}
		return out
	case int64:
		if x >= math.MinInt && x <= math.MaxInt {
			return int(x)
		}
		return float64(x)
	case int32:
		return int(x)
	}
	return v
}
