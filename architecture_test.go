package spawngate_test

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestFloors holds every package of the module to the floors of
// docs/ARCHITECTURE.md: each package is named by a row of its table, and
// imports only packages of its own floor or of the floors below.
func TestFloors(t *testing.T) {
	doc, err := os.Open("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Close()
	// The table's rows, top floor first: a row with no floor of its own
	// is on the floor above it.
	type row struct {
		floor int
		name  string
		pkgs  []string
	}
	var rows []row
	floors := 0
	name := ""
	tick := regexp.MustCompile("`([^`]+)`")
	inTable := false
	for lines := bufio.NewScanner(doc); lines.Scan(); {
		line := lines.Text()
		if strings.HasPrefix(line, "| floor | package |") {
			inTable = true
			continue
		}
		if !inTable || strings.HasPrefix(line, "| ---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			t.Fatalf("a row of the table has too few cells: %q", line)
		}
		if f := strings.TrimSpace(cells[1]); f != "" {
			floors++
			name = f
		}
		r := row{floor: floors, name: name}
		for _, m := range tick.FindAllStringSubmatch(cells[2], -1) {
			r.pkgs = append(r.pkgs, m[1])
		}
		if strings.Contains(cells[2], "the module root") {
			r.pkgs = append(r.pkgs, ".")
		}
		rows = append(rows, r)
	}
	if floors < 5 {
		t.Fatalf("found %d floors in docs/ARCHITECTURE.md's table", floors)
	}
	const module = "github.com/spawngate/spawngate"
	floorOf := func(path string) (int, string) {
		rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if rel == "" {
			rel = "."
		}
		for _, r := range rows {
			for _, p := range r.pkgs {
				p = strings.TrimSuffix(p, "/")
				if p == rel || strings.HasSuffix(p, "/*") && strings.HasPrefix(rel, strings.TrimSuffix(p, "*")) {
					return r.floor, r.name
				}
			}
		}
		return 0, ""
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		floor, fname := floorOf(pkg)
		if floor == 0 {
			t.Errorf("%s is on no floor of docs/ARCHITECTURE.md: add it to the table", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			if f, iname := floorOf(imp); f != 0 && f < floor {
				t.Errorf("%s (floor %s) imports %s, on the floor above it (%s)", pkg, fname, imp, iname)
			}
		}
	}
}
