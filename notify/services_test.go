package notify

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/pstest"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/argodocs"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"sigs.k8s.io/yaml"
)

// placeholders are the values the docs leave to the reader, filled in as
// a reader would.
var placeholders = strings.NewReplacer(
	"<app-id>", "12345", "<installation-id>", "67890", "YYYY-MM-DDTHH:MM:SSZ", "2026-12-01T10:00:05Z",
	"<header-name>", "X-Header", "<header-value>", "header-value", "<webhook-name>", "example")

// pageSecret is the secret of a page's examples: the Secret examples'
// values, and a value for every other key its services refer to (the
// GitHub app's private key a real one).
func pageSecret(t *testing.T, p docPage) map[string]string {
	out := map[string]string{}
	for k, v := range p.secret {
		out[k] = v
	}
	for _, k := range p.secretRefs() {
		if _, ok := out[k]; !ok {
			out[k] = "test-" + k
			if strings.Contains(k, "email") || strings.Contains(k, "address") {
				out[k] = "argocd@example.com"
			}
		}
	}
	for k := range out {
		if strings.Contains(k, "privateKey") {
			out[k] = rsaKeyPEM(t)
		}
	}
	return out
}

func rsaKeyPEM(t *testing.T) string {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
}

// TestEveryDocumentedServiceTypeLoads reads every service page of Argo
// CD's docs (the release's own files): each service example loads as it
// is written (placeholders filled in) with no field ignored, every
// documented type is built in and every built-in type documented.
func TestEveryDocumentedServiceTypeLoads(t *testing.T) {
	documented := map[string]bool{}
	for _, p := range servicePages(t) {
		if len(p.services) == 0 {
			t.Errorf("%s: no service example found", p.name)
		}
		secret := pageSecret(t, p)
		for i, e := range p.services {
			typ, _ := serviceType(e.key)
			documented[typ] = true
			c, err := Load(map[string]string{placeholders.Replace(e.key): placeholders.Replace(e.value)}, secret, DefaultLoadOptions())
			if err != nil {
				t.Errorf("%s: %s (example %d) does not load: %v", p.name, e.key, i, err)
				continue
			}
			for _, e := range c.Ignored() {
				t.Errorf("%s: %v", p.name, e)
			}
		}
	}
	var missing, extra []string
	for _, typ := range ServiceTypes() {
		if !documented[typ] {
			extra = append(extra, typ)
		}
	}
	for typ := range documented {
		if !contains(ServiceTypes(), typ) {
			missing = append(missing, typ)
		}
	}
	if len(missing)+len(extra) > 0 {
		t.Errorf("documented but not built in: %v; built in but not documented: %v", missing, extra)
	}
	if len(documented) < 21 {
		t.Errorf("%d documented types found, want Argo CD's 21", len(documented))
	}
}

// route points one documented service at its local receiver: it edits
// the service's configuration (secrets resolved) through its documented
// URL option, or routes its hard-coded host through the test edge, and
// returns the recipient to subscribe and how many notifications the
// receiver took (with the requests it refused).
type route func(t *testing.T, cfg map[string]any) (recipient string, got func() ([]string, []string))

// httpReceiver starts an apiReceiver of h on loopback (TLS when tls).
func httpReceiver(t *testing.T, h apiHandler, tls bool) (*apiReceiver, *httptest.Server) {
	a := &apiReceiver{}
	srv := httptest.NewUnstartedServer(a.handler(h))
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return a, srv
}

// edgeReceiver routes hostport's HTTPS through the test edge to an
// apiReceiver of h.
func edgeReceiver(t *testing.T, hostport string, h apiHandler) *apiReceiver {
	a := &apiReceiver{}
	edgeProxy.route(t, hostport, a.handler(h))
	return a
}

func str(cfg map[string]any, k string) string { s, _ := cfg[k].(string); return s }

func firstKey(v any) string {
	m, _ := v.(map[string]any)
	ks := sortedKeys(m)
	if len(ks) == 0 {
		return ""
	}
	return ks[0]
}

