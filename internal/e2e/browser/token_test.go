package browser

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/playground"
	"github.com/spawngate/spawngate/internal/server"
)

// TestPlaygroundAsksForItsToken: where the playground requires a token,
// the page's first judgement is refused (401), the page asks for the
// token, and with it judges.
func TestPlaygroundAsksForItsToken(t *testing.T) {
	ctx := newBrowser(t, time.Minute)
	ts := httptest.NewUnstartedServer(nil)
	p, err := playground.New(playground.Config{
		Server: server.Config{Gate: judge.DefaultOptions(), MaxConcurrent: 1, MaxListed: 100, Token: []byte("s3cret")},
		Hosts:  playground.Hosts(ts.Listener.Addr().String()),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = p.Handler()
	ts.Start()
	defer ts.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.ID("plan"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.body.dataset.ready === "true"`)
	judgeTyped(t, ctx, refusedPlan, jsonPolicy)
	verdict, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("verdict")))
	if !strings.Contains(verdict, "401") {
		t.Fatalf("without a token the verdict says %q, want the 401", verdict)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("token"))); err != nil {
		t.Fatal(err)
	}
	focused, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id`))
	if focused != "token" {
		t.Errorf("the focus is on %q, not on the token's field", focused)
	}
	field := labelled(t, ctx, "Bearer token")
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID(field), "s3cret"), chromedp.Blur(chromedp.ID(field))); err != nil {
		t.Fatal(err)
	}
	judged(t, ctx, chromedp.Click(chromedp.ID("judge")))
	verdict, _ = chromedp.Run(ctx, chromedp.Text(chromedp.ID("verdict")))
	if !strings.Contains(verdict, "BLOCK") {
		t.Errorf("with the token the verdict says %q", verdict)
	}
	kept, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`sessionStorage.getItem("spawngate-playground-token") || ""`))
	if kept != "s3cret" {
		t.Errorf("the tab's session keeps %q", kept)
	}
}

// TestPlaygroundReadsADroppedFile: a file dropped on a field is read by
// the page into that field.
func TestPlaygroundReadsADroppedFile(t *testing.T) {
	ctx := newBrowser(t, time.Minute)
	startPlayground(t, ctx)
	file := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(file, []byte(refusedPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const r = document.getElementById("plan").getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`))
	if err != nil {
		t.Fatal(err)
	}
	data := &input.DragData{Items: []*input.DragDataItem{}, Files: []string{file}, DragOperationsMask: 1}
	drop := func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
			if _, err := chromedp.Call(ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: box[0], Y: box[1], Data: data}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := chromedp.Do(ctx, chromedp.Func(drop)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.getElementById("plan").value !== ""`)
	if got, _ := chromedp.Run(ctx, chromedp.Value(chromedp.ID("plan"))); got != refusedPlan {
		t.Errorf("the plan's field holds %q", got)
	}
}
