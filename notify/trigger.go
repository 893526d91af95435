package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// Bounds of one expression: its size at compile time, and the memory
// (a measure of work: every element a range or map builds counts) of one
// evaluation, past which it fails rather than running on.
const (
	maxExprNodes    = 2000
	exprMemoryLimit = 100_000
)

// Trigger is a compiled trigger.<name> entry: conditions, each evaluated
// on its own.
type Trigger struct {
	// Name is the trigger's name (the part after "trigger.").
	Name string
	// Conditions are evaluated each on its own.
	Conditions []Condition
}

// Condition is one condition of a trigger, as Argo CD writes it.
type Condition struct {
	// When is the expression that must be true.
	When string `json:"when"`
	// Send names the templates to send when it is.
	Send []string `json:"send"`
	// OncePer, when set, is an expression whose value the notification is
	// sent once for (a revision, say), however often When turns true.
	OncePer string `json:"oncePer,omitempty"`
	// Description says what the condition means, for people.
	Description string `json:"description,omitempty"`

	key     string // names the condition in delivery state: index and hash of When
	when    *vm.Program
	oncePer *vm.Program
}

// ConditionResult is the outcome of one condition for one Application.
type ConditionResult struct {
	// Index is the condition's position in the trigger.
	Index int
	// When is the condition's expression.
	When string
	// Matched is true when When evaluated to true.
	Matched bool
	// Reason says why it did not match: the expression was false, not a
	// boolean, or failed (a missing field, say: nil maps are not an error
	// of the engine, the condition is just not met).
	Reason string
	// OncePer is the value of the condition's oncePer expression ("" when
	// it has none, or it is nil or fails).
	OncePer string
	// Send are the templates to send.
	Send []string
	key  string
}

// StateKey is the key of the delivery state of condition r of trigger for
// the destination to, Argo CD's layout:
// "[<oncePer>:]<trigger>:<condition>:<service>:<recipient>", where
// <condition> is the condition's index and a hash of its when.
func StateKey(trigger string, r ConditionResult, to Destination) string {
	key := fmt.Sprintf("%s:%s:%s:%s", trigger, r.key, to.Service, to.Recipient)
	if r.OncePer != "" {
		key = r.OncePer + ":" + key
	}
	return key
}

// exprEnv is the sample environment expressions compile against: "app" is
// dynamic, the helpers are typed so that a call to one that does not exist
// fails at load.
var exprEnv = map[string]any{"app": map[string]any{}, "time": TimeFuncs{}, "repo": RepoFuncs{}, "strings": StringFuncs{}, "sync": SyncFuncs{}}

func compileExpr(src string) (*vm.Program, error) {
	return expr.Compile(src, expr.Env(exprEnv), expr.MaxNodes(maxExprNodes))
}

// compile compiles every condition's expressions.
func (t *Trigger) compile() error {
	if len(t.Conditions) == 0 {
		return fmt.Errorf("no conditions")
	}
	for i := range t.Conditions {
		c := &t.Conditions[i]
		if c.When == "" {
			return fmt.Errorf("condition %d: no when", i)
		}
		if len(c.Send) == 0 {
			return fmt.Errorf("condition %d: send names no template", i)
		}
		p, err := compileExpr(c.When)
		if err != nil {
			return fmt.Errorf("condition %d: when: %w", i, err)
		}
		c.when = p
		if c.OncePer != "" {
			if c.oncePer, err = compileExpr(c.OncePer); err != nil {
				return fmt.Errorf("condition %d: oncePer: %w", i, err)
			}
		}
		h := sha256.Sum256([]byte(c.When))
		c.key = fmt.Sprintf("[%d].%s", i, hex.EncodeToString(h[:6]))
	}
	return nil
}

// run evaluates p in env within the memory bound. A panic of the
// evaluation is an error, never a crash.
func run(p *vm.Program, env Env) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("evaluation panicked: %v", r)
		}
	}()
	m := vm.VM{MemoryBudget: exprMemoryLimit}
	return m.Run(p, map[string]any(env))
}

// Evaluate evaluates every condition of the trigger for env. The rules:
//   - a condition matches when its When is the boolean true;
//   - When false, not a boolean, or failing (a field of a nil map, a
//     helper's error, the memory bound) is no match, with the reason;
//   - a condition with OncePer gets its value as a string, matching or
//     not (nil or failing: ""), as in Argo CD: delivery state is kept per
//     value.
func (t *Trigger) Evaluate(env Env) []ConditionResult {
	out := make([]ConditionResult, len(t.Conditions))
	for i := range t.Conditions {
		c := &t.Conditions[i]
		r := ConditionResult{Index: i, When: c.When, Send: c.Send, key: c.key}
		v, err := run(c.when, env)
		switch b, ok := v.(bool); {
		case err != nil:
			r.Reason = "when failed: " + err.Error()
		case !ok:
			r.Reason = fmt.Sprintf("when returned %v (%s), not a boolean", v, typeName(v))
		case !b:
			r.Reason = "when is false"
		default:
			r.Matched = true
		}
		if c.oncePer != nil {
			// Evaluated whether or not When matched, as Argo CD does: the
			// state key of a condition includes it both when a sent
			// notification is recorded and when it is forgotten.
			if v, err := run(c.oncePer, env); err == nil && v != nil {
				r.OncePer = fmt.Sprint(v)
			}
		}
		out[i] = r
	}
	return out
}

func typeName(v any) string {
	if v == nil {
		return "nil"
	}
	return reflect.TypeOf(v).String()
}
