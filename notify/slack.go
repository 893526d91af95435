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
// bearer), to the recipient channel. A template's slack.groupingKey ties
// messages together, by the first message of the key in the channel
// (remembered in memory, so a restart starts afresh): with
// deliveryPolicy Post (the default) later messages reply in its thread
// (notifyBroadcast: in the channel too); with PostAndUpdate and Update
// they replace it (chat.update). Update with no message of the key yet
// posts one, as PostAndUpdate does.
type slack struct {
	name   string
	cfg    slackConfig
	client *http.Client

	mu      gosync.Mutex
	threads map[string]slackRef // channel + grouping key -> first message
}

// slackRef names a posted message: the channel's id and its timestamp.
type slackRef struct{ channel, ts string }

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
	return &slack{name: name, cfg: c, client: httpClient(c.InsecureSkipVerify), threads: map[string]slackRef{}}, nil
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
	key := to.Recipient + "\x00" + msg.Slack.GroupingKey
	var first slackRef
	if msg.Slack.GroupingKey != "" {
		s.mu.Lock()
		first = s.threads[key]
		s.mu.Unlock()
	}
	method := "chat.postMessage"
	switch {
	case first.ts != "" && (msg.Slack.DeliveryPolicy == "PostAndUpdate" || msg.Slack.DeliveryPolicy == "Update"):
		method = "chat.update"
		body["channel"], body["ts"] = first.channel, first.ts
	case first.ts != "":
		body["thread_ts"] = first.ts
		body["reply_broadcast"] = msg.Slack.NotifyBroadcast
	}
	posted, err := s.call(ctx, method, body)
	if err != nil {
		return err
	}
	if msg.Slack.GroupingKey != "" && first.ts == "" && posted.ts != "" {
		s.mu.Lock()
		s.threads[key] = posted
		s.mu.Unlock()
	}
	return nil
}

// call posts body to a Web API method and returns the message it names.
// Slack answers errors with a 200 and "ok": false.
func (s *slack) call(ctx context.Context, method string, body map[string]any) (slackRef, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return slackRef{}, fmt.Errorf("service %s: %w", s.name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(s.cfg.APIURL, "/")+"/"+method, bytes.NewReader(b))
	if err != nil {
		return slackRef{}, requestError(s.name, err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+s.cfg.Token)
	resp, err := s.client.Do(req)
	if err != nil {
		return slackRef{}, requestError(s.name, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return slackRef{}, fmt.Errorf("service %s: %s: status %d", s.name, method, resp.StatusCode)
	}
	var out struct {
		OK      bool   `json:"ok"`
		Error   string `json:"error"`
		Channel string `json:"channel"`
		TS      string `json:"ts"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return slackRef{}, fmt.Errorf("service %s: %s: answer is not JSON", s.name, method)
	}
	if !out.OK {
		return slackRef{}, fmt.Errorf("service %s: %s: %s", s.name, method, out.Error)
	}
	return slackRef{channel: out.Channel, ts: out.TS}, nil
}
