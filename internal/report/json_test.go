package report

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// encodingJSON is what the renderer must equal, byte for byte.
func encodingJSON(t *testing.T, r *Report) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func render(t *testing.T, r *Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := (JSON{}).Render(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestJSONEqualsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "é", "\"", "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1b", "\x7f", "<", ">", "&", "\u2028", "\u2029", "\u202e", "\xff", "\xe2\x80", "😀", " ", "/"}
	str := func() string {
		var s strings.Builder
		for n := rng.IntN(6); n > 0; n-- {
			s.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return s.String()
	}
	for i := 0; i < 3000; i++ {
		r := &Report{Verdict: Verdict(str()), Error: str()}
		if rng.IntN(3) > 0 {
			r.Results = []Result{}
		}
		for n := rng.IntN(3); n > 0; n-- {
			res := Result{Source: str(), Verdict: Verdict(str()), Error: str()}
			switch rng.IntN(3) {
			case 0:
				res.Policies = []string{str(), str()}
			case 1:
				res.Policies = []string{}
			}
			if rng.IntN(4) > 0 {
				res.Children = []Child{}
			}
			for m := rng.IntN(3); m > 0; m-- {
				c := Child{Index: rng.IntN(1000), Role: str(), Verdict: Verdict(str()), Unlisted: rng.IntN(3)}
				if rng.IntN(4) > 0 {
					c.Violations = []Violation{}
				}
				for k := rng.IntN(3); k > 0; k-- {
					c.Violations = append(c.Violations, Violation{Rule: str(), Severity: str(), Message: str(), Path: str(), Line: rng.IntN(3)})
				}
				res.Children = append(res.Children, c)
			}
			r.Results = append(r.Results, res)
		}
		if got, want := render(t, r), encodingJSON(t, r); !bytes.Equal(got, want) {
			t.Fatalf("report %d differs\n got %q\nwant %q", i, got, want)
		}
	}
}
