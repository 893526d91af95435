package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	gosync "sync"
)

// slackConfig is service.slack, as Argo CD writes it.
type slackConfig struct {
	Token    string `json:"token"`
	APIURL   string `json:"apiURL,omitempty"`
	Username string `json:"username,omitempty"`
	Icon     string `json:"icon,omitempty"`

	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// slack posts with Slack's Web API (chat.postMessage, a bot token as
// bearer), to the recipient channel. A template's slack.groupingKey puts
// the messages with the same key in one thread (with notifyBroadcast also
// in the channel); the thread of a key is remembered in memory.
type slack struct {
	name   string
	cfg    slackConfig
	client *http.Client

	mu      gosync.Mutex
	threads map[string]string // channel + grouping key -> thread ts
}

func newSlack(name string, config map[string]any) (Service, error) {
	var c slackConfig
	if err := decodeStrict(config, &c); err != nil {
		return nil, err
	}
	if c.Token == "" {
		return nil, fmt.Errorf("no token")
	}
	if c.APIURL == "" {
		c.APIURL = "https://slack.com/api/"
	}
	return &slack{name: name, cfg: c, client: httpClient(c.InsecureSkipVerify), threads: map[string]string{}}, nil
}

// Send implements Service.
func (s *slack) Send(ctx context.Context, msg Message, to Destination) error {
	body := map[string]any{"channel": to.Recipient, "text": msg.Body}
	if s.cfg.Username != "" {
		body["username"] = s.cfg.Username
	}
	if icon := s.cfg.Icon; icon != "" {
		if strings.HasPrefix(icon, "http://") || strings.HasPrefix(icon, "https://") {
			body["icon_url"] = icon
		} else {
			body["icon_emoji"] = icon
		}
	}
	for field, raw := range map[string]string{"attachments": msg.Slack.Attachments, "blocks": msg.Slack.Blocks} {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return fmt.Errorf("service %s: template %q: slack.%s is not JSON: %v", s.name, msg.Template, field, err)
		}
		body[field] = v
	}
	thread := ""
	if k := msg.Slack.GroupingKey; k != "" {
		s.mu.Lock()
		thread = s.threads[to.Recipient+"\x00"+k]
		s.mu.Unlock()
		if thread != "" {
			body["thread_ts"] = thread
			body["reply_broadcast"] = msg.Slack.NotifyBroadcast
		}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("service %s: %w", s.name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(s.cfg.APIURL, "/")+"/chat.postMessage", bytes.NewReader(b))
	if err != nil {
		return requestError(s.name, err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+s.cfg.Token)
	resp, err := s.client.Do(req)
	if err != nil {
		return requestError(s.name, err)
	}
	defer resp.Body.Close()
	var out struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		TS    string `json:"ts"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("service %s: chat.postMessage: status %d", s.name, resp.StatusCode)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("service %s: chat.postMessage: answer is not JSON", s.name)
	}
	if !out.OK {
		return fmt.Errorf("service %s: chat.postMessage: %s", s.name, out.Error)
	}
	if k := msg.Slack.GroupingKey; k != "" && thread == "" && out.TS != "" {
		s.mu.Lock()
		s.threads[to.Recipient+"\x00"+k] = out.TS
		s.mu.Unlock()
	}
	return nil
}
