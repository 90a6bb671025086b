package document

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
)

// Stdin is the source name of a document read from standard input.
const Stdin = "<stdin>"

// ReadFile reads the document at path. A missing, unreadable or directory
// path, and a document over max bytes, is an *Error.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Source: path, Msg: "cannot read: " + Reason(err)}
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, &Error{Source: path, Msg: "cannot read: " + Reason(err)}
	}
	if info.IsDir() {
		return nil, &Error{Source: path, Msg: "is a directory, not a document"}
	}
	if info.Mode().IsRegular() {
		if err := CheckSize(path, info.Size(), max); err != nil {
			return nil, err
		}
		return readSized(f, path, max, int(info.Size()))
	}
	return Read(f, path, max)
}

// Read reads a whole document from r, refusing more than max bytes without
// reading much past the limit.
func Read(r io.Reader, source string, max int64) ([]byte, error) {
	expect := 512
	switch r := r.(type) {
	case interface{ Len() int }: // a bytes.Reader, a strings.Reader
		expect = r.Len()
	case *os.File: // standard input redirected from a file
		if info, err := r.Stat(); err == nil && info.Mode().IsRegular() {
			expect = int(min(info.Size(), max))
		}
	}
	return readSized(r, source, max, expect)
}

// readSized reads like Read into a buffer of the expected size, so a large
// file is read without copying it as the buffer grows. It reads at most one
// byte past the limit.
func readSized(r io.Reader, source string, max int64, expect int) ([]byte, error) {
	limit := max
	if limit < math.MaxInt64 {
		limit++ // one byte past the limit tells a document over it
	}
	buf := make([]byte, 0, min(int64(expect)+1, limit, math.MaxInt32))
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // room to grow
		}
		room := buf[len(buf):cap(buf)]
		if over := limit - int64(len(buf)); int64(len(room)) > over {
			room = room[:over]
		}
		n, err := r.Read(room)
		buf = buf[:len(buf)+n]
		if err := CheckSize(source, int64(len(buf)), max); err != nil {
			return nil, err
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, &Error{Source: source, Msg: "cannot read: " + Reason(err)}
		}
	}
}

// CheckSize refuses a document of size bytes when that is over max, the
// max-bytes limit: whoever reads a document, or is handed one in memory,
// asks it before anything else is done with the bytes.
func CheckSize(source string, size, max int64) error {
	if size > max {
		return &Error{Source: source, Msg: fmt.Sprintf("document is larger than %d bytes", max), Limit: "max-bytes"}
	}
	return nil
}

// Reason is the part of an I/O error worth showing when the message names
// the path already: "no such file or directory".
func Reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
