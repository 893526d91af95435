package main

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// maxDownloadBytes bounds a downloaded log: the bytes are copied through,
// never held, so the bound is wider than a streamed view's.
const maxDownloadBytes = 64 << 20

// downloadLogs writes a container's log as a text file named
// "<pod>-<container>.log" (with "-previous" for the previous container's),
// as Argo CD's download button gives it. A download never follows; when
// the log was cut at the byte bound, the file's last line says so.
func downloadLogs(w http.ResponseWriter, lr logsRequest, rd io.Reader) {
	name := lr.key.Name + "-" + lr.opts.Container
	if lr.opts.Previous {
		name += "-previous"
	}
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' {
			return '_'
		}
		return r
	}, name) + ".log"
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	w.WriteHeader(http.StatusOK)
	n, err := io.Copy(w, rd)
	switch {
	case err != nil:
		fmt.Fprintf(w, "\n[the log ended early: %v]\n", err)
	case lr.opts.LimitBytes != nil && n >= *lr.opts.LimitBytes:
		fmt.Fprintf(w, "\n[cut at %d bytes]\n", n)
	}
}
