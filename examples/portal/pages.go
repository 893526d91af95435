package main

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"time"
)

//go:embed web
var webFS embed.FS

// errorsAs is errors.As, named apart for the page handlers.
func errorsAs(err error, target any) bool { return errors.As(err, target) }

// statusIcon gives each status a symbol, shown with its name: status is
// never told by colour alone.
func statusIcon(s string) string {
	switch s {
	case "Synced", "Healthy", "Succeeded":
		return "✔"
	case "OutOfSync":
		return "≠"
	case "Progressing", "Running", "Terminating":
		return "↻"
	case "Degraded", "Failed", "Error":
		return "✖"
	case "Suspended":
		return "‖" // ⏸ is in no common font: an empty box
	case "Missing":
		return "∅"
	}
	return "?"
}

func parsePages() (*template.Template, error) {
	funcs := template.FuncMap{
		"icon":  statusIcon,
		"short": shortRev,
		"when": func(t time.Time) string {
			if t.IsZero() {
				return "never"
			}
			return t.UTC().Format("2006-01-02 15:04:05Z")
		},
		"lower": func(s string) string { return string(bytes.ToLower([]byte(s))) },
	}
	return template.New("").Funcs(funcs).ParseFS(webFS, "web/*.html")
}

// render executes a page into a buffer first, so that a template error is
// a clean 500 and not half a page.
func (s *server) render(w http.ResponseWriter, code int, name string, data any) {
	var b bytes.Buffer
	if err := s.pages.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "page "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

// staticHandler serves web/app.js and web/style.css (not the templates).
func staticHandler() http.Handler {
	sub, _ := fs.Sub(webFS, "web/static")
	return http.StripPrefix("/static/", http.FileServerFS(sub))
}
