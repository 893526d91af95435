package health

import "fmt"

// Code is the health of one object or of an application. The values and
// their spelling are Argo CD's, so that statuses can be shown next to (or
// stored in) Argo CD Application objects unchanged.
type Code string

// The health codes, from best to worst (see Worse).
const (
	// Healthy: the object does what it is meant to do.
	Healthy Code = "Healthy"
	// Suspended: the object is paused on purpose (a paused Deployment, a
	// suspended Job or CronJob) and waits for a person or an event.
	Suspended Code = "Suspended"
	// Progressing: the object is not healthy yet but may become so without
	// intervention (a rollout in progress, a Pod starting).
	Progressing Code = "Progressing"
	// Missing: the object should exist but does not.
	Missing Code = "Missing"
	// Degraded: the object failed or cannot become healthy without help.
	Degraded Code = "Degraded"
	// Unknown: health could not be judged (a failing health script, an
	// invalid status).
	Unknown Code = "Unknown"
)

// rank orders the codes from best (0) to worst: Healthy < Suspended <
// Progressing < Missing < Degraded < Unknown, as Argo CD does.
func (c Code) rank() int {
	switch c {
	case Healthy:
		return 0
	case Suspended:
		return 1
	case Progressing:
		return 2
	case Missing:
		return 3
	case Degraded:
		return 4
	default: // Unknown and anything unrecognised
		return 5
	}
}

// Valid reports whether c is one of the six codes.
func (c Code) Valid() bool {
	switch c {
	case Healthy, Suspended, Progressing, Missing, Degraded, Unknown:
		return true
	}
	return false
}

// IsWorse reports whether next is worse than current under the precedence
// Healthy < Suspended < Progressing < Missing < Degraded < Unknown. An
// unrecognised code counts as Unknown.
func IsWorse(current, next Code) bool { return next.rank() > current.rank() }

// Worst returns the worst of the codes, or Healthy when there are none.
func Worst(codes ...Code) Code {
	worst := Healthy
	for _, c := range codes {
		if IsWorse(worst, c) {
			worst = c
		}
	}
	return worst
}

// Status is the health of one object: a code and a message for people. The
// JSON field names are Argo CD's (status, message).
type Status struct {
	// Code is the health code.
	Code Code `json:"status"`
	// Message says why, for example "Waiting for rollout to finish: 1 of 3
	// updated replicas are available...". May be empty.
	Message string `json:"message,omitempty"`
}

// String formats the status as "Code" or "Code: message".
func (s Status) String() string {
	if s.Message == "" {
		return string(s.Code)
	}
	return fmt.Sprintf("%s: %s", s.Code, s.Message)
}

// statusf returns a status whose message is formatted.
func statusf(code Code, format string, args ...any) *Status {
	return &Status{Code: code, Message: fmt.Sprintf(format, args...)}
}
