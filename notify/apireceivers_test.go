package notify

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	gosync "sync"
)

// apiReceiver stands in for one service's API on loopback: it answers
// the requests the API's clients make as the API does, counts each
// notification the API would have delivered (with its text), and keeps
// every request it refused, with why.
type apiReceiver struct {
	mu        gosync.Mutex
	delivered []string
	refused   []string
}

func (a *apiReceiver) deliver(text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.delivered = append(a.delivered, text)
}

func (a *apiReceiver) refuse(w http.ResponseWriter, code int, format string, args ...any) {
	a.mu.Lock()
	a.refused = append(a.refused, fmt.Sprintf(format, args...))
	a.mu.Unlock()
	http.Error(w, fmt.Sprintf(format, args...), code)
}

func (a *apiReceiver) counts() (delivered []string, refused []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.delivered...), append([]string(nil), a.refused...)
}

// apiHandler answers one request of a service's API: it returns the text
// of the notification it delivers ("" and no error when the request
// delivers none, as a login), or why it refuses the request.
type apiHandler func(w http.ResponseWriter, r *http.Request, body []byte) (text string, delivered bool, err error)

func (a *apiReceiver) handler(h apiHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		text, delivered, err := h(w, r, body)
		if err != nil {
			a.refuse(w, http.StatusBadRequest, "%s %s: %v", r.Method, r.URL.Path, err)
			return
		}
		if delivered {
			a.deliver(text)
		}
	})
}

// want checks a request's method, path (a regular expression) and one
// header's value.
func want(r *http.Request, method, pathRE, header, value string) error {
	if r.Method != method || !regexp.MustCompile("^"+pathRE+"$").MatchString(r.URL.Path) {
		return fmt.Errorf("not %s %s", method, pathRE)
	}
	if header != "" && r.Header.Get(header) != value {
		return fmt.Errorf("header %s is %q, want %q", header, r.Header.Get(header), value)
	}
	return nil
}

func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// jsonField decodes body and returns the string at the dotted path.
func jsonField(body []byte, path string) (string, error) {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return "", fmt.Errorf("body is not JSON: %v", err)
	}
	for _, p := range strings.Split(path, ".") {
		switch t := v.(type) {
		case map[string]any:
			v = t[p]
		case []any:
			if len(t) == 0 {
				return "", fmt.Errorf("%s: empty list", path)
			}
			v = t[0].(map[string]any)[p]
		}
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s is %T, not a string", path, v)
	}
	return s, nil
}

// The handlers of each API, as its clients in notifications-engine call
// it. Secrets are the docs' (or the test's) values.

func webhookAPI(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
	return string(body), true, nil
}

func slackAPI(token string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
		if err := want(r, http.MethodPost, `.*/chat\.postMessage`, "", ""); err != nil {
			return "", false, err
		}
		form, err := url.ParseQuery(string(body))
		if err != nil || form.Get("channel") == "" {
			return "", false, fmt.Errorf("no channel in %q", body)
		}
		// The token as slack-go sends it: in the form (or as a bearer).
		if form.Get("token") != token && r.Header.Get("Authorization") != "Bearer "+token {
			return "", false, fmt.Errorf("not the token")
		}
		reply(w, http.StatusOK, map[string]any{"ok": true, "channel": "C0123", "ts": "1700000000.000100"})
		return form.Get("text"), true, nil
	}
}

func mattermostAPI(token string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
		if err := want(r, http.MethodPost, `/api/v4/posts`, "Authorization", "Bearer "+token); err != nil {
			return "", false, err
		}
		text, err := jsonField(body, "message")
		reply(w, http.StatusCreated, map[string]any{"id": "post1"})
		return text, err == nil, err
	}
}

func rocketchatAPI(email, password string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
		if r.URL.Path == "/api/v1/login" {
			form, _ := url.ParseQuery(string(body))
			if form.Get("user") != email || form.Get("password") != password {
				return "", false, fmt.Errorf("login of %q refused", form.Get("user"))
			}
			reply(w, http.StatusOK, map[string]any{"status": "success", "data": map[string]any{"userId": "u1", "authToken": "t1"}})
			return "", false, nil
		}
		if err := want(r, http.MethodPost, `/api/v1/chat\.postMessage`, "X-Auth-Token", "t1"); err != nil {
			return "", false, err
		}
		text, err := jsonField(body, "text")
		reply(w, http.StatusOK, map[string]any{"success": true, "message": map[string]any{"_id": "m1", "msg": text}})
		return text, err == nil, err
	}
}

