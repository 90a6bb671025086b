package browser

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/spawngate/spawngate/internal/cli"
)

// examplePlans lists every example plan with the command line check
// judges it by, as the examples' own comments and docs run it.
func examplePlans(t *testing.T) map[string][]string {
	t.Helper()
	plans := map[string][]string{}
	for _, dir := range []string{"", "trees", "exceptions", "profiles", "briefs"} {
		names, err := os.ReadDir(filepath.Join(repoRoot, "examples", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			name := n.Name()
			if n.IsDir() || strings.Contains(name, "policy") || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".json")) {
				continue
			}
			rel := filepath.Join("examples", dir, name)
			policy := filepath.Join("examples", dir, "policy.yaml")
			args := []string{"--policy", policy}
			switch name {
			case "one-file-plan.yaml":
				args = []string{"--policy-in-plan"}
			case "release-plan.yaml":
				args = []string{"--policy", filepath.Join("examples", "release-policy.yaml")}
			case "deploy-plan.yaml":
				args = append(args, "--checks", filepath.Join("examples", "checks"))
			}
			plans[rel] = append(args, rel)
		}
	}
	if len(plans) < 15 {
		t.Fatalf("%d example plans: is examples/ read from the wrong folder?", len(plans))
	}
	return plans
}

// report is check's HTML report of one example plan, run in process from
// the repository's root, as a person would run it.
func report(t *testing.T, args []string) []byte {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(repoRoot); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), append(append([]string{"check", "--format", "html"}, args[:len(args)-1]...), args[len(args)-1]), nil, &stdout, &stderr)
	if code == 2 && !bytes.Contains(stdout.Bytes(), []byte("<html")) {
		t.Fatalf("check %v: exit 2 and no report: %s", args, stderr.String())
	}
	return stdout.Bytes()
}

// TestReportsRequestNothing: the HTML report of every example plan, as
// check writes it to a file and a person opens it, makes not one request
// but for the page itself, as the browser's own network events count
// them.
func TestReportsRequestNothing(t *testing.T) {
	ctx := newBrowser(t, 2*time.Minute)
	dir := t.TempDir()
	var pages []string
	for rel, args := range examplePlans(t) {
		name := filepath.Join(dir, strings.ReplaceAll(rel, string(filepath.Separator), "_")+".html")
		if err := os.WriteFile(name, report(t, args), 0o644); err != nil {
			t.Fatal(err)
		}
		pages = append(pages, name)
	}
	slices.Sort(pages)
	// A page that does request something, first: the count must see it,
	// or it would see nothing in the reports either.
	control := filepath.Join(dir, "control.html")
	os.WriteFile(control, []byte(`<!doctype html><title>spawngate control</title><link rel="icon" href="data:,"><body><img src="elsewhere.png" alt="">`), 0o644)
	pages = append([]string{control}, pages...)
	end := filepath.Join(dir, "end.html")
	os.WriteFile(end, []byte("<!doctype html><title>end</title>"), 0o644)
	// Each page from a file and from a server on 127.0.0.1, where a
	// browser would also ask for /favicon.ico unless the page names an
	// icon of its own.
	// The server counts what it is asked for too: the browser fetches an
	// icon outside the page's own network events.
	var mu sync.Mutex
	served := map[string]int{}
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served[r.URL.Path]++
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	type load struct{ name, url string }
	var loads []load
	for _, name := range pages {
		loads = append(loads, load{name, "file://" + name}, load{name, srv.URL + "/" + filepath.Base(name)})
	}
	for _, l := range loads {
		name, url := l.name, l.url
		requests := chromedp.Events(ctx, network.RequestWillBeSent)
		if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("body"))); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		title, err := chromedp.Run(ctx, chromedp.Title())
		if err != nil || !strings.HasPrefix(title, "spawngate") {
			t.Errorf("%s: title %q (%v)", filepath.Base(name), title, err)
		}
		if strings.HasSuffix(name, "examples_refused-plan.yaml.html") && strings.HasPrefix(url, "file:") {
			screenshot(t, ctx, "report.png")
		}
		// A page of its own after the report: every request the report
		// made came before it, in the order the browser sent them.
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+end)); err != nil {
			t.Fatal(err)
		}
		var others []string
		for ev, err := range requests {
			if err != nil {
				t.Fatalf("%s: waiting for the browser's network events: %v", filepath.Base(name), err)
			}
			if ev.Request.URL == "file://"+end {
				break
			}
			if ev.Request.URL != url {
				others = append(others, ev.Request.URL)
			}
		}
		if name == control {
			if len(others) == 0 {
				t.Fatalf("%s: the control page's image request was not seen: the count is blind", url)
			}
			continue
		}
		if len(others) > 0 {
			t.Errorf("%s requested %d more: %v", url, len(others), others)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for path, n := range served {
		if path == "/elsewhere.png" {
			continue // the control page's
		}
		if !slices.ContainsFunc(pages, func(p string) bool { return "/"+filepath.Base(p) == path }) {
			t.Errorf("the server was asked for %s (%d times), which no page names", path, n)
		}
	}
	t.Logf("%d reports, from a file and from a server, not one request but each page's own", len(pages)-1)
}