var routes = map[string]route{
	"alertmanager": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		path := str(cfg, "apiPath")
		if path == "" {
			path = "/api/v2/alerts"
		}
		a, srv := httpReceiver(t, alertmanagerAPI(path), str(cfg, "scheme") == "https")
		cfg["targets"] = []any{srv.Listener.Addr().String()}
		return "", a.counts
	},
	"awssqs": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		// Never the instance metadata service; without key and secret the
		// SDK's chain takes the environment's, as the page's second
		// example says.
		t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
		t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENVIRONMENT")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "environment-secret")
		t.Setenv("AWS_REGION", "us-east-2")
		key := str(cfg, "key")
		if key == "" {
			key = "AKIDENVIRONMENT"
		}
		var base string
		a, srv := httpReceiver(t, sqsAPI(func() string { return base }, key), false)
		base = srv.URL
		cfg["endpointUrl"] = srv.URL
		return "", a.counts
	},
	"github": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		a, srv := httpReceiver(t, githubAPI, false)
		cfg["enterpriseBaseURL"] = srv.URL + "/api/v3"
		return "", a.counts
	},
	"googlechat": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		a, srv := httpReceiver(t, googlechatAPI, false)
		space := firstKey(cfg["webhooks"])
		cfg["webhooks"] = map[string]any{space: srv.URL + "/v1/spaces/s/messages"}
		return space, a.counts
	},
	"grafana": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		a, srv := httpReceiver(t, grafanaAPI(str(cfg, "apiKey")), false)
		cfg["apiUrl"] = srv.URL + "/api"
		return "tag1|tag2", a.counts
	},
	"mattermost": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		a, srv := httpReceiver(t, mattermostAPI(str(cfg, "token")), false)
		cfg["apiURL"] = srv.URL
		return "channel-id", a.counts
	},
	"newrelic": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		a, srv := httpReceiver(t, newrelicAPI(str(cfg, "apiKey")), false)
		cfg["apiURL"] = srv.URL
		return "12345", a.counts
	},
	"opsgenie": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		team := firstKey(cfg["apiKeys"])
		a, srv := httpReceiver(t, opsgenieAPI(str(cfg["apiKeys"].(map[string]any), team)), false)
		cfg["apiUrl"] = srv.Listener.Addr().String() // a host: the SDK speaks HTTP to one without "api" in it
		return team, a.counts
	},
	"pagerduty": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		return "PSERVICE1", edgeReceiver(t, "api.pagerduty.com:443", pagerdutyAPI(str(cfg, "token"))).counts
	},
	"pagerdutyv2": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		service := firstKey(cfg["serviceKeys"])
		return service, edgeReceiver(t, "events.pagerduty.com:443", pagerdutyEventsAPI(str(cfg["serviceKeys"].(map[string]any), service))).counts
	},
	"pushover": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		return "uumy8u4owy7bgkapp6mc5mvhfsvpcd", edgeReceiver(t, "api.pushover.net:443", pushoverAPI(str(cfg, "token"))).counts
	},
	"rocketchat": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		a, srv := httpReceiver(t, rocketchatAPI(str(cfg, "email"), str(cfg, "password")), false)
		cfg["serverUrl"] = srv.URL
		return "#my_channel", a.counts
	},
	"slack": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		a, srv := httpReceiver(t, slackAPI(str(cfg, "token")), false)
		cfg["apiURL"] = srv.URL + "/api/"
		return "my_channel", a.counts
	},
	"teams": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		a, srv := httpReceiver(t, teamsAPI, false)
		channel := firstKey(cfg["recipientUrls"])
		cfg["recipientUrls"] = map[string]any{channel: srv.URL + "/webhook/your-webhook-id"}
		return channel, a.counts
	},
	"teams-workflows": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		// The service refuses any URL but a Power Automate one: the docs'
		// URL is kept and its host routed through the test edge.
		channel := firstKey(cfg["recipientUrls"])
		return channel, edgeReceiver(t, "api.powerautomate.com:443", teamsWorkflowsAPI).counts
	},
	"telegram": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		return "username", edgeReceiver(t, "api.telegram.org:443", telegramAPI(str(cfg, "token"))).counts
	},
	"webex": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		a, srv := httpReceiver(t, webexAPI(str(cfg, "token")), false)
		cfg["apiURL"] = srv.URL
		return "ops@example.com", a.counts
	},
	"webhook": func(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
		a, srv := httpReceiver(t, webhookAPI, false)
		cfg["url"] = srv.URL
		return "", a.counts
	},
	"email":     emailRoute,
	"nats":      natsRoute,
	"gcppubsub": pubsubRoute,
}

// TestEveryDocumentedServiceDelivers delivers, for every service example
// of every page of Argo CD's docs, one notification end to end (an
// Application observed, its trigger, the page's template for the service
// where it has one, else the catalog's app-deployed, the service) to a
// local receiver that speaks the service's API, and counts it there.
func TestEveryDocumentedServiceDelivers(t *testing.T) {
	catalog := catalogData(t)
	repo := newGitRepo(t)
	for _, p := range servicePages(t) {
		secret := pageSecret(t, p)
		for i, e := range p.services {
			key := placeholders.Replace(e.key)
			typ, name := serviceType(key)
			t.Run(fmt.Sprintf("%s/%s/%d", p.name, key, i), func(t *testing.T) {
				var raw map[string]any
				if err := yaml.Unmarshal([]byte(placeholders.Replace(e.value)), &raw); err != nil {
					t.Fatal(err)
				}
				resolved, err := resolveSecrets(name, raw, secret)
				if err != nil {
					t.Fatal(err)
				}
				cfg := resolved.(map[string]any)
				recipient, got := routes[typ](t, cfg)
				svc, err := yaml.Marshal(cfg)
				if err != nil {
					t.Fatal(err)
				}
				tmpl, src := pageTemplate(p, typ, name, catalog)
				data := map[string]string{key: string(svc), "template." + tmpl: src,
					"trigger.on-test": "- when: 'true'\n  send: [" + tmpl + "]",
					"context":         "argocdUrl: https://cd.example"}
				c, err := Load(data, nil, LoadOptions{Repo: repo})
				if err != nil {
					t.Fatal(err)
				}
				var mu gosync.Mutex
				var failures []string
				ctl, err := NewController(c, ControllerOptions{OnFailure: func(_ v1alpha1.AppKey, err *DeliveryError) {
					mu.Lock()
					defer mu.Unlock()
					failures = append(failures, err.Error())
				}})
				if err != nil {
					t.Fatal(err)
				}
				runController(t, ctl)
				app := testApp("web", map[string]any{"notifications.argoproj.io/subscribe.on-test." + name: recipient},
					succeeded(repo.head, "Healthy"))
				ctl.Observe(app)
				waitFor(t, "the delivery or its failure", func() bool {
					mu.Lock()
					defer mu.Unlock()
					delivered, _ := got()
					return len(delivered) > 0 || len(failures) > 0
				})
				waitFor(t, "the controller to finish", ctl.Idle)
				delivered, refused := got()
				mu.Lock()
				defer mu.Unlock()
				if len(delivered) != 1 || len(refused) > 0 || len(failures) > 0 {
					t.Errorf("template %s: %d delivered %q, refused %q, failed %q; want one delivered", tmpl, len(delivered), delivered, refused, failures)
				}
			})
		}
	}
}

