package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"
)

// The browser tests act on the page as it is at the moment of the action.
// chromedp.Click and chromedp.Text query a node, keep its id and use it a
// few round trips later; a live update that re-renders the node in
// between makes them fail with "Could not find node with given id
// (-32000)". clickNow and textNow find the element and act in one step of
// the page's own thread (a page event cannot interleave), and clickNow
// clicks with the mouse where the element is, as a person does: a node
// re-rendered in the same place still takes the click.

// pollNow is chromedp.Poll that outlives a navigation: a poll runs in
// the page, and a page left while it polls (a form's write leads to the
// next page) ends it with "Execution context was destroyed" or "Inspected
// target navigated or closed"; pollNow polls again in the page that
// follows, until the test's context ends.
func pollNow[T any](expression string) chromedp.Action[T] {
	return func(ctx context.Context, t *chromedp.Target) (T, error) {
		for {
			v, err := chromedp.Poll[T](expression)(ctx, t)
			if err == nil || ctx.Err() != nil || !navigatedAway(err) {
				return v, err
			}
		}
	}
}

// navigatedAway tells the errors of an evaluation whose page went away.
func navigatedAway(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "context was destroyed") || strings.Contains(msg, "navigated or closed") ||
		strings.Contains(msg, "Cannot find context")
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// clickNow waits until sel names a visible, enabled element, scrolls it
// into view and clicks the middle of it with the mouse.
func clickNow(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		at, err := pollNow[[]float64](`(() => {
			const e = document.querySelector(`+jsString(sel)+`);
			if (!e || e.disabled) return null;
			e.scrollIntoView({block: "center", inline: "center"});
			const r = e.getBoundingClientRect();
			if (!r.width || !r.height) return null;
			return [r.x + r.width / 2, r.y + r.height / 2];
		})()`)(ctx, t)
		if err != nil {
			return fmt.Errorf("click %s: %w", sel, err)
		}
		_, err = chromedp.MouseClickXY(at[0], at[1])(ctx, t)
		return err
	})
}

// textNow waits until sel names an element and keeps its text (as a
// person reads it: innerText; an SVG element's textContent) in *dst.
func textNow(sel string, dst *string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		v, err := pollNow[struct{ Text string }](`(() => {
			const e = document.querySelector(`+jsString(sel)+`);
			return e ? {Text: e.innerText ?? e.textContent} : null; // SVG text has no innerText
		})()`)(ctx, t)
		if err != nil {
			return fmt.Errorf("text of %s: %w", sel, err)
		}
		*dst = v.Text
		return nil
	})
}

// focusNow waits until sel names an element and focuses it, in one step
// of the page's thread, so a key event that follows goes to it even when
// the page re-rendered or finished loading a moment before.
func focusNow(sel string) chromedp.Action[chromedp.Void] {
	return pollNow[chromedp.Void](`(() => {
		const e = document.querySelector(` + jsString(sel) + `);
		if (!e) return false;
		e.focus();
		return document.activeElement === e;
	})()`)
}

// noteNow waits until the element sel names shows text starting with
// prefix: the page that a write led to, not the one before it that may
// show an older note in the same place.
func noteNow(sel, prefix string) chromedp.Action[chromedp.Void] {
	return pollNow[chromedp.Void](`(() => {
		const e = document.querySelector(` + jsString(sel) + `);
		return !!e && document.readyState === "complete" && e.textContent.startsWith(` + jsString(prefix) + `);
	})()`)
}

// typeNow sets the value of the input sel names and tells the page, as
// typing does (an input event), in one step.
func typeNow(sel, value string) chromedp.Action[chromedp.Void] {
	return pollNow[chromedp.Void](`(() => {
		const e = document.querySelector(` + jsString(sel) + `);
		if (!e) return false;
		e.focus();
		e.value = ` + jsString(value) + `;
		e.dispatchEvent(new Event("input", {bubbles: true}));
		e.dispatchEvent(new Event("change", {bubbles: true}));
		return true;
	})()`)
}