// teamsAPI is an Office 365 connector's webhook: it answers "1".
func teamsAPI(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
	if err := want(r, http.MethodPost, `/.*`, "Content-Type", "application/json"); err != nil {
		return "", false, err
	}
	text, err := jsonField(body, "text")
	if err == nil {
		_, _ = io.WriteString(w, "1")
	}
	return text, err == nil, err
}

// teamsWorkflowsAPI is a Power Automate workflow's trigger: it accepts an
// Adaptive Card message with 202.
func teamsWorkflowsAPI(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
	if err := want(r, http.MethodPost, `/webhook/.*`, "Content-Type", "application/json"); err != nil {
		return "", false, err
	}
	if kind, err := jsonField(body, "attachments.contentType"); err != nil || kind != "application/vnd.microsoft.card.adaptive" {
		return "", false, fmt.Errorf("not an adaptive card message: %s", body)
	}
	w.WriteHeader(http.StatusAccepted)
	return string(body), true, nil
}

func googlechatAPI(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
	if err := want(r, http.MethodPost, `/.*`, "", ""); err != nil {
		return "", false, err
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return "", false, err
	}
	reply(w, http.StatusOK, map[string]any{"name": "spaces/s/messages/m"})
	return string(body), true, nil
}

func grafanaAPI(key string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
		if err := want(r, http.MethodPost, `/api/annotations`, "Authorization", "Bearer "+key); err != nil {
			return "", false, err
		}
		text, err := jsonField(body, "text")
		reply(w, http.StatusOK, map[string]any{"id": 1, "message": "Annotation added"})
		return text, err == nil, err
	}
}

func newrelicAPI(key string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
		if err := want(r, http.MethodPost, `/v2/applications/[^/]+/deployments\.json`, "X-Api-Key", key); err != nil {
			return "", false, err
		}
		text, err := jsonField(body, "deployment.revision")
		reply(w, http.StatusCreated, map[string]any{"deployment": map[string]any{"id": 1}})
		return text, err == nil, err
	}
}

func webexAPI(token string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
		if err := want(r, http.MethodPost, `/v1/messages`, "Authorization", "Bearer "+token); err != nil {
			return "", false, err
		}
		text, err := jsonField(body, "markdown")
		reply(w, http.StatusOK, map[string]any{"id": "m1"})
		return text, err == nil, err
	}
}

func opsgenieAPI(key string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
		if err := want(r, http.MethodPost, `/v2/alerts`, "Authorization", "GenieKey "+key); err != nil {
			return "", false, err
		}
		text, err := jsonField(body, "message")
		reply(w, http.StatusAccepted, map[string]any{"result": "Request will be processed", "took": 0.1, "requestId": "r1"})
		return text, err == nil, err
	}
}

func alertmanagerAPI(apiPath string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
		if err := want(r, http.MethodPost, regexp.QuoteMeta(apiPath), "Content-Type", "application/json"); err != nil {
			return "", false, err
		}
		name, err := jsonField(body, "labels.alertname")
		w.WriteHeader(http.StatusOK)
		return name, err == nil, err
	}
}

// githubAPI is GitHub's REST API under /api/v3 for an app installation:
// an installation token, then what a github block sends: a commit status
// (counted as the delivery), a deployment and its status, a pull request
// comment, a check run.
func githubAPI(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
	const repo = `/api/v3/repos/[^/]+/[^/]+`
	p := r.URL.Path
	if strings.HasSuffix(p, "/access_tokens") {
		if err := want(r, http.MethodPost, `/api/v3/app/installations/\d+/access_tokens`, "", ""); err != nil {
			return "", false, err
		}
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			return "", false, fmt.Errorf("no app JWT")
		}
		reply(w, http.StatusCreated, map[string]any{"token": "ghs_installation", "expires_at": "2099-01-01T00:00:00Z"})
		return "", false, nil
	}
	if r.Header.Get("Authorization") != "token ghs_installation" {
		return "", false, fmt.Errorf("not the installation's token")
	}
	match := func(method, re string) bool { return want(r, method, repo+re, "", "") == nil }
	switch {
	case match(http.MethodPost, `/statuses/[0-9a-f]+`):
		state, err := jsonField(body, "state")
		reply(w, http.StatusCreated, map[string]any{"id": 1, "state": state})
		return state, err == nil, err
	case match(http.MethodGet, `/deployments`):
		reply(w, http.StatusOK, []any{})
	case match(http.MethodPost, `/deployments`):
		reply(w, http.StatusCreated, map[string]any{"id": 7})
	case match(http.MethodPost, `/deployments/7/statuses`):
		reply(w, http.StatusCreated, map[string]any{"id": 1})
	case match(http.MethodGet, `/commits/[0-9a-f]+/pulls`):
		reply(w, http.StatusOK, []any{map[string]any{"number": 3}})
	case match(http.MethodGet, `/issues/3/comments`):
		reply(w, http.StatusOK, []any{})
	case match(http.MethodPost, `/issues/3/comments`), match(http.MethodPost, `/check-runs`):
		reply(w, http.StatusCreated, map[string]any{"id": 1})
	default:
		return "", false, fmt.Errorf("not a call of a github block")
	}
	return "", false, nil
}