// pageTemplate is the page's template with a block for the service (by
// its type, or webhook.<name>) that loads, else the catalog's
// app-deployed.
func pageTemplate(p docPage, typ, name string, catalog map[string]string) (string, string) {
	for _, k := range sortedKeys(p.templates) {
		var m map[string]any
		src := placeholders.Replace(p.templates[k])
		if yaml.Unmarshal([]byte(src), &m) != nil {
			continue
		}
		block, ok := m[typ]
		if typ == "webhook" {
			hooks, _ := block.(map[string]any)
			_, ok = hooks[name]
		}
		if !ok {
			continue
		}
		if _, err := Load(map[string]string{k: src}, nil, DefaultLoadOptions()); err != nil {
			continue
		}
		return strings.TrimPrefix(k, "template."), src
	}
	return "app-deployed", catalog["template.app-deployed"]
}

// emailRoute is a real SMTP server on loopback (go-smtp) that takes the
// docs' credentials.
func emailRoute(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
	b := &smtpBackend{user: str(cfg, "username"), password: str(cfg, "password")}
	s := smtp.NewServer(b)
	s.AllowInsecureAuth = true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { s.Close() })
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	cfg["host"] = host
	cfg["port"], _ = strconv.Atoi(port)
	return "ops@example.com, dev@example.com", b.counts
}

type smtpBackend struct {
	user, password string
	apiReceiver
}

func (b *smtpBackend) NewSession(*smtp.Conn) (smtp.Session, error) { return &smtpSession{b: b}, nil }

type smtpSession struct {
	b      *smtpBackend
	authed bool
	to     []string
}

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, password string) error {
		if user != s.b.user || password != s.b.password {
			return fmt.Errorf("bad credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *smtpSession) Mail(string, *smtp.MailOptions) error {
	if s.b.user != "" && !s.authed {
		return fmt.Errorf("authentication required")
	}
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error { s.to = append(s.to, to); return nil }

func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if len(s.to) != 2 {
		return fmt.Errorf("recipients %v, want both", s.to)
	}
	s.b.deliver(string(b))
	return nil
}

func (s *smtpSession) Reset()        { s.to = nil }
func (s *smtpSession) Logout() error { return nil }

// natsRoute is a NATS server (nats-server) on loopback, with a
// subscriber on the recipient's subject.
func natsRoute(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
	srv, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	sub, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	a := &apiReceiver{}
	if _, err := sub.Subscribe("mytopic", func(m *nats.Msg) {
		if m.Header.Get("my-header") != "my-value" {
			a.mu.Lock()
			a.refused = append(a.refused, "headers "+fmt.Sprint(m.Header))
			a.mu.Unlock()
			return
		}
		a.deliver(string(m.Data))
	}); err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	cfg["url"] = srv.ClientURL()
	return "mytopic", a.counts
}

// pubsubRoute is Google's Pub/Sub fake server (pstest, of the Pub/Sub
// client's module) on loopback, reached as the emulator is
// (PUBSUB_EMULATOR_HOST), with the page's topic.
func pubsubRoute(t *testing.T, cfg map[string]any) (string, func() ([]string, []string)) {
	srv := pstest.NewServer()
	t.Cleanup(func() { srv.Close() })
	t.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	topic := fmt.Sprintf("projects/%s/topics/%s", str(cfg, "project"), str(cfg, "topic"))
	if _, err := srv.GServer.CreateTopic(context.Background(), &pubsubpb.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	return "", func() ([]string, []string) {
		var texts []string
		for _, m := range srv.Messages() {
			texts = append(texts, string(m.Data))
		}
		sort.Strings(texts)
		return texts, nil
	}
}

// catalogData is the release's notifications catalog.
func catalogData(t *testing.T) map[string]string {
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(argodocs.ForTest(t).MustReadFile(t, "notifications_catalog/install.yaml"), &cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data
}
