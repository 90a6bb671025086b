package document_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tenBytes := write("ten.yaml", "a: 123456\n")
	empty := write("empty.json", "")
	missing := filepath.Join(dir, "missing.yaml")
	inMissingDir := filepath.Join(dir, "nope", "plan.yaml")

	tests := []struct {
		name string
		path string
		max  int64
		want string
		err  string
	}{
		{name: "normal read", path: tenBytes, max: 100, want: "a: 123456\n"},
		{name: "exactly the limit", path: tenBytes, max: 10, want: "a: 123456\n"},
		{name: "one byte over the limit", path: tenBytes, max: 9, err: tenBytes + ": document is larger than 9 bytes (limit max-bytes)"},
		{name: "largest limit", path: tenBytes, max: math.MaxInt64, want: "a: 123456\n"},
		{name: "empty file", path: empty, max: 10, want: ""},
		{name: "missing file", path: missing, max: 10, err: missing + ": cannot read: no such file or directory"},
		{name: "missing directory", path: inMissingDir, max: 10, err: inMissingDir + ": cannot read: no such file or directory"},
		{name: "directory", path: dir, max: 10, err: dir + ": is a directory, not a document"},
		{name: "file as a directory", path: filepath.Join(tenBytes, "x"), max: 10, err: filepath.Join(tenBytes, "x") + ": cannot read: not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := document.ReadFile(tt.path, tt.max)
			checkRead(t, got, err, tt.want, tt.err)
		})
	}
}

func TestReadFileUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	path := filepath.Join(t.TempDir(), "secret.yaml")
	if err := os.WriteFile(path, []byte("a: 1\n"), 0o000); err != nil {
		t.Fatal(err)
	}
	got, err := document.ReadFile(path, 100)
	checkRead(t, got, err, "", path+": cannot read: permission denied")
}

// countingReader is an endless document that counts the bytes read from it.
type countingReader struct{ n int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	r.n += int64(len(p))
	return len(p), nil
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestRead(t *testing.T) {
	tests := []struct {
		name string
		r    io.Reader
		max  int64
		want string
		err  string
	}{
		{name: "normal read", r: strings.NewReader("plan: []\n"), max: 100, want: "plan: []\n"},
		{name: "exactly the limit", r: strings.NewReader("12345"), max: 5, want: "12345"},
		{name: "over the limit", r: strings.NewReader("123456"), max: 5, err: "<stdin>: document is larger than 5 bytes (limit max-bytes)"},
		{name: "zero limit", r: strings.NewReader("1"), max: 0, err: "<stdin>: document is larger than 0 bytes (limit max-bytes)"},
		{name: "zero limit and nothing to read", r: strings.NewReader(""), max: 0, want: ""},
		{name: "largest limit", r: strings.NewReader("plan: []\n"), max: math.MaxInt64, want: "plan: []\n"},
		{name: "read error", r: failingReader{errors.New("connection reset")}, max: 10, err: "<stdin>: cannot read: connection reset"},
		{name: "read error with a path", r: failingReader{&fs.PathError{Op: "read", Path: "/dev/stdin", Err: errors.New("input/output error")}}, max: 10,
			err: "<stdin>: cannot read: input/output error"},
		{name: "error after some bytes", r: io.MultiReader(strings.NewReader("a: 1"), failingReader{errors.New("boom")}), max: 10,
			err: "<stdin>: cannot read: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := document.Read(tt.r, document.Stdin, tt.max)
			checkRead(t, got, err, tt.want, tt.err)
		})
	}
}

// TestReadStopsAtTheLimit checks that an endless input is not read much past
// the limit: one byte more tells that it is over.
func TestReadStopsAtTheLimit(t *testing.T) {
	for _, max := range []int64{0, 1, 100, 1 << 20} {
		r := &countingReader{}
		_, err := document.Read(r, "endless", max)
		if err == nil || !strings.Contains(err.Error(), "document is larger than") {
			t.Errorf("Read(endless, %d) error = %v, want a size error", max, err)
		}
		if r.n != max+1 {
			t.Errorf("Read(endless, %d) read %d bytes, want %d", max, r.n, max+1)
		}
	}
}

func checkRead(t *testing.T, got []byte, err error, want, wantErr string) {
	t.Helper()
	if wantErr != "" {
		var pe *document.Error
		if !errors.As(err, &pe) || err.Error() != wantErr {
			t.Fatalf("error\n got %v (%T)\nwant %s", err, err, wantErr)
		}
		if got != nil {
			t.Errorf("got %q with an error, want nil", got)
		}
		return
	}
	if err != nil {
		t.Fatalf("error: %v", err)
	}
	if !bytes.Equal(got, []byte(want)) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A document of exactly max bytes is read; one byte more is over the
// limit, and the error names the limit.
func TestCheckSize(t *testing.T) {
	for _, tc := range []struct {
		size, max int64
		err       string
	}{
		{size: 10, max: 10},
		{size: 0, max: 0},
		{size: 11, max: 10, err: "doc: document is larger than 10 bytes (limit max-bytes)"},
		{size: 1, max: 0, err: "doc: document is larger than 0 bytes (limit max-bytes)"},
	} {
		err := document.CheckSize("doc", tc.size, tc.max)
		if got := fmt.Sprint(err); (err == nil) != (tc.err == "") || (err != nil && got != tc.err) {
			t.Errorf("CheckSize(%d, %d) = %v, want %q", tc.size, tc.max, err, tc.err)
		}
	}
}