// pagerdutyAPI is PagerDuty's REST API (api.pagerduty.com): incidents.
func pagerdutyAPI(token string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
		if err := want(r, http.MethodPost, `/incidents`, "Authorization", "Token token="+token); err != nil {
			return "", false, err
		}
		title, err := jsonField(body, "incident.title")
		reply(w, http.StatusCreated, map[string]any{"incident": map[string]any{"id": "I1", "incident_number": 1, "title": title}})
		return title, err == nil, err
	}
}

// pagerdutyEventsAPI is PagerDuty's Events API v2 (events.pagerduty.com).
func pagerdutyEventsAPI(routingKey string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
		if err := want(r, http.MethodPost, `/v2/enqueue`, "", ""); err != nil {
			return "", false, err
		}
		if key, _ := jsonField(body, "routing_key"); key != routingKey {
			return "", false, fmt.Errorf("routing key %q", key)
		}
		summary, err := jsonField(body, "payload.summary")
		reply(w, http.StatusAccepted, map[string]any{"status": "success", "message": "Event processed", "dedup_key": "k1"})
		return summary, err == nil, err
	}
}

// pushoverAPI is Pushover's messages API (api.pushover.net).
func pushoverAPI(token string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
		if err := want(r, http.MethodPost, `/1/messages\.json`, "", ""); err != nil {
			return "", false, err
		}
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return "", false, err
		}
		if form.Get("token") != token || form.Get("user") == "" {
			return "", false, fmt.Errorf("token %q user %q", form.Get("token"), form.Get("user"))
		}
		// Pushover's app limits come with every answer.
		w.Header().Set("X-Limit-App-Limit", "10000")
		w.Header().Set("X-Limit-App-Remaining", "9999")
		w.Header().Set("X-Limit-App-Reset", "1893456000")
		reply(w, http.StatusOK, map[string]any{"status": 1, "request": "r1"})
		return form.Get("message"), true, nil
	}
}

// telegramAPI is Telegram's Bot API (api.telegram.org/bot<token>/...).
func telegramAPI(token string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
		prefix := "/bot" + token + "/"
		if !strings.HasPrefix(r.URL.Path, prefix) {
			return "", false, fmt.Errorf("not a method of the bot's token")
		}
		form, _ := url.ParseQuery(string(body))
		switch strings.TrimPrefix(r.URL.Path, prefix) {
		case "getMe":
			reply(w, http.StatusOK, map[string]any{"ok": true, "result": map[string]any{"id": 1, "is_bot": true, "first_name": "argocd", "username": "argocd_bot"}})
			return "", false, nil
		case "sendMessage":
			if form.Get("chat_id") == "" {
				return "", false, fmt.Errorf("no chat_id")
			}
			reply(w, http.StatusOK, map[string]any{"ok": true, "result": map[string]any{"message_id": 1, "date": 1,
				"chat": map[string]any{"id": -100, "type": "channel"}, "text": form.Get("text")}})
			return form.Get("text"), true, nil
		}
		return "", false, fmt.Errorf("no such method")
	}
}

// sqsAPI is Amazon SQS's JSON protocol (AWS JSON 1.0): GetQueueUrl and
// SendMessage, signed with the access key.
func sqsAPI(baseURL func() string, accessKey string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, body []byte) (string, bool, error) {
		if !strings.Contains(r.Header.Get("Authorization"), "Credential="+accessKey+"/") {
			return "", false, fmt.Errorf("not signed with the access key: %q", r.Header.Get("Authorization"))
		}
		var in map[string]any
		if err := json.Unmarshal(body, &in); err != nil {
			return "", false, err
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		switch r.Header.Get("X-Amz-Target") {
		case "AmazonSQS.GetQueueUrl":
			reply(w, http.StatusOK, map[string]any{"QueueUrl": fmt.Sprintf("%s/%v/%v", baseURL(), in["QueueOwnerAWSAccountId"], in["QueueName"])})
			return "", false, nil
		case "AmazonSQS.SendMessage":
			msg, _ := in["MessageBody"].(string)
			sum := md5.Sum([]byte(msg))
			reply(w, http.StatusOK, map[string]any{"MessageId": "m1", "MD5OfMessageBody": hex.EncodeToString(sum[:])})
			return msg, true, nil
		}
		return "", false, fmt.Errorf("operation %q", r.Header.Get("X-Amz-Target"))
	}
}
