package report_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The model depends on no renderer, and the packages that fill it (the
// engine, the pipeline) link none: a renderer, go-sarif with it, is the
// front ends' to link.
func TestTheEngineLinksNoRenderer(t *testing.T) {
	for _, pkg := range []string{"../report", "../engine", "../judge"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.Contains(dep, "sarif") || strings.HasSuffix(dep, "/internal/report/render") {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}
