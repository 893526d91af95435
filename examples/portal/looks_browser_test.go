package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// longAuthorEmail signs the commits of TestLooksBrowser: a full e-mail
// address with no place a line may break (no hyphen, no space).
const longAuthorEmail = "releaseautomationbotforguestbookproductiondeployments@platformengineeringinternal.example.com"

// tofuGlyphs is a page expression: the characters of the elements sel
// names that the page's fonts cannot draw (drawn as the empty box of a
// missing glyph: the same pixels as an unassigned code point).
func tofuGlyphs(sel string) string {
	return `(() => {
		const c = document.createElement("canvas");
		c.width = c.height = 48;
		const x = c.getContext("2d");
		const pix = (ch, font) => { x.clearRect(0, 0, 48, 48); x.font = font; x.fillText(ch, 4, 36);
			return Array.from(x.getImageData(0, 0, 48, 48).data).join(","); };
		const bad = [];
		for (const e of document.querySelectorAll(` + jsString(sel) + `)) {
			const ch = e.textContent.trim();
			const font = "28px " + getComputedStyle(e).fontFamily;
			if (ch && pix(ch, font) === pix("\u{10FFFD}", font)) bad.push(ch);
		}
		return bad;
	})()`
}

// TestLooksBrowser checks the looks the issue names, in headless Chromium
// with the machine's fonts: the sync and health tiles of the same status
// read differently; every status symbol of the tiles and the graph is a
// glyph the fonts draw (the Suspended tile's was an empty box); the graph
// shows a Pod's whole name inside its box; and a commit author's full
// e-mail does not widen the history table past its section at 800 px.
func TestLooksBrowser(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{GitAuthorEmail: longAuthorEmail})
	f.syncAndWait("guestbook", tokAdmin)
	pod := strings.TrimPrefix(f.guestbookPod(), "Pod "+f.ns+"/")
	ctx, run0 := newBrowser(t, 5*time.Minute)
	loginAs(run0, f.http.URL, tokAdmin)
	run := within(t, ctx, time.Minute)

	var unknown, tofu []string
	run("tiles", into(&unknown, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('a.tile[data-status="Unknown"]')).map(a => a.innerText.trim())`)),
		into(&tofu, chromedp.Evaluate[[]string](tofuGlyphs(".tile .badge > [aria-hidden]"))))
	if len(unknown) != 2 || unknown[0] == unknown[1] {
		t.Errorf("the Unknown tiles read %q, want two that differ (sync and health)", unknown)
	}
	if len(tofu) != 0 {
		t.Errorf("the tiles' symbols %q are drawn as empty boxes", tofu)
	}

	var label []float64
	var name string
	podNode := `#graph g.gnode[data-key^="Pod "]`
	run("graph", chromedp.Navigate(f.http.URL+"/apps/guestbook"), clickNow(`[data-view="graph"]`),
		chromedp.WaitVisible(chromedp.CSS(podNode)), textNow(podNode+" text.gname", &name),
		into(&label, chromedp.Evaluate[[]float64](`(() => { const g = document.querySelector(`+jsString(podNode)+`);
			const t = g.querySelector("text.gname");
			return [t.x.baseVal[0].value + t.getComputedTextLength(), g.querySelector("rect.gbox").width.baseVal.value]; })()`)),
		into(&tofu, chromedp.Evaluate[[]string](tofuGlyphs("#graph text.ghealth, #graph text.gsync"))))
	if name != pod || label[0] > label[1] {
		t.Errorf("the graph names the Pod %q (ending at x %.0f in a box %.0f wide), want %q inside its box", name, label[0], label[1], pod)
	}
	if len(tofu) != 0 {
		t.Errorf("the graph's symbols %q are drawn as empty boxes", tofu)
	}

	var widths []float64
	run("history at 800 px", chromedp.EmulateViewport(800, 800), clickNow(`[data-view="list"]`),
		chromedp.WaitVisible(chromedp.CSS(`#history tr[data-id="1"] .commit-author`)),
		into(&widths, chromedp.Evaluate[[]float64](`(() => { const t = document.querySelector("#history");
			return [t.getBoundingClientRect().width, t.parentElement.getBoundingClientRect().width]; })()`)))
	if widths[0] > widths[1]+0.5 {
		t.Errorf("the history table is %.0f px wide in a section of %.0f px: the author's e-mail widens it", widths[0], widths[1])
	}
	var title string
	run("author's title", into(&title, chromedp.Evaluate[string](`document.querySelector('#history tr[data-id="1"] .commit-author').title`)))
	if !strings.Contains(title, longAuthorEmail) {
		t.Errorf("the author's title %q, want the whole e-mail %s", title, longAuthorEmail)
	}
}
