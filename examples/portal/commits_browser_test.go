package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/internal/gitserver"
)

// TestBrowserCommitMetadata shows the author and message of the compared
// revision in the page header and of each history entry: a new commit
// seen by a hard refresh is pushed to the open page (subject shown, whole
// message as its title), and a sync of it adds a history row with its
// message while the first row keeps the first commit's.
func TestBrowserCommitMetadata(t *testing.T) {
	f := newFixture(t)
	f.syncAndWait("guestbook", tokAdmin)
	ctx, run0 := newBrowser(t, 5*time.Minute)
	loginAs(run0, f.http.URL, tokAdmin)
	run := within(t, ctx, time.Minute)
	gopts := gitserver.DefaultOptions() // the fixture's
	author := gopts.AuthorName + " <" + gopts.AuthorEmail + ">"
	var subject, who string
	run("first commit", chromedp.Navigate(f.http.URL+"/apps/guestbook"),
		chromedp.WaitVisible(chromedp.CSS(`#commit .commit-subject`)),
		textNow(`#commit .commit-subject`, &subject),
		textNow(`#commit .commit-author`, &who))
	if subject != "initial commit" || who != author {
		t.Errorf("header commit %q by %q, want %q by %q", subject, who, "initial commit", author)
	}

	message := "v2: a new greeting\n\nThe body explains why."
	changes := map[string][]byte{}
	for p, b := range guestbookFiles("hello v2") {
		changes[p] = b
	}
	kctx, kcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer kcancel()
	second, err := f.git.Commit(kctx, "apps", message, changes)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, raw := f.call("POST", "/api/v1/apps/guestbook/refresh", tokAdmin, f.csrfOf(tokAdmin), map[string]any{"hard": true}); code != 202 {
		t.Fatalf("hard refresh: %d %s", code, raw)
	}
	f.waitStatus("guestbook", func(st appstatus.Status) bool { return st.Revision == second })
	var title string
	run("pushed commit", chromedp.WaitVisible(chromedp.CSS(`#revision[title="`+second+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#commit .commit-subject[title^="v2: a new greeting"]`)),
		textNow(`#commit .commit-subject`, &subject),
		into(&title, chromedp.Evaluate[string](`document.querySelector("#commit .commit-subject").title`)))
	if subject != "v2: a new greeting" || title != message+"\n" && title != message {
		t.Errorf("pushed header commit %q (title %q), want the subject and the whole message %q", subject, title, message)
	}

	f.syncAndWait("guestbook", tokAdmin)
	id := f.lastHistoryID("guestbook")
	row := func(id int64) string { return fmt.Sprintf(`#history tr[data-id="%d"] td.commit`, id) }
	var newest, oldest string
	run("history", chromedp.WaitVisible(chromedp.CSS(row(id)+` .commit-subject`)),
		textNow(row(id), &newest), textNow(row(1), &oldest))
	if id < 2 || !contains(newest, "v2: a new greeting") || !contains(newest, author) || !contains(oldest, "initial commit") {
		t.Errorf("history #%d commit %q, #1 %q: want v2's and the initial commit's, by %s", id, newest, oldest, author)
	}
	var reloaded string
	run("history rendered by the server", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(row(id)+` .commit-subject`)),
		textNow(row(id), &reloaded))
	if reloaded != newest {
		t.Errorf("the server renders history #%d's commit as %q, the pushed page as %q", id, reloaded, newest)
	}
}
