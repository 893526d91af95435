package notify

import (
	"context"
	"errors"
	gosync "sync"
	"testing"
)

// chatService is a host's own service type: it replaces Argo CD's teams
// (LoadOptions.ServiceTypes wins), and gets the rendered notification,
// the teams block included, and any other block as rendered fields.
type chatService struct {
	mu   gosync.Mutex
	got  []Message
	to   []Destination
	conf map[string]any
}

func (c *chatService) Send(_ context.Context, msg Message, to Destination) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got, c.to = append(c.got, msg), append(c.to, to)
	return nil
}

func TestHostServiceType(t *testing.T) {
	chat := &chatService{}
	opts := LoadOptions{ServiceTypes: map[string]NewServiceFunc{"teams": func(name string, config map[string]any) (Service, error) {
		if config["recipientUrls"] == nil {
			return nil, errors.New("recipientUrls is required")
		}
		chat.conf = config
		return chat, nil
	}}}
	cfg, err := Load(WithCatalog(map[string]string{
		"service.teams":               "recipientUrls: {ops: $ops-url}",
		"template.app-sync-succeeded": "message: done\nteams: {title: 'Synced {{.app.metadata.name}}', themeColor: '#000080'}\nchat: {room: '{{.app.metadata.name}}-room'}",
	}), map[string]string{"ops-url": "https://chat.example/ops"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if u := chat.conf["recipientUrls"].(map[string]any)["ops"]; u != "https://chat.example/ops" {
		t.Errorf("the host's service got %v, want the secret resolved", u)
	}
	c, _ := NewController(cfg, ControllerOptions{})
	runController(t, c)
	c.Observe(testApp("web", map[string]any{"notifications.argoproj.io/subscribe.on-sync-succeeded.teams": "ops"}, succeeded("abc", "Healthy")))
	waitFor(t, "the delivery", c.Idle)
	chat.mu.Lock()
	defer chat.mu.Unlock()
	if len(chat.got) != 1 || chat.got[0].Notification.Teams == nil || chat.got[0].Notification.Teams.Title != "Synced web" ||
		chat.got[0].Fields["chat"]["room"] != "web-room" || chat.got[0].Notification.Message != "done" || chat.to[0].Recipient != "ops" {
		t.Errorf("got %+v to %v", chat.got, chat.to)
	}
	if _, err := Load(map[string]string{"service.teams": "{}"}, nil, opts); err == nil {
		t.Error("a host service's own validation error was not reported")
	}
}
