package render

import "testing"

// TestTokenSpan: a mark runs from a violation's line and column to the end
// of the value's token and never further, in YAML and JSON, with columns
// counted in characters and CRLF line endings.
func TestTokenSpan(t *testing.T) {
	tests := []struct {
		name         string
		doc          string
		line, column int
		want         string // the marked text; "" for no mark
	}{
		{"plain in a flow list", "tools: [fs.write, \"fs:*\", shell.run]\n", 1, 9, "fs.write"},
		{"quoted in a flow list", "tools: [fs.write, \"fs:*\", shell.run]\n", 1, 19, `"fs:*"`},
		{"last in a flow list", "tools: [fs.write, \"fs:*\", shell.run]\n", 1, 27, "shell.run"},
		{"plain to the line end", "budget_tokens: 5000000\n", 1, 16, "5000000"},
		{"trailing blanks left out", "budget_tokens: 5000000  \t\n", 1, 16, "5000000"},
		{"before a comment", "budget_tokens: 5000000 # too much\n", 1, 16, "5000000"},
		{"a # inside a word is not a comment", "role: a#b # c\n", 1, 7, "a#b"},
		{"before a closing brace", "{role: x}\n", 1, 8, "x"},
		{"second line", "plan:\n  - role: cleaner\n", 2, 11, "cleaner"},
		{"CRLF: the CR is not the value's", "plan:\r\n  - role: cleaner\r\n", 2, 11, "cleaner"},
		{"CRLF: a quoted value", "a: 1\r\npaths: [\"~\"]\r\n", 2, 9, `"~"`},
		{"multi-byte before the value", "role: \"é—😀\", tools: [x]\n", 1, 22, "x"},
		{"multi-byte value", "paths: [dossier/été, b]\n", 1, 9, "dossier/été"},
		{"a multi-byte quoted value", "{\"role\": \"日本\"}", 1, 10, `"日本"`},
		{"escaped quote in a JSON string", `{"brief": "say \"hi\", then go", "x": 1}`, 1, 11, `"say \"hi\", then go"`},
		{"escaped backslash before the closing quote", `["a\\", "b"]`, 1, 2, `"a\\"`},
		{"escaped unicode", `["\u0022", 1]`, 1, 2, `"\u0022"`},
		{"single quotes doubled", "role: 'it''s, fine' # c\n", 1, 7, "'it''s, fine'"},
		{"a quote not closed on its line runs to the line end", "brief: \"one\n  two\"\n", 1, 8, `"one`},
		{"JSON number", `{"budget_tokens": 5000000, "x": 1}`, 1, 19, "5000000"},
		{"JSON true in an object", `{"allow_write":true}`, 1, 16, "true"},
		{"an object is its brace", `{"plan": [{"role": "a"}]}`, 1, 11, "{"},
		{"a list is its bracket", `{"plan": [1]}`, 1, 10, "["},
		{"block scalar header", "brief: |\n  text\n", 1, 8, "|"},
		{"a comma in a block value is the value's", "brief: a, b # c\n", 1, 8, "a, b"},
		{"a comma in a flow list on its own lines is not", "tools: [\n  fs.write, shell.run]\n", 2, 3, "fs.write"},
		{"a brace in a block value is the value's", "role: a}b\n", 1, 7, "a}b"},
		{"text YAML cannot read: the token", "tools: [a, b\n", 1, 9, "a"},
		{"no line", "a: b\n", 0, 1, ""},
		{"no column", "a: b\n", 1, 0, ""},
		{"line past the end", "a: b\n", 2, 1, ""},
		{"column past the end", "a: b\n", 1, 5, ""},
		{"column past the end of a multi-byte line", "é\n", 1, 2, ""},
		{"column on a separator", "[a, b]\n", 1, 3, ""},
		{"column on a blank", "a: b\n", 1, 3, ""},
		{"column on a comment", "a: b # c\n", 1, 6, ""},
		{"last line without a line break", "a: b", 1, 4, "b"},
		{"empty document", "", 1, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := indexLines([]byte(tt.doc))
			start, end, ok := doc.span(tt.line, tt.column)
			got := ""
			if ok {
				got = string(doc.text(tt.line)[start:end])
			}
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("span(%d, %d) of %q marks %q (ok %v), want %q", tt.line, tt.column, tt.doc, got, ok, tt.want)
			}
		})
	}
}

func TestLineSpan(t *testing.T) {
	doc := indexLines([]byte("---\n  tools: Read, Bash  \r\n\n"))
	for _, tt := range []struct {
		line int
		want string
	}{{1, "---"}, {2, "tools: Read, Bash"}, {3, ""}, {4, ""}, {0, ""}} {
		start, end, ok := doc.lineSpan(tt.line)
		got := ""
		if ok {
			got = string(doc.text(tt.line)[start:end])
		}
		if got != tt.want {
			t.Errorf("lineSpan(%d) = %q, want %q", tt.line, got, tt.want)
		}
	}
	if n := doc.count(); n != 3 {
		t.Errorf("%d lines, want 3", n)
	}
}

func TestAnchor(t *testing.T) {
	for id, want := range map[string]string{"budget.cap": "budgetcap", "tree.depth": "treedepth", "schema": "schema", "agent.definition": "agentdefinition", "a b_c-d": "a-b_c-d", `x"><y`: "xy"} {
		if got := anchor(id); got != want {
			t.Errorf("anchor(%q) = %q, want %q", id, got, want)
		}
	}
}
