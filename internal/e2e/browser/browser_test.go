package browser

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var update = flag.Bool("update", false, "write the screenshots the docs show into docs/img")

const repoRoot = "../../.."

// browserPath finds the browser, or skips the test (fails it under
// SPAWNGATE_BROWSER=require).
func browserPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SPAWNGATE_BROWSER_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SPAWNGATE_BROWSER") == "require" {
		t.Fatal("no browser (chromium) is installed, and SPAWNGATE_BROWSER=require")
	}
	t.Skip("no browser (chromium) is installed; SPAWNGATE_BROWSER=require makes this a failure")
	return ""
}

// newBrowser starts a headless browser of its own, with a new empty
// profile, that calls no host of its maker's (no sync, no component
// updates, no background networking, no QUIC), and opens a tab. The
// returned context ends with the test, or after limit.
func newBrowser(t *testing.T, limit time.Duration, more ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path := browserPath(t)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}, more...)...)
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	// The browser's life is the tab context's; each test's steps are
	// bounded by limit.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	tctx, tcancel := context.WithTimeout(ctx, limit)
	t.Cleanup(tcancel)
	return tctx
}

// artifacts is the folder screenshots go to.
func artifacts(t *testing.T) string {
	if d := os.Getenv("SPAWNGATE_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// screenshot keeps a screenshot of the whole page as an artifact, and
// with -update as the docs' image docs/img/name.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	// Headless chromium leaves a frame it runs in a process of its own
	// (the playground's sandboxed report) out of the page's screenshot
	// until the page is laid out anew, whatever the frame holds (the
	// tests read it): setting the viewport does that.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 1000)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(artifacts(t), name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if *update {
		dir := filepath.Join(repoRoot, "docs", "img")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
